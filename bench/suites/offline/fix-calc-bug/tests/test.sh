#!/usr/bin/env bash
# The workspace's own tests must pass, unchanged, and so must the hidden ones.
set -u
sha256sum -c "$TESTS_DIR/test_stats.sha256" --quiet || { echo "test_stats.py was changed"; exit 1; }
python3 -m unittest -q test_stats || exit 1
PYTHONPATH=. python3 "$TESTS_DIR/test_hidden.py"
