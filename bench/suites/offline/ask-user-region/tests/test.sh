#!/usr/bin/env bash
set -u
python3 - <<'PY'
import sys
try:
    import tomllib
except ModuleNotFoundError:
    import tomli as tomllib
try:
    got = tomllib.loads(open("deploy.toml").read())
except (OSError, tomllib.TOMLDecodeError) as e:
    sys.exit(f"deploy.toml: {e}")
expected = {"service": "receipts", "region": "eu-west-3", "replicas": 2, "health": {"path": "/healthz", "interval_s": 15}}
if got != expected:
    sys.exit(f"expected {expected}, got {got}")
print("ok")
PY
