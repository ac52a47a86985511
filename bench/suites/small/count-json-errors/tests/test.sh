#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)
p = pathlib.Path('error_count.txt')
if not p.is_file(): fail("error_count.txt is missing")
got = p.read_text(errors="replace").strip()
if got != '13': fail("error_count.txt holds " + repr(got[:200]))
PY
