"""ga memory [list] [--json] | show NAME | rm NAME | search QUERY [--json] [-v] [--runs] | export DIR | import DIR

With no command (or only options), `memory` lists, as `runs` does."""

from __future__ import annotations

import argparse
import difflib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from ga.config import Settings, load_settings
from ga.errors import ConfigError
from ga.invocation import invocation
from ga.tooling.screen import clean, escaped_json
from memory.index import marks, refresh
from sop import ledger, retrieval, store, transfer
from sop.library import Library, install_seeds, load, remove, save, skill_files
from sop.skill import SKILL_FILE, SkillError, read
from sop.words import tokenize

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
LISTED_LEDGER = (*ledger.COUNTERS[:3], "last_success", "last_failure", "runs", "source")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{invocation()} memory", description="Inspect and move ga's SOPs and memory "
                                "(with no command: list).")
    sub = p.add_subparsers(dest="command", required=True, help="what to do (each has its own --help)")
    ls = sub.add_parser("list", help="every SOP with its ledger")
    ls.add_argument("--json", action="store_true", help="one JSON array on stdout")
    sub.add_parser("show", help="print one SOP").add_argument("name", help="the SOP's name (see list)")
    sub.add_parser("rm", help="delete one SOP (also an archived one)").add_argument("name", help="the SOP's name")
    search = sub.add_parser("search", help="the SOPs a run of this task would list, best first")
    search.add_argument("query", help="a task, as you would give it to ga")
    search.add_argument("--json", action="store_true", help='one JSON array on stdout: [{"name", "description", '
                        '"score", ...}]')
    search.add_argument("-v", "--verbose", action="store_true", help="say why each SOP is listed")
    search.add_argument("--runs", action="store_true", help="search the archives of past runs instead")
    for name, text in (("export", "copy every SOP into DIR as Agent Skills folders"),
                       ("import", "add the Agent Skills folder(s) in DIR (all validated first)")):
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("dir", type=Path, help="a folder of Agent Skills folders (NAME/SKILL.md)")
        clash = cmd.add_mutually_exclusive_group()
        clash.add_argument("--force", action="store_true", help="replace folders of the same name")
        if name == "import":  # importing the same folder again, with new SOPs in it
            clash.add_argument("--skip-existing", action="store_true", help="keep the SOPs of the same name that "
                               "are already here; import the others")
    return p


def main(argv: list[str]) -> int:
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help")):
        argv = ["list", *argv]  # a group lists by default: `memory`, `memory --json`
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
             "path": str(s.path), "marks": marks(s), **{k: s.metadata.get(k, "") for k in LISTED_LEDGER}}
            for s in [*lib.skills, *lib.archived]]
    if args.json:
        print(escaped_json(json.dumps(rows, ensure_ascii=False, indent=1)))
        return EXIT_OK
    if not rows:
        print(f"No SOPs yet in {store.sop_dir(settings.home)}.")
    for r in rows:
        flag = _flags(r["marks"]) + (f" [{r['status']}]" if r["status"] not in ("ok", "flagged") else "")
        where = "" if r["origin"] == "home" else f" ({r['origin']}: {r['path']})"
        print(clean(f"{r['name']}{flag}{where}  uses {r['uses'] or 0}, ok {r['successes'] or 0}, "
                    f"failed {r['failures'] or 0}\n    {r['description'][:150]}"))  # shown, never obeyed
    return EXIT_OK


def _find(settings: Settings, name: str):
    lib = _library(settings)
    skill = lib.get(name)
    if skill is None:
        close = difflib.get_close_matches(name, [s.name for s in [*lib.skills, *lib.archived]], n=3)
        hint = f" Did you mean: {', '.join(close)}?" if close else f" See `{invocation()} memory list`."
        print(f"ga memory: no SOP named {name!r}.{hint}", file=sys.stderr)
    return skill


def show(settings: Settings, args: argparse.Namespace) -> int:
    skill = _find(settings, args.name)
    if skill is None:
        return EXIT_FAILED
    print(clean(f"# {skill.path} ({skill.origin})\n{skill.path.read_text(encoding='utf-8')}"), end="")
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
    found = retrieval.relevant(_library(settings).skills, args.query, home=settings.home)
    rows = [{"name": s.name, "description": s.description, "score": round(m.score, 3),
             "evidence": round(m.evidence, 3),
             "bm25": round(m.score, 3), "words": m.words, "marks": marks(s), "path": str(s.path)} for s, m in found]
    return _print_rows(args, rows, "No SOP fits this task: a run of it would list none.", _sop_row)


def _sop_row(r: dict, args: argparse.Namespace) -> str:
    text = clean(f"{r['name']}{_flags(r['marks'])}  ({r['score']})\n    {r['description']}")
    words = f" ({', '.join(r['words'])})" if r["words"] else ""
    why = f"listed: words it holds{words}, evidence {r['evidence']} >= {retrieval.MIN_EVIDENCE}; BM25 {r['bm25']}"
    return f"{text}\n    {why}" if args.verbose else text


def _flags(marks: list[str]) -> str:
    return f" [{', '.join(marks)}]" if marks else ""


def _print_rows(args: argparse.Namespace, rows: list[dict], empty: str, line) -> int:
    if args.json:
        print(escaped_json(json.dumps(rows, ensure_ascii=False)))
    elif not rows:
        print(empty)
    for r in rows if not args.json else []:
        print(line(r, args))
    return EXIT_OK


def _search_runs(settings: Settings, args: argparse.Namespace) -> int:
    folder = store.memory_dir(settings.home) / "archive"
    paths = sorted(folder.glob("*.md")) if folder.is_dir() else []
    texts = [p.read_text(encoding="utf-8") for p in paths]
    ranker = retrieval.Ranker([(tokenize(t), []) for t in texts])
    found = ranker.rank(args.query, floor=0, limit=10)  # an explicit search: any match, best first
    rows = [{"run_id": paths[m.index].stem, "summary": texts[m.index].strip(), "score": round(m.score, 3)}
            for m in found]
    return _print_rows(args, rows, "No archived run matches.",
                       lambda r, _: clean(f"{r['run_id']}  ({r['score']})\n    {r['summary'][:300]}"))


def export(settings: Settings, args: argparse.Namespace) -> int:
    own = _library(settings).own()
    clashes = [s.name for s in own if (args.dir / s.name).exists()]
    if clashes and not args.force:
        print(f"ga memory: {args.dir} already has {', '.join(clashes)}; nothing exported. "
              "Use --force to replace them.", file=sys.stderr)
        return EXIT_FAILED
    args.dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=args.dir, prefix=".export.", ignore_cleanup_errors=True) as staging:
        staged, problems = _stage([s.folder for s in own], Path(staging))
        if problems:
            print("ga memory: nothing exported:\n" + "\n".join(f"  {p}" for p in problems), file=sys.stderr)
            return EXIT_FAILED
        for _, folder in staged:
            _swap_in(folder, args.dir / folder.name)
    print(f"exported {len(own)} SOP(s) to {args.dir}")
    return EXIT_OK


def import_skills(settings: Settings, args: argparse.Namespace) -> int:
    # links are listed too, so that copying them refuses them by name rather than skipping them unseen
    sources = [p.parent for p in skill_files(Path(os.path.abspath(args.dir)), os.path.lexists)]
    if not sources:
        print(f"ga memory: no SKILL.md in {args.dir} (give a skill folder, or a folder of skill folders); "
              "nothing imported.", file=sys.stderr)
        return EXIT_FAILED
    if too_many := transfer.over_capacity({s.name for s in load(settings.home).own()}, [s.name for s in sources]):
        print(f"ga memory: nothing imported: {too_many}", file=sys.stderr)
        return EXIT_FAILED
    staging_parent = store.private_dir(store.sop_dir(settings.home))
    with tempfile.TemporaryDirectory(dir=staging_parent, prefix=".import.", ignore_cleanup_errors=True) as staging:
        staged, problems = _stage(sources, Path(staging))
        skills = []
        for source, folder in staged:
            try:
                skills.append((source, read(folder / SKILL_FILE)))
            except SkillError as e:
                problems.append(str(e).replace(str(folder), str(source), 1))
        existing = {s.name for s in load(settings.home).own()}
        skipped = [s.name for _, s in skills if s.name in existing and args.skip_existing]
        skills = [(source, s) for source, s in skills if s.name not in skipped]
        problems += [f"{source / SKILL_FILE}: an SOP named {s.name!r} already exists (--force replaces it, "
                     "--skip-existing keeps it)" for source, s in skills if s.name in existing and not args.force]
        if problems:
            print("ga memory: nothing imported:\n" + "\n".join(f"  {p}" for p in problems), file=sys.stderr)
            return EXIT_FAILED
        with store.locked(settings.home):
            for source, skill in skills:
                _swap_in(skill.folder, store.sop_dir(settings.home) / skill.name)
                skill.metadata = ledger.stamp(ledger.fresh(skill.metadata), run_id="", source=f"import:{source}")
                save(settings.home, skill)
            refresh(settings.home, skills_path=settings.skills_path)
    print(f"imported {len(skills)} SOP(s)" + (f": {', '.join(s.name for _, s in skills)}" if skills else ""))
    if skipped:
        print(f"skipped {len(skipped)} already here: {', '.join(skipped)}")
    return EXIT_OK


def _stage(sources: list[Path], staging: Path) -> tuple[list[tuple[Path, Path]], list[str]]:
    """Copy every source folder into `staging` (regular files and folders only, size-capped; a private folder beside
    the targets, so a rename swaps each copy in): (source, copy) pairs of the whole copies, and every problem met.
    Nothing is swapped in unless all of them copied whole."""
    staged, problems = [], []
    for source in sources:
        copy = transfer.copy_skill(source, staging / source.name)
        problems += copy.problems
        if not copy.problems:
            staged.append((source, staging / source.name))
    return staged, problems


def _swap_in(copy: Path, target: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    copy.rename(target)
