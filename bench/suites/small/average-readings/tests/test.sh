#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)
p = pathlib.Path('average.txt')
if not p.is_file(): fail("average.txt is missing")
got = p.read_text(errors="replace").strip()
if got != '6.6': fail("average.txt holds " + repr(got[:200]))
PY
