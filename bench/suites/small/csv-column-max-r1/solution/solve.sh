#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import csv
values = [int(row["celsius"]) for row in csv.DictReader(open("temps.csv"))]
open("max.txt", "w").write(f"{max(values)}\n")
EOF
