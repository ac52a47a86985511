#!/usr/bin/env bash
set -eu
cat logs/*.log | awk '$2 == "ERROR" {print $3}' | sort | uniq -c | \
  python3 -c 'import json, sys; print(json.dumps({w: int(n) for n, w in (l.split() for l in sys.stdin)}))' > errors.json
