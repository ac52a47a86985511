#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import json
open("name.txt", "w").write(str(json.load(open("package.json"))["name"]) + "\n")
EOF
