#!/usr/bin/env bash
set -u
python3 - <<'PY2'
import json, os, sys
expected = json.load(open(os.path.join(os.environ["TESTS_DIR"], "expected.json")))
try:
    got = json.load(open("totals.json"))
except (OSError, ValueError) as e:
    sys.exit(f"totals.json: {e}")
if not isinstance(got, dict) or set(got) != set(expected) or any(abs(float(got[k]) - v) > 0.005 for k, v in expected.items()):
    sys.exit(f"expected {expected}\ngot      {got}")
print("ok")
PY2
