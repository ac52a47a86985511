#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

for text, want in (("3\n9\n4\n", "9"), ("-5\n-2\n\n-9\n", "-2"), ("42\n", "42"), ("7\n100\n12\n", "100")):
    r = subprocess.run([sys.executable, 'biggest.py'], input=text, capture_output=True, text=True, timeout=20)
    if r.stdout.strip() != want: fail(f'on {text!r} it printed {r.stdout.strip()!r} {r.stderr[-200:]}')
PY
