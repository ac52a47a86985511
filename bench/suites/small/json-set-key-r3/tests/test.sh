#!/usr/bin/env bash
set -u
python3 - <<'EOF' || exit 1
import json, sys
got = json.load(open("app.json"))
want = json.loads('{"title": "Notes", "theme": "dark", "autosave": true}')
sys.exit(0 if got == want else f"app.json: {got} (want {want})")
EOF
