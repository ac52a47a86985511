#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

p = pathlib.Path('emails.txt')
if not p.is_file(): fail('emails.txt is missing')
got = [l.strip() for l in p.read_text().splitlines() if l.strip()]
if got != ['ann@ex.org', 'ben@ex.org', 'cat@ex.org']: fail(f'emails.txt holds {got}')
PY
