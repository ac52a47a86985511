#!/usr/bin/env bash
set -u
sha256sum -c "$TESTS_DIR/test_slicer.sha256" --quiet || { echo "test_slicer.py was changed"; exit 1; }
python3 test_slicer.py && python3 -c "from slicer import first_n; assert first_n('abcdef', 4) == 'abcd' and first_n([1], 0) == []"
