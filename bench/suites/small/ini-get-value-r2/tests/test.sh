#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < host.txt 2>/dev/null)" = "db-7.internal" ] || { echo "host.txt: $(head -c 200 host.txt 2>&1)"; exit 1; }
