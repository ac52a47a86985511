#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import sys
got = open("shapes.py").read()
want = '"""Helpers."""\n\n\ndef square_area(side):\n    return side * side\n\n\ndef describe(side):\n    return "value: " + str(square_area(side))\n\n\nif __name__ == "__main__":\n    print(square_area(3), describe(3))\n'
sys.exit(0 if got == want else "shapes.py is not renamed as asked:\n" + got)
EOF
