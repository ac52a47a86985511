"""How the user started ga, for the hints that say what to type next, and how to start ga again in a child process.

`ga` (the command `pip install .` makes), `python3 run.py` in a checkout and `python3 -m ga` are the same program;
a hint names the one the user typed (`ga --resume ID`, `.venv/bin/python run.py --resume ID`), as argparse names
`prog`. A background run or a scheduled one is started by ga itself (ga_command()): the parent passes its own name
on in GA_PROG, so the hints `tail` shows are still the user's."""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import sys
from pathlib import Path

PROG_ENV = "GA_PROG"
"""The name a child run uses in its hints: set by the ga that started it."""
DEFAULT = "ga"
_ROOT = Path(__file__).resolve().parents[1]
RUN_PY = _ROOT / "run.py"
"""A checkout's entry point; an installed package has none (its folder is site-packages)."""


def invocation() -> str:
    """What the user typed to start ga, without its arguments: `ga`, `python3 run.py`, `python3 -m ga`."""
    return os.environ.get(PROG_ENV) or _typed(sys.argv[0] if sys.argv else "", tuple(getattr(sys, "orig_argv", ())))


@functools.lru_cache(maxsize=8)
def _typed(argv0: str, orig_argv: tuple[str, ...]) -> str:
    path = Path(argv0)
    interpreter = _shortest(orig_argv[0] if orig_argv else sys.executable)
    if path.name == "__main__.py" and path.parent.name == "ga":
        return f"{interpreter} -m ga"
    if path.suffix == ".py" and path.name != "__main__.py":  # run.py (or a script of the user's that calls main)
        return f"{interpreter} {shlex.quote(argv0)}"
    if path.name == DEFAULT:  # the console script: `ga` when PATH finds it, else the path typed to it
        return _shortest(argv0)
    return DEFAULT  # embedded (python -c, a test calling main()): the installed command's name


def _shortest(program: str) -> str:
    """The program's bare name when PATH finds that very file, else the path as given (quoted for the shell)."""
    name = os.path.basename(program)
    found = shutil.which(name) if name else None
    try:
        same = found is not None and os.path.samefile(found, program if os.sep in program else found)
    except OSError:
        same = False
    return name if same else shlex.quote(program)


SAFE_PATH = ["-P"] if sys.version_info >= (3, 11) else []
"""Python's safe path: a child started from the workspace does not put that folder first on sys.path, where a
typing.py or json.py the run left there would run, on the host, in place of the standard library's."""


def ga_command() -> list[str]:
    """The argv that starts this same ga in a child process, from any working folder: a checkout's run.py, else
    `python -m ga`; with the safe path (before 3.11, ga/__main__.py takes the working folder off sys.path)."""
    if RUN_PY.is_file():
        return [sys.executable, *SAFE_PATH, str(RUN_PY)]
    return [sys.executable, *SAFE_PATH, "-m", "ga"]


def child_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a ga started by ga: `env` (default: this process's) naming the user's program."""
    return {**(os.environ if env is None else env), PROG_ENV: invocation()}
