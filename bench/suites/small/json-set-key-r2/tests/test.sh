#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import json, sys
got = json.load(open("config.json"))
want = json.loads('{"host": "localhost", "port": 8080, "workers": 4}')
sys.exit(0 if got == want else f"config.json: {got} (want {want})")
EOF
