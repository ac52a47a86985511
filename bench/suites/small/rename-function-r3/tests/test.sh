#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import sys
got = open("stats.py").read()
want = '"""Helpers."""\n\n\ndef mean_value(xs):\n    return sum(xs) / len(xs)\n\n\ndef describe(xs):\n    return "value: " + str(mean_value(xs))\n\n\nif __name__ == "__main__":\n    print(mean_value([2, 4]), describe([2, 4]))\n'
sys.exit(0 if got == want else "stats.py is not renamed as asked:\n" + got)
EOF
