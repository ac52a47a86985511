#!/usr/bin/env bash
set -eu
python3 check.py > /dev/null || echo $? > exit_code.txt
