#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import json
open("author.txt", "w").write(str(json.load(open("meta.json"))["author"]) + "\n")
EOF
