#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

files = {"inbox/m1.txt": "URGENT: server down\n", "inbox/m2.txt": "lunch?\n", "inbox/m3.txt": "Re: invoice\nthis is URGENT\n", "inbox/m4.txt": "urgent in lower case\n"}
for rel, text in files.items():
    if pathlib.Path(rel).read_text() != text: fail(rel + ' changed')
got = sorted(p.name for p in pathlib.Path('urgent').iterdir()) if pathlib.Path('urgent').is_dir() else None
if got != ['m1.txt', 'm3.txt']: fail(f'urgent/ holds {got}')
PY
