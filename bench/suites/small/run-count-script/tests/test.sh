#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < result.txt 2>/dev/null)" = "1860" ] || { echo "result.txt: $(head -c 100 result.txt 2>&1)"; exit 1; }
