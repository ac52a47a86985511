#!/usr/bin/env bash
set -u
sha256sum -c "$TESTS_DIR/listing_tests.sha256" --quiet || { echo "the tests were changed"; exit 1; }
python3 -m unittest discover -q -s tests -t . || exit 1
PYTHONPATH=. python3 "$TESTS_DIR/test_hidden.py"
