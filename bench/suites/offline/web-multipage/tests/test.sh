#!/usr/bin/env bash
set -u
[ -f books.txt ] || { echo "no books.txt"; exit 1; }
diff <(sed 's/[[:space:]]*$//' books.txt | grep -v '^$') "$TESTS_DIR/expected.txt"
