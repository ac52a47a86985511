#!/usr/bin/env bash
set -u
python3 - <<'PY'
import json, os, pathlib, subprocess, sys
def fail(why): print(why); sys.exit(1)

files = {"docs/intro.md": "Questions? Write to old@example.com.\n", "docs/faq.md": "# FAQ\nContact old@example.com or old@example.com for billing.\n", "docs/team.md": "# Team\nNo address here.\n", "notes.md": "old@example.com stays here\n"}
for rel, text in files.items():
    got = pathlib.Path(rel).read_text()
    want = text.replace('old@example.com', 'help@example.com') if rel.startswith('docs/') else text
    if got.rstrip() != want.rstrip(): fail(rel + ' is now ' + repr(got[:300]))
PY
