#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

files = {"src/config.py": "MAX_ITEMS = 50\nNAME = 'shop'\n", "src/cart.py": "from config import MAX_ITEMS\n\n\ndef add(cart, item):\n    if len(cart) >= MAX_ITEMS:\n        raise ValueError(f'at most {MAX_ITEMS} items')\n    cart.append(item)\n", "src/report.py": "import config\n\n\ndef limit_line():\n    return 'limit: %d' % config.MAX_ITEMS\n", "README.md": "The cart holds at most MAX_ITEMS items (see src/config.py).\n"}
for rel, text in files.items():
    got = pathlib.Path(rel).read_text()
    want = text if rel == 'README.md' else text.replace('MAX_ITEMS', 'ITEM_LIMIT')
    if got.rstrip() != want.rstrip(): fail(rel + ' is now ' + repr(got[:300]))
PY
