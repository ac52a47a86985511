#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import json, sys
got = json.load(open("settings.json"))
want = json.loads('{"name": "demo", "debug": true, "level": 2}')
sys.exit(0 if got == want else f"settings.json: {got} (want {want})")
EOF
