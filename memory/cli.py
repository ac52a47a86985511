"""python run.py memory list [--json] | show NAME | rm NAME | search QUERY [--json] [--runs] | export DIR | import DIR
"""

from __future__ import annotations

import argparse
import difflib
import json
import shutil
import sys
import tempfile
from pathlib import Path

from ga.config import Settings, load_settings
from ga.errors import ConfigError
from memory import store
from memory.index import refresh
from sop import ledger, retrieval
from sop.library import Library, install_seeds, load, remove, save, skill_files
from sop.skill import SkillError, read
from sop.tokens import tokenize

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="run.py memory", description="Inspect and move ga's SOPs and memory.")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="every SOP with its ledger")
    ls.add_argument("--json", action="store_true")
    sub.add_parser("show", help="print one SOP").add_argument("name")
    sub.add_parser("rm", help="delete one SOP (also an archived one)").add_argument("name")
    search = sub.add_parser("search", help="the SOPs a run of this task would list, best first")
    search.add_argument("query")
    search.add_argument("--json", action="store_true")
    search.add_argument("--runs", action="store_true", help="search the archives of past runs instead")
    for name, text in (("export", "copy every SOP into DIR as Agent Skills folders"),
                       ("import", "add the Agent Skills folder(s) in DIR (all validated first)")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("dir", type=Path)
        cmd.add_argument("--force", action="store_true", help="replace folders of the same name")
    return p


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = load_settings()
    except ConfigError as e:
        print(f"ga: {e}", file=sys.stderr)
        return EXIT_USAGE
    if settings.learn:
        install_seeds(settings.home)  # a first use of GA_HOME, like a first run
    command = {"list": list_sops, "show": show, "rm": rm, "search": search, "export": export,
               "import": import_skills}[args.command]
    try:
        return command(settings, args)
    except (OSError, store.MemoryBusy) as e:
        print(f"ga memory: {e}", file=sys.stderr)
        return EXIT_FAILED


def _library(settings: Settings) -> Library:
    lib = load(settings.home, settings.skills_path)
    for problem in lib.problems:
        print(f"skipped: {problem}", file=sys.stderr)
    return lib


def list_sops(settings: Settings, args: argparse.Namespace) -> int:
    lib = _library(settings)
    rows = [{"name": s.name, "description": s.description, "status": s.status, "origin": s.origin,
             "path": str(s.path), **{k: s.metadata.get(k, "") for k in ledger.COUNTERS[:3]},
             **{k: s.metadata.get(k, "") for k in ("last_success", "last_failure", "runs", "source")}}
            for s in [*lib.skills, *lib.archived]]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=1))
        return EXIT_OK
    if not rows:
        print(f"No SOPs yet in {store.sop_dir(settings.home)}.")
    for r in rows:
        flag = "" if r["status"] == "ok" else f" [{r['status']}]"
        where = "" if r["origin"] == "home" else f" ({r['origin']}: {r['path']})"
        print(f"{r['name']}{flag}{where}  uses {r['uses'] or 0}, ok {r['successes'] or 0}, "
              f"failed {r['failures'] or 0}\n    {r['description'][:150]}")
    return EXIT_OK


def _find(settings: Settings, name: str):
    lib = _library(settings)
    skill = lib.get(name)
    if skill is None:
        close = difflib.get_close_matches(name, [s.name for s in [*lib.skills, *lib.archived]], n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else " See `python run.py memory list`."
        print(f"ga memory: no SOP named {name!r}.{hint}", file=sys.stderr)
    return skill


def show(settings: Settings, args: argparse.Namespace) -> int:
    skill = _find(settings, args.name)
    if skill is None:
        return EXIT_FAILED
    print(f"# {skill.path} ({skill.origin})\n{skill.path.read_text(encoding='utf-8')}", end="")
    return EXIT_OK


def rm(settings: Settings, args: argparse.Namespace) -> int:
    skill = _find(settings, args.name)
    if skill is None:
        return EXIT_FAILED
    if skill.origin == "external":
        print(f"ga memory: {skill.name} is read in place from {skill.folder} (GA_SKILLS_PATH); delete it there.",
              file=sys.stderr)
        return EXIT_FAILED
    with store.locked(settings.home):
        folder = remove(settings.home, skill.name)
        refresh(settings.home, skills_path=settings.skills_path)
    print(f"removed {skill.name} ({folder})")
    return EXIT_OK


def search(settings: Settings, args: argparse.Namespace) -> int:
    if args.runs:
        return _search_runs(settings, args)
    found = retrieval.relevant(_library(settings).skills, args.query)
    rows = [{"name": s.name, "description": s.description, "score": round(m.score, 3)} for s, m in found]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
    elif not rows:
        print("No SOP fits this task: a run of it would list none.")
    for r in rows if not args.json else []:
        print(f"{r['name']}  ({r['score']})\n    {r['description']}")
    return EXIT_OK


def _search_runs(settings: Settings, args: argparse.Namespace) -> int:
    folder = store.memory_dir(settings.home) / "archive"
    paths = sorted(folder.glob("*.md")) if folder.is_dir() else []
    texts = [p.read_text(encoding="utf-8") for p in paths]
    ranker = retrieval.Ranker([(tokenize(t), []) for t in texts])
    found = ranker.rank(args.query, floor=0, limit=10)  # an explicit search: any match, best first
    rows = [{"run_id": paths[m.index].stem, "summary": texts[m.index].strip(), "score": round(m.score, 3)}
            for m in found]
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
    elif not rows:
        print("No archived run matches.")
    for r in rows if not args.json else []:
        print(f"{r['run_id']}  ({r['score']})\n    {r['summary'][:300]}")
    return EXIT_OK


def export(settings: Settings, args: argparse.Namespace) -> int:
    own = _library(settings).own()
    clashes = [s.name for s in own if (args.dir / s.name).exists()]
    if clashes and not args.force:
        print(f"ga memory: {args.dir} already has {', '.join(clashes)}; nothing exported. "
              "Use --force to replace them.", file=sys.stderr)
        return EXIT_FAILED
    args.dir.mkdir(parents=True, exist_ok=True)
    for skill in own:
        _copy_folder(skill.folder, args.dir / skill.name)
    print(f"exported {len(own)} SOP(s) to {args.dir}")
    return EXIT_OK


def import_skills(settings: Settings, args: argparse.Namespace) -> int:
    paths = skill_files(args.dir) if args.dir.is_dir() else []
    if not paths:
        print(f"ga memory: no SKILL.md in {args.dir} (give a skill folder, or a folder of skill folders); "
              "nothing imported.", file=sys.stderr)
        return EXIT_FAILED
    skills, problems = [], []
    for path in paths:
        try:
            skills.append(read(path))
        except SkillError as e:
            problems.append(str(e))
    existing = {s.name for s in load(settings.home).own()}
    problems += [f"{s.path}: an SOP named {s.name!r} already exists (use --force to replace it)"
                 for s in skills if s.name in existing and not args.force]
    if problems:
        print("ga memory: nothing imported:\n" + "\n".join(f"  {p}" for p in problems), file=sys.stderr)
        return EXIT_FAILED
    with store.locked(settings.home):
        for skill in skills:
            target = store.sop_dir(settings.home) / skill.name
            _copy_folder(skill.folder, target)
            skill.metadata = ledger.stamp(skill.metadata, run_id="", source=f"import:{skill.folder}")
            save(settings.home, skill)
        refresh(settings.home, skills_path=settings.skills_path)
    print(f"imported {len(skills)} SOP(s): {', '.join(s.name for s in skills)}")
    return EXIT_OK


def _copy_folder(source: Path, target: Path) -> None:
    """Copy beside the target, then swap it in: an interrupted copy never leaves half a skill."""
    store.private_dir(target.parent)
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        shutil.copytree(source, staging / "copy")
        if target.exists():
            shutil.rmtree(target)
        (staging / "copy").rename(target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
