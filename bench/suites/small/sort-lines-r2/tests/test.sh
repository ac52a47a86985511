#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import sys
got = open("cities_sorted.txt").read().strip().splitlines()
if open("cities.txt").read().split() != ['Oslo', 'Lima', 'Accra', 'Quito', 'Bern', 'Hanoi', 'Dakar']:
    sys.exit("cities.txt was changed")
sys.exit(0 if got == ['Accra', 'Bern', 'Dakar', 'Hanoi', 'Lima', 'Oslo', 'Quito'] else "cities_sorted.txt: " + repr(got))
EOF
