#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import configparser
config = configparser.ConfigParser()
config.read("db.ini")
open("host.txt", "w").write(config["database"]["host"] + "\n")
EOF
