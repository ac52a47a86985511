#!/usr/bin/env bash
set -eu
sed -i -E 's/\bavg\b/mean_value/g' stats.py
