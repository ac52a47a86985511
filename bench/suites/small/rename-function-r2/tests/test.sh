#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import sys
got = open("report.py").read()
want = '"""Helpers."""\n\n\ndef compute_total(items):\n    return sum(items)\n\n\ndef describe(items):\n    return "value: " + str(compute_total(items))\n\n\nif __name__ == "__main__":\n    print(compute_total([1, 2, 3]), describe([1, 2, 3]))\n'
sys.exit(0 if got == want else "report.py is not renamed as asked:\n" + got)
EOF
