#!/usr/bin/env bash
set -u
python3 - <<'PY'
import csv, json, os, sys
expected = [[s, n, p, st] for s, n, p, st in json.load(open(os.path.join(os.environ["TESTS_DIR"], "expected.json")))]
try:
    rows = list(csv.reader(open("inventory.csv", newline="")))
except OSError:
    sys.exit("no inventory.csv")
if not rows or [c.strip() for c in rows[0]] != ["sku", "name", "price", "stock"]:
    sys.exit(f"header is {rows[:1]}")
try:
    got = [[r[0].strip(), r[1].strip(), round(float(r[2]), 2), int(r[3])] for r in rows[1:] if r]
except (ValueError, IndexError) as e:
    sys.exit(f"bad row: {e}")
if got != expected:
    sys.exit(f"expected {expected}\ngot      {got}")
print("ok")
PY
