#!/usr/bin/env bash
set -eu
python3 - <<'PY'
import csv, json
latest = {}
for row in csv.DictReader(open("customers.csv", newline="")):
    email = row["email"].lower()
    if email not in latest or row["signed_up"] > latest[email]["signed_up"]:
        latest[email] = row
out = [{"email": e, "name": r["name"], "age": int(r["age"]), "vip": r["vip"] == "yes"} for e, r in sorted(latest.items())]
json.dump(out, open("customers.json", "w"), indent=2)
PY
