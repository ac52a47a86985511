#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

got = pathlib.Path('echo_args.py').read_text()
if got.rstrip() != ('#!/usr/bin/env python3\n' + "import sys\n\n\ndef main():\n    print(' '.join(sys.argv[1:]))\n\n\nmain()\n").rstrip(): fail('echo_args.py is now ' + repr(got[:300]))
PY
