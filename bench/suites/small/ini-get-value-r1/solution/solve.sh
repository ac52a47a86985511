#!/usr/bin/env bash
set -eu
python3 - <<'EOF'
import configparser
config = configparser.ConfigParser()
config.read("config.ini")
open("port.txt", "w").write(config["server"]["port"] + "\n")
EOF
