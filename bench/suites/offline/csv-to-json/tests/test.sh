#!/usr/bin/env bash
set -u
python3 "$TESTS_DIR/check.py"
