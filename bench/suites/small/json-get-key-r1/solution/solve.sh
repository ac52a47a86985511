#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import json
open("version.txt", "w").write(str(json.load(open("config.json"))["version"]) + "\n")
EOF
