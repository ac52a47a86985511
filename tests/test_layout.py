"""The tree is the architecture: tools/ is the tool list, no import circles, no private names across modules."""

from __future__ import annotations

import ast
from pathlib import Path

import tools

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ga", "tools", "memory", "sop")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[name] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> list[tuple[str, str]]:
    """(module imported, name imported or "") for every import in the file, TYPE_CHECKING ones included."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.append((full, "") if full in modules else (base, alias.name))
        elif isinstance(node, ast.Import):
            found += [(alias.name, "") for alias in node.names]
    return [(target, what) for target, what in found if target in modules and target != name]


def test_tools_folder_holds_only_the_tools_and_what_they_share():
    top = {p.stem for p in (ROOT / "tools").glob("*.py")}
    assert top == {"__init__", "fileio", *tools.TOOL_MODULES}
    assert not [p.name for p in (ROOT / "tools").iterdir() if p.is_file() and p.suffix not in (".py",)]


def test_no_import_circles():
    modules = _modules()
    graph = {m: {t for t, _ in _imports(m, p, modules)} for m, p in modules.items()}
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*trail[trail.index(nxt):], nxt])
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, cycles


def test_no_private_name_crosses_a_module_boundary():
    modules = _modules()
    crossing = [f"{m} imports {t}.{what}" for m, p in modules.items() for t, what in _imports(m, p, modules)
                if what.startswith("_")]
    ours = {m.split(".")[0] for m in modules}  # the standard library's own (os._exit) are public API
    for name, path in modules.items():
        imported = {alias.asname or alias.name.rpartition(".")[2]
                    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                    if isinstance(node, (ast.Import, ast.ImportFrom)) for alias in node.names
                    if ((node.module or "") if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
                    in ours}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name) and node.value.id in imported):
                crossing.append(f"{name} uses {node.value.id}.{node.attr}")
    assert not crossing, crossing


def test_the_core_imports_tools_only_through_the_registry():
    modules = _modules()
    reaching = [f"{m} imports {t}" for m, p in modules.items() if m.split(".")[0] == "ga"
                for t, _ in _imports(m, p, modules) if t.startswith("tools.")]
    assert not reaching, reaching
