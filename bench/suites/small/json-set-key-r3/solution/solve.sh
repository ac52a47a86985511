#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import json
data = json.load(open("app.json"))
data["theme"] = json.loads('"dark"')
json.dump(data, open("app.json", "w"), indent=2)
EOF
