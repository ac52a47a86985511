#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

import tempfile
cases = {"a.txt": "one two three\nfour  five\n\nsix\n", "b.txt": "", "c.txt": "single"}
d = tempfile.mkdtemp()
for name, text in cases.items():
    p = os.path.join(d, name); open(p, 'w').write(text)
    r = subprocess.run([sys.executable, 'count_words.py', p], capture_output=True, text=True, timeout=20)
    if r.stdout.strip() != str(len(text.split())): fail(f'on {text!r} it printed {r.stdout.strip()!r} {r.stderr[-200:]}')
PY
