#!/usr/bin/env bash
set -eu
sed -i 's/return n % 2 == 1/return n % 2 == 0/' utils.py
