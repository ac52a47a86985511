#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)
p = pathlib.Path('answer.txt')
if not p.is_file(): fail("answer.txt is missing")
got = p.read_text(errors="replace").strip()
if got != '4': fail("answer.txt holds " + repr(got[:200]))
PY
