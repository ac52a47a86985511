#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < version.txt 2>/dev/null)" = "2.4.1" ] || { echo "version.txt: $(head -c 200 version.txt 2>&1)"; exit 1; }
