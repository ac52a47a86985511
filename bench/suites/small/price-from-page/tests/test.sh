#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < price.txt 2>/dev/null)" = "18.75" ] || { echo "price.txt: $(head -c 100 price.txt 2>&1)"; exit 1; }
