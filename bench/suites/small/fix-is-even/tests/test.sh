#!/usr/bin/env bash
set -u
sha256sum -c "$TESTS_DIR/test_utils.sha256" --quiet || { echo "test_utils.py was changed"; exit 1; }
python3 test_utils.py && python3 -c "from utils import is_even; assert [is_even(n) for n in (0, 7, 10, -3)] == [True, False, True, False]"
