#!/usr/bin/env bash
set -u
[ -f answer.txt ] || { echo "no answer.txt"; exit 1; }
grep -Eiq '^\s*request:\s*req-7f3a\s*$' answer.txt || { echo "wrong request"; cat answer.txt; exit 1; }
grep -Eiq '^\s*cause:.*max_connections' answer.txt || { echo "wrong cause"; cat answer.txt; exit 1; }
