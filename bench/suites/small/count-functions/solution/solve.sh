#!/usr/bin/env bash
set -eu
grep -c '^def ' geometry.py > answer.txt
