#!/usr/bin/env bash
set -eu
sed -i 's|sum(values) / (len(values) + 1)|sum(values) / len(values)|' stats.py
python3 -m unittest -q
