#!/usr/bin/env bash
set -u
[ -f total.txt ] || { echo "no total.txt"; exit 1; }
got=$(tr -d ' \n\r\t$' < total.txt)
[ "$got" = "$(tr -d '\n' < "$TESTS_DIR/expected.txt")" ] || { echo "wrong total: $got"; exit 1; }
