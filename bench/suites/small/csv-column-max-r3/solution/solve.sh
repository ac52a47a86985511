#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import csv
values = [int(row["usd"]) for row in csv.DictReader(open("prices.csv"))]
open("top.txt", "w").write(f"{max(values)}\n")
EOF
