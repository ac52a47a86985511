#!/usr/bin/env bash
set -u
[ "$(cat greeting.txt 2>/dev/null | tr -d '\r')" = "Hello from ga" ] || { echo "greeting.txt is: $(head -c 200 greeting.txt 2>&1)"; exit 1; }
