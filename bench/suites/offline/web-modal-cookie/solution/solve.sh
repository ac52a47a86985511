#!/usr/bin/env bash
# The author knows how the page builds the code: "K7Q" and 1100 + 1191.
set -eu
python3 - <<'PY'
import os, re, urllib.request
html = urllib.request.urlopen(os.environ["SITE_URL"] + "/").read().decode()
a, x, y = re.search(r'a: "(\w+)", b: String\((\d+) \+ (\d+)\)', html).groups()
open("code.txt", "w").write(f"{a}-{int(x) + int(y)}\n")
PY
