#!/usr/bin/env bash
set -eu
sed -i -E 's/\barea_sq\b/square_area/g' shapes.py
