#!/usr/bin/env bash
set -eu
sed -i -E 's/\bcalc\b/compute_total/g' report.py
