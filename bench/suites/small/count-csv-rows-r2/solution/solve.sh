#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import csv
count = sum(1 for row in csv.DictReader(open("users.csv")) if row["country"] == "FR")
open("fr.txt", "w").write(f"{count}\n")
EOF
