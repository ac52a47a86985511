#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import json
data = json.load(open("config.json"))
data["port"] = json.loads('8080')
json.dump(data, open("config.json", "w"), indent=2)
EOF
