#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import csv
count = sum(1 for row in csv.DictReader(open("tickets.csv")) if row["priority"] == "high")
open("high.txt", "w").write(f"{count}\n")
EOF
