#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import configparser
config = configparser.ConfigParser()
config.read("app.ini")
open("ttl.txt", "w").write(config["cache"]["ttl"] + "\n")
EOF
