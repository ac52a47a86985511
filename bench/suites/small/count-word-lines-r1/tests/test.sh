#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < errors.txt 2>/dev/null)" = "9" ] || { echo "errors.txt: $(head -c 200 errors.txt 2>&1)"; exit 1; }
