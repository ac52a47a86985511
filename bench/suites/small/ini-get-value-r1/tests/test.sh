#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < port.txt 2>/dev/null)" = "8437" ] || { echo "port.txt: $(head -c 200 port.txt 2>&1)"; exit 1; }
