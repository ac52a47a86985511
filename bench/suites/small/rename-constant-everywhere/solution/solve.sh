#!/usr/bin/env bash
set -eu
sed -i 's/MAX_ITEMS/ITEM_LIMIT/g' src/*.py
