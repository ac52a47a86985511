#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, sys
try:
    got = json.load(open("service.json"))
except (OSError, ValueError) as e:
    sys.exit(f"service.json is still not JSON: {e}")
expected = {"name": "billing", "port": 8443, "workers": 4,
            "upstream": {"url": "https://ledger.internal.example/v2", "timeout_s": 12.5, "retries": 3},
            "features": ["pdf", "email", "reminders"], "maintenance": False, "owner": "team-billing"}
if got != expected:
    sys.exit(f"settings changed:\nexpected {expected}\ngot      {got}")
print("ok")
PY
