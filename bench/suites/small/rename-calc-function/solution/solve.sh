#!/usr/bin/env bash
set -eu
sed -i 's/\bcalc(/compute_total(/g' report.py
