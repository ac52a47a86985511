#!/usr/bin/env bash
set -eu
python3 - <<'PY'
import csv
from collections import defaultdict
totals = defaultdict(float)
with open("sales.csv", newline="") as f:
    for row in csv.DictReader(f):
        totals[row["region"]] += int(row["quantity"]) * float(row["unit_price"])
with open("report.md", "w") as out:
    for region, total in sorted(totals.items(), key=lambda kv: -kv[1]):
        out.write(f"- {region}: {total:.2f}\n")
PY
