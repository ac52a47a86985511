#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import csv
count = sum(1 for row in csv.DictReader(open("orders.csv")) if row["status"] == "shipped")
open("shipped.txt", "w").write(f"{count}\n")
EOF
