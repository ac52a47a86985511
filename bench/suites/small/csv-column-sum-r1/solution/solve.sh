#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import csv
total = sum(float(row["amount"]) for row in csv.DictReader(open("payments.csv")))
open("total.txt", "w").write(f"{total:.2f}\n")
EOF
