#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < sum.txt 2>/dev/null)" = "2273.06" ] || { echo "sum.txt: $(head -c 200 sum.txt 2>&1)"; exit 1; }
