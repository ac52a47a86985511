#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < ttl.txt 2>/dev/null)" = "900" ] || { echo "ttl.txt: $(head -c 200 ttl.txt 2>&1)"; exit 1; }
