"""The rules of the command policy, applied to one simple command (an argv).

shell_scan.py finds the commands (through pipes, eval, `bash -c`, substitutions, functions...); the rules
decide what each one may do: rules_files (deletes, writes, moves), rules_git, rules_system, other_code
(perl, node, ruby... one-liners, called by the scan). A rule reports through `flag(verdict, rule_id, reason)`.
"""

from __future__ import annotations

import os

from tools.guard.places import Places
from tools.guard.rules_files import FILE_RULES, FIND_FILTERS, Flag, Rule, check_delete, check_write, is_device
from tools.guard.rules_git import check_git
from tools.guard.rules_system import SYSTEM_RULES

__all__ = ["FIND_FILTERS", "RULES", "check_argv", "check_delete", "check_write", "is_device"]

RULES: dict[str, Rule] = {**FILE_RULES, **SYSTEM_RULES, "git": check_git}


def rule_name(word: str) -> str:
    name = os.path.basename(word)
    return "mkfs" if name.startswith("mkfs.") else name


def check_argv(argv: list[str], places: Places, flag: Flag) -> None:
    """Apply the rule for argv[0] (by its base name), if there is one."""
    rule = RULES.get(rule_name(argv[0]))
    if rule is not None:
        rule(argv[1:], places, " ".join(argv)[:200], flag)
