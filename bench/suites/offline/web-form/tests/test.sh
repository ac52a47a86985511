#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, sys
posts = [json.loads(l) for l in open(os.environ["SITE_LOG"]) if l.strip()]
signups = [p["form"] for p in posts if p["path"] == "/signup"]
if len(signups) != 1:
    sys.exit(f"expected one signup, got {len(signups)}: {signups}")
form = signups[0]
expected = {"name": "Rosa Parks", "email": "rosa@example.org", "plan": "team", "terms": "accepted"}
if {k: form.get(k) for k in expected} != expected or "digest" in form:
    sys.exit(f"the form was {form}")
print("ok", form)
PY
