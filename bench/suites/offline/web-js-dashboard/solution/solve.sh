#!/usr/bin/env bash
set -eu
python3 - <<'PY'
import json, os, urllib.request
orders = json.load(urllib.request.urlopen(os.environ["SITE_URL"] + "/api/orders.json"))["orders"]
open("total.txt", "w").write(f"{sum(o['amount'] for o in orders if o['status'] == 'paid'):.2f}\n")
PY
