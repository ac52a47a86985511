#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < best.txt 2>/dev/null)" = "921" ] || { echo "best.txt: $(head -c 200 best.txt 2>&1)"; exit 1; }
