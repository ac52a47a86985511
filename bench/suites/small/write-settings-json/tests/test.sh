#!/usr/bin/env bash
set -u
python3 -c "import json,sys; d=json.load(open('settings.json')); sys.exit(0 if d == {'debug': True, 'level': 3} else f'settings.json is {d!r}')"
