#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import sys
got = open("letter.txt").read()
sys.exit(0 if got == 'You will receive the parcel soon.\nPlease receive my thanks.\nWe recieved nothing yet.\n' else "letter.txt:\n" + got)
EOF
