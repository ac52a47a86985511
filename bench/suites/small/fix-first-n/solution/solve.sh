#!/usr/bin/env bash
set -eu
sed -i 's/return items\[:n - 1\]/return items[:n]/' slicer.py
