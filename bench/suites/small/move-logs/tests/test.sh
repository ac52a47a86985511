#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

top = sorted(p.name for p in pathlib.Path('.').iterdir() if p.is_file())
if top != ['error.log.txt', 'notes.txt', 'run.sh']: fail(f'top-level files: {top}')
logs = sorted(p.name for p in pathlib.Path('logs').iterdir()) if pathlib.Path('logs').is_dir() else None
if logs != ['app.log', 'db.log']: fail(f'logs/ holds {logs}')
if pathlib.Path('logs/app.log').read_text() != 'started\n': fail('app.log changed')
PY
