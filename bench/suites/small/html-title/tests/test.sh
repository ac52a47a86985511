#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

got = pathlib.Path('index.html').read_text()
if got.rstrip() != '<!doctype html>\n<html>\n<head>\n  <meta charset="utf-8">\n  <title>My Shop</title>\n</head>\n<body>\n  <h1>Welcome</h1>\n</body>\n</html>\n'.rstrip(): fail('index.html is now ' + repr(got[:300]))
PY
