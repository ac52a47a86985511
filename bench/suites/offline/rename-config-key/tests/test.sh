#!/usr/bin/env bash
set -u
python3 - <<'PY' || exit 1
import json, sys
c = json.load(open("config.json"))
if "db_host" in c or c.get("database_host") != "db.internal.example" or c.get("db_port") != 5432:
    sys.exit(f"config.json is {c}")
PY
grep -q 'db_host' settings.py docs/configuration.md && { echo "db_host is still mentioned"; exit 1; }
grep -q '`database_host`' docs/configuration.md || { echo "docs do not name database_host"; exit 1; }
grep -q '`db_port`' docs/configuration.md || { echo "db_port was renamed too"; exit 1; }
[ "$(python3 check_settings.py)" = "db.internal.example" ] || { echo "check_settings.py does not print the host"; exit 1; }
