#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

got = pathlib.Path('service.yaml').read_text()
want = 'service: billing\nretries: 3\ntimeout: 45\nlog_level: info\ncache:\n  timeout: 300\n  size: 64\n'
if got.rstrip() != want.rstrip(): fail('service.yaml is now ' + repr(got[:300]))
PY
