#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < name.txt 2>/dev/null)" = "left-pad-pro" ] || { echo "name.txt: $(head -c 200 name.txt 2>&1)"; exit 1; }
