#!/usr/bin/env bash
set -u
[ "$(cat version.txt 2>/dev/null | tr -d '\r' | sed -e 's/[[:space:]]*$//')" = "shipyard 4.12.0 (build 9031)" ] || { echo "version.txt: $(head -c 200 version.txt 2>&1)"; exit 1; }
