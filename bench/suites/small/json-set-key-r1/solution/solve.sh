#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import json
data = json.load(open("settings.json"))
data["debug"] = json.loads('true')
json.dump(data, open("settings.json", "w"), indent=2)
EOF
