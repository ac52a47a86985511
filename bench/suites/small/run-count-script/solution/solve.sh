#!/usr/bin/env bash
set -eu
python3 count.py > result.txt
