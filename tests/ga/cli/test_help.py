"""--help: every command and subcommand answers it, every option says what it does, and the top level names the
environment variables ga reads."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench.harness.cli import TOOLS
from ga.cli.arguments import COMMANDS
from ga.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
INTERNAL = {"GA_PROG", "GA_CODE_RUN", "GA_PIPED_CUT", "GA_CHECK_LAST", "GA_CHECK_WORKSPACE", "GA_CHECK_REPORT"}
"""Variables ga sets for its own children, not settings."""


class _Parsed(Exception):
    """Raised in place of parsing: the parser main() built is all the walk needs."""


def built_parser(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> argparse.ArgumentParser:
    """The parser `ga ARGV...` builds, caught as it is about to parse."""
    seen: list[argparse.ArgumentParser] = []

    def catch(self: argparse.ArgumentParser, args: object = None, namespace: object = None) -> None:
        seen.append(self)
        raise _Parsed

    with monkeypatch.context() as m:
        m.setattr(argparse.ArgumentParser, "parse_known_args", catch)
        with pytest.raises(_Parsed):
            main(argv)
    return seen[0]


def walk(parser: argparse.ArgumentParser, path: list[str]):
    """(path, parser) for the parser and every subcommand's parser under it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from walk(sub, [*path, name])


def every_command(monkeypatch: pytest.MonkeyPatch):
    tops = [[], *([name] for name in COMMANDS), *(["bench", tool] for tool in TOOLS)]
    for top in tops:
        yield from walk(built_parser(monkeypatch, top), top)


def test_every_option_of_every_command_says_what_it_does(monkeypatch):
    found = list(every_command(monkeypatch))
    undescribed = [f"ga {' '.join(path)}: {'/'.join(a.option_strings) or a.dest}" for path, parser in found
                   for a in parser._actions
                   if a.help != argparse.SUPPRESS and not (a.help or "").strip()]
    assert not undescribed, undescribed
    # every subcommand is reached: the schedule's and memory's, and bench's tools
    paths = {" ".join(path) for path, _ in found}
    assert {"schedule add", "schedule rm", "memory search", "bench report", "bench install", "models"} <= paths


def test_every_help_works_and_names_the_way_ga_was_started(monkeypatch, capsys):
    for path, _ in list(every_command(monkeypatch)):
        with pytest.raises(SystemExit) as stop:
            main([*path, "--help"])
        out = capsys.readouterr().out
        assert stop.value.code == 0, path
        assert out.startswith(f"usage: ga {' '.join(path)}".rstrip()), (path, out[:200])


def test_bench_tools_take_their_arguments_from_their_parsers(tmp_path, capsys):
    assert main(["bench", "report", str(tmp_path)]) == 2
    assert f"{tmp_path} holds no results.jsonl" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["bench", "install"])
    assert stop.value.code == 2 and "the following arguments are required: agent" in capsys.readouterr().err


def test_the_configuration_doc_names_every_variable_ga_reads_and_the_help_points_to_it():
    proc = subprocess.run([sys.executable, str(ROOT / "run.py"), "--help"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert proc.returncode == 0 and "docs/configuration.md" in proc.stdout and "GA_HOME" in proc.stdout
    read = set()
    for package in ("ga", "tools", "memory", "sop"):
        for path in (ROOT / package).rglob("*.py"):
            read |= set(re.findall(r"\bGA_[A-Z0-9_]+\b", path.read_text(encoding="utf-8")))
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    missing = sorted(name for name in read - INTERNAL if name not in doc)
    assert not missing, missing
    for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "XDG_CACHE_HOME"):
        assert name in doc
    usage = proc.stdout.splitlines()[0]
    assert usage.startswith("usage: ") and usage.split()[2] == str(ROOT / "run.py"), usage  # `python run.py`
