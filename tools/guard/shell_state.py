"""What a script's builtins leave for the commands after them: the folder they run in (`cd`, `pushd`, `popd`,
`cd -`) and the positional parameters ($1, $2..., "$@", $0: a function's or a script's arguments while it runs, or
`set -- ...` from then on). A value only run time knows is kept as UNKNOWN. The command policy (shell_scan,
shell_walk) keeps this state in its Places.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tools.guard.places import UNKNOWN, Places


def known(places: Places, value: str) -> str:
    """The value to keep for a variable: itself, or UNKNOWN when a part of it is."""
    return UNKNOWN if places.expand(value) is None else value


def with_positional(places: Places, words: list[str], zero: str | None = None,
                    check: Callable[[], None] | None = None) -> None:
    """Make the words $1, $2... ("$@") and `zero` $0: while `check` runs, or from now on (`set --`)."""
    values = [known(places, w) for w in words]
    new = {str(n): (values[n - 1] if n <= len(values) else "") for n in range(1, 10)}
    joined = UNKNOWN if UNKNOWN in values else " ".join(values)
    new.update({"@": joined, "*": joined, "#": str(len(values))} | ({"0": known(places, zero)} if zero else {}))
    saved = {k: places.variables.get(k) for k in new}
    places.variables.update(new)
    if check is None:
        return
    try:
        check()
    finally:
        for key, value in saved.items():
            if value is None:
                places.variables.pop(key, None)
            else:
                places.variables[key] = value


def set_positional(places: Places, args: list[str]) -> None:
    """`set -- a b c` (or `set a b`) gives the positional parameters, which "$@" then runs or passes."""
    i = 0
    while i < len(args) and args[i][:1] in ("-", "+") and args[i] not in ("-", "--"):
        i += 2 if args[i] in ("-o", "+o") else 1
    if i < len(args) and args[i] in ("-", "--"):
        i += 1
    elif i >= len(args):
        return  # `set -e`, `set -o pipefail`
    with_positional(places, args[i:])


def change_folder(places: Places, name: str, args: list[str]) -> None:
    """`cd DIR`, `pushd DIR`: where the commands after it run; `cd -` and `popd` go back to OLDPWD."""
    folders = [a for a in args if not a.startswith("-") or a == "-"]
    if name == "popd" or folders[:1] == ["-"]:
        previous = places.value("OLDPWD")
        places.variables["OLDPWD"] = str(places.cwd)
        if previous is None:
            places.cwd_known = False
        else:
            places.cwd = Path(previous)
        return
    target = places.target(folders[0] if folders else "~")
    places.variables["OLDPWD"] = str(places.cwd) if places.cwd_known else UNKNOWN
    places.cwd, places.cwd_known = target.path, not target.unknown
