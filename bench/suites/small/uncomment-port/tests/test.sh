#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

got = pathlib.Path('server.conf').read_text()
want = '# example server configuration\nhost = 0.0.0.0\nport = 8080\n# workers = 4\nlog = /var/log/app.log\n'
if got.rstrip() != want.rstrip(): fail('server.conf is now ' + repr(got[:300]))
PY
