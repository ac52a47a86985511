#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < total.txt 2>/dev/null)" = "1234.56" ] || { echo "total.txt: $(head -c 100 total.txt 2>&1)"; exit 1; }
