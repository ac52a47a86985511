#!/usr/bin/env bash
set -u
[ "$(tr -d ' \n\r' < author.txt 2>/dev/null)" = "AdaByron" ] || { echo "author.txt: $(head -c 200 author.txt 2>&1)"; exit 1; }
