#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)
p = pathlib.Path('report.txt')
if not p.is_file(): fail("report.txt is missing")
got = p.read_text(errors="replace").strip()
if got != 'count: 6\nmin: 4\nmax: 42\nmean: 18.00': fail("report.txt holds " + repr(got[:200]))
PY
