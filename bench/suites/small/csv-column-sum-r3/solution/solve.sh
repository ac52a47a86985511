#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import csv
total = sum(float(row["cost"]) for row in csv.DictReader(open("expenses.csv")))
open("result.txt", "w").write(f"{total:.2f}\n")
EOF
