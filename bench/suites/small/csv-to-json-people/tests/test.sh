#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

try: got = json.load(open('people.json'))
except Exception as e: fail(f'people.json: {e}')
if got != [{'name': 'Ada', 'age': 36}, {'name': 'Linus', 'age': 29}, {'name': 'Grace', 'age': 45}, {'name': 'Ken', 'age': 52}]: fail(f'people.json holds {got!r}'[:300])
PY
