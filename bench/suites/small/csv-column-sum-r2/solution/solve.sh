#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import csv
total = sum(float(row["price"]) for row in csv.DictReader(open("sales.csv")))
open("sum.txt", "w").write(f"{total:.2f}\n")
EOF
