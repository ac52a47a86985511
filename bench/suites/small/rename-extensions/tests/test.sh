#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

left = sorted(str(p) for p in pathlib.Path('.').rglob('*') if p.is_file())
want = ['cover.jpeg', 'photos/beach.jpg', 'photos/city.jpg', 'photos/logo.png', 'photos/old/dog.jpeg']
if left != want: fail(f'files: {left}')
PY
