#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import sys
got = open("ordered.txt").read().strip().splitlines()
if open("words.txt").read().split() != ['pear', 'apple', 'fig', 'kiwi', 'banana', 'cherry', 'date']:
    sys.exit("words.txt was changed")
sys.exit(0 if got == ['apple', 'banana', 'cherry', 'date', 'fig', 'kiwi', 'pear'] else "ordered.txt: " + repr(got))
EOF
