#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

p = pathlib.Path('items.csv')
if not p.is_file(): fail('items.csv is missing')
got = [l.strip() for l in p.read_text().splitlines() if l.strip()]
want = ['name,price'] + [f"{i['name']},{i['price']}" for i in [{'name': 'pen', 'price': 1.5}, {'name': 'book', 'price': 12}, {'name': 'lamp', 'price': 30.25}]]
if got != want: fail(f'items.csv holds {got}')
PY
