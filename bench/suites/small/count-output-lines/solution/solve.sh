#!/usr/bin/env bash
set -eu
python3 ticks.py | wc -l | tr -d ' ' > lines.txt
