#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

got = pathlib.Path('lists.md').read_text()
if got.rstrip() != '# Lists\n\n## Shopping\n- bread\n- eggs\n- milk\n\n## Chores\n- laundry\n'.rstrip(): fail('lists.md is now ' + repr(got[:300]))
PY
