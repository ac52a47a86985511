#!/usr/bin/env bash
set -eu
python3 stats.py values.txt > report.txt
