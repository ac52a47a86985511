#!/usr/bin/env bash
set -u
python3 - <<'PY'
import ast, sys
src = open("report.py").read()
tree = ast.parse(src)
names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
calls = {n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
if names != {"compute_total", "summary"} or "calc" in calls:
    sys.exit(f"functions: {sorted(names)}; calls: {sorted(calls)}")
ns = {}
exec(src, ns)
assert ns["summary"]([2, 3]) == "total: 5", ns["summary"]([2, 3])
print("ok")
PY
