#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < timeouts.txt 2>/dev/null)" = "6" ] || { echo "timeouts.txt: $(head -c 200 timeouts.txt 2>&1)"; exit 1; }
