#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import sys
got = open("readme.txt").read()
sys.exit(0 if got == 'Open the file and read the header.\nThen close the door.\n' else "readme.txt:\n" + got)
EOF
