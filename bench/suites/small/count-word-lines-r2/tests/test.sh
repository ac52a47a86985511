#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < warnings.txt 2>/dev/null)" = "10" ] || { echo "warnings.txt: $(head -c 200 warnings.txt 2>&1)"; exit 1; }
