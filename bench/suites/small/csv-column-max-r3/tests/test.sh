#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < top.txt 2>/dev/null)" = "900" ] || { echo "top.txt: $(head -c 200 top.txt 2>&1)"; exit 1; }
