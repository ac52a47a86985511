#!/usr/bin/env bash
set -u
python3 - <<'PY'
import collections, glob, json, sys
expected = collections.Counter()
for path in glob.glob("logs/*.log"):
    for line in open(path):
        parts = line.split()
        if len(parts) > 2 and parts[1] == "ERROR":
            expected[parts[2]] += 1
try:
    got = json.load(open("errors.json"))
except (OSError, ValueError) as e:
    sys.exit(f"errors.json: {e}")
if got != dict(expected):
    sys.exit(f"expected {dict(expected)}, got {got}")
print("ok", dict(expected))
PY
