#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < result.txt 2>/dev/null)" = "2467.11" ] || { echo "result.txt: $(head -c 200 result.txt 2>&1)"; exit 1; }
