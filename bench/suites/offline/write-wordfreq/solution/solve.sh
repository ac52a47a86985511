#!/usr/bin/env bash
set -eu
cat > wordfreq.py <<'PY'
import collections
import re
import sys

path, n = sys.argv[1], int(sys.argv[2])
words = re.findall(r"[a-z]+", open(path, encoding="utf-8").read().lower())
for word, count in sorted(collections.Counter(words).items(), key=lambda kv: (-kv[1], kv[0]))[:n]:
    print(word, count)
PY
