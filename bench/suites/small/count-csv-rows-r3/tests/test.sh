#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < high.txt 2>/dev/null)" = "8" ] || { echo "high.txt: $(head -c 200 high.txt 2>&1)"; exit 1; }
