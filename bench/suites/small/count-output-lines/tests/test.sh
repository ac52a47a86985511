#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)
p = pathlib.Path('lines.txt')
if not p.is_file(): fail("lines.txt is missing")
got = p.read_text(errors="replace").strip()
if got != '18': fail("lines.txt holds " + repr(got[:200]))
PY
