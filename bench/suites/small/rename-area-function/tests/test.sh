#!/usr/bin/env bash
set -u
python3 - <<'PY'
import ast, sys
src = open("shapes.py").read()
names = {n.name for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef)}
if "area_sq" in src or names != {"square_area", "total_area"}:
    sys.exit(f"functions: {sorted(names)}; area_sq left: {'area_sq' in src}")
ns = {}
exec(src, ns)
assert ns["total_area"]([1, 2, 3]) == 14, ns["total_area"]([1, 2, 3])
print("ok")
PY
