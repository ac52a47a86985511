#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < fr.txt 2>/dev/null)" = "10" ] || { echo "fr.txt: $(head -c 200 fr.txt 2>&1)"; exit 1; }
