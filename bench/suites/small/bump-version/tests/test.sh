#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

got = pathlib.Path('setup.cfg').read_text()
if got.rstrip() != '[metadata]\nname = tinytool\nversion = 1.3.0\ndescription = A tiny tool\n\n[options]\npython_requires = >=3.9\n'.rstrip(): fail('setup.cfg is now ' + repr(got[:300]))
PY
