#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)
p = pathlib.Path('exit_code.txt')
if not p.is_file(): fail("exit_code.txt is missing")
got = p.read_text(errors="replace").strip()
if got != '3': fail("exit_code.txt holds " + repr(got[:200]))
PY
