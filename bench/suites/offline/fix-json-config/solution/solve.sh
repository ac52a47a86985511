#!/usr/bin/env bash
set -eu
cat > service.json <<'JSON'
{
  "name": "billing",
  "port": 8443,
  "workers": 4,
  "upstream": {
    "url": "https://ledger.internal.example/v2",
    "timeout_s": 12.5,
    "retries": 3
  },
  "features": ["pdf", "email", "reminders"],
  "maintenance": false,
  "owner": "team-billing"
}
JSON
