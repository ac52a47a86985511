#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

left = sorted(str(p) for p in pathlib.Path('.').rglob('*') if p.is_file())
want = ['main.bak', 'tmp/b.txt', 'tmp/d.bak.txt', 'tmp/sub/e.bak']
if left != want: fail(f'files left: {left}')
PY
