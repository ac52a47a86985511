#!/usr/bin/env bash
set -eu
python3 - <<'PY'
from pathlib import Path
p = Path("shop/listing.py")
s = p.read_text()
s = s.replace("""    start = number * per_page - per_page - 1
    if start < 0:
        start = 0
""", """    start = (number - 1) * per_page
""")
p.write_text(s)
PY
