#!/usr/bin/env bash
set -eu
python3 - <<'PY2'
import csv, glob, json
owed = {}
for path in sorted(glob.glob("invoices/*.csv")):
    for row in csv.DictReader(open(path, newline=""), delimiter=";"):
        if row["status"] == "open":
            owed[row["customer"]] = owed.get(row["customer"], 0) + round(float(row["amount_eur"].replace(",", ".")) * 100)
json.dump({c: v / 100 for c, v in sorted(owed.items()) if v}, open("totals.json", "w"), indent=1)
PY2
