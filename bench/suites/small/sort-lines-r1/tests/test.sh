#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import sys
got = open("sorted_names.txt").read().strip().splitlines()
if open("names.txt").read().split() != ['Mira', 'Anton', 'Zoe', 'Bela', 'Chen', 'Ola', 'Dara']:
    sys.exit("names.txt was changed")
sys.exit(0 if got == ['Anton', 'Bela', 'Chen', 'Dara', 'Mira', 'Ola', 'Zoe'] else "sorted_names.txt: " + repr(got))
EOF
