#!/usr/bin/env bash
set -eu
python3 - <<'PY2'
import re
sections = {"feat": [], "fix": []}
for line in open("commits.txt"):
    m = re.match(r"^\w+ (feat|fix)(\([^)]*\))?: (.*)$", line.strip())
    if m:
        sections[m.group(1)].append(m.group(3))
out = ["# v1.5.0"]
for kind, title in (("feat", "Features"), ("fix", "Fixes")):
    if sections[kind]:
        out += ["", "## " + title] + ["- " + s for s in sections[kind]]
open("RELEASE.md", "w").write("\n".join(out) + "\n")
PY2
