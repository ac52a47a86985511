#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < shipped.txt 2>/dev/null)" = "11" ] || { echo "shipped.txt: $(head -c 200 shipped.txt 2>&1)"; exit 1; }
