#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

import tempfile
d = tempfile.mkdtemp()
for lines in (["a", "b", "c", "d"], ["only"], ["x y", "", "z"]):
    p = os.path.join(d, 'in.txt'); open(p, 'w').write('\n'.join(lines) + '\n')
    r = subprocess.run([sys.executable, 'reverse.py', p], capture_output=True, text=True, timeout=20)
    if r.stdout.splitlines() != lines[::-1]: fail(f'on {lines} it printed {r.stdout!r} {r.stderr[-200:]}')
PY
