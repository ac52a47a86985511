#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

p = pathlib.Path('unique_visitors.txt')
if not p.is_file(): fail('unique_visitors.txt is missing')
got = p.read_text().split()
if got != ['ana', 'bo', 'cy', 'dee', 'eve', 'fay']: fail(f'unique_visitors.txt holds {got}')
PY
