#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < total.txt 2>/dev/null)" = "2348.25" ] || { echo "total.txt: $(head -c 200 total.txt 2>&1)"; exit 1; }
