#!/usr/bin/env bash
set -u
[ -f wordfreq.py ] || { echo "no wordfreq.py"; exit 1; }
printf "Beta alpha, beta! ALPHA gamma; delta alpha--beta's e2e\n" > "$TMPDIR/hidden.txt"
got=$(python3 wordfreq.py "$TMPDIR/hidden.txt" 4) || { echo "wordfreq.py failed"; exit 1; }
expected=$'alpha 3\nbeta 3\ne 2\ndelta 1'
[ "$got" = "$expected" ] || { printf 'expected:\n%s\ngot:\n%s\n' "$expected" "$got"; exit 1; }
got=$(python3 wordfreq.py sample.txt 2)
[ "$got" = $'the 5\ndog 3' ] && exit 0
[ "$got" = $'the 5\nfox 3' ] && { echo "ties must be alphabetical"; exit 1; }
printf 'sample.txt gave:\n%s\n' "$got"; exit 1
