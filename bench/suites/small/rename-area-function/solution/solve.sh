#!/usr/bin/env bash
set -eu
sed -i 's/area_sq/square_area/g' shapes.py
