#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import sys
got = open("notes.txt").read()
sys.exit(0 if got == 'The color of the sky changes.\nPick a color for the logo.\nNo colours here: colourful is fine too.\n' else "notes.txt:\n" + got)
EOF
