#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < max.txt 2>/dev/null)" = "923" ] || { echo "max.txt: $(head -c 200 max.txt 2>&1)"; exit 1; }
