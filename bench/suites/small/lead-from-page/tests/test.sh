#!/usr/bin/env bash
set -u
[ "$(cat lead.txt 2>/dev/null | tr -d '\r' | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')" = "Ines Moreau" ] || { echo "lead.txt: $(head -c 100 lead.txt 2>&1)"; exit 1; }
