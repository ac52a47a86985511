"""First words as other tools' users type them: `ga help`, `ga version`, and a one-word task that names a common
command (`ga logs`, `ga status`, `ga resume`), which is asked about rather than sent to the model.

`ga run TEXT` always sends TEXT as a task.
"""

from __future__ import annotations

import sys

from ga.invocation import invocation

MEANT = {
    "logs": "runs (the runs here), tail ID (follow one) or runs show ID (one in full)",
    "log": "runs (the runs here), tail ID (follow one) or runs show ID (one in full)",
    "status": "runs (each run's status)",
    "ps": "runs --status running",
    "history": "runs",
    "resume": "--continue (the newest run of this folder) or --resume ID",
    "continue": "--continue (the newest run of this folder)",
    "last": "--continue (the newest run of this folder)",
    "kill": "stop ID",
    "doctor": "config (the effective settings) or --check CMD",
    "login": "config set api_key",
    "init": "config (ga needs no set-up beyond a model endpoint)",
    "exit": "nothing: ga is not running (in a chat, /exit or Ctrl-D ends it)",
    "quit": "nothing: ga is not running (in a chat, /exit or Ctrl-D ends it)",
}
"""One-word tasks that are more likely a command typed from habit than work for the model → what ga calls it."""
EXIT_USAGE = 2


def meant(task: str | None) -> str:
    """What a one-word task that names a common command is called in ga ("" for any other task)."""
    word = (task or "").strip().lower()
    return MEANT.get(word, "") if word and " " not in word else ""


def ask_to_send(task: str) -> int | None:
    """A one-word task naming a common command: on a terminal, ask whether to send it (None: send it); elsewhere,
    refuse with what to type. Returns the exit code when it is not sent."""
    word, prog = task.strip(), invocation()
    said = f"ga: `{word}` is not a command of ga; you may mean: {prog} {meant(task)}."
    print(said, file=sys.stderr)
    if sys.stdin.isatty() and sys.stderr.isatty():
        print(f"Send `{word}` to the model as a task? [y/N] ", end="", file=sys.stderr, flush=True)
        try:
            reply = sys.stdin.readline()
        except KeyboardInterrupt:
            reply = ""
        if not reply.endswith("\n"):  # Ctrl-D or Ctrl-C: the prompt's line ends here
            print(file=sys.stderr)
        if reply.strip().lower() in ("y", "yes"):
            return None
    print(f"Not sent. To send it as a task: {prog} run {word}", file=sys.stderr)
    return EXIT_USAGE


def help_command(argv: list[str], commands: dict[str, str], top_help) -> int:
    """`ga help` (the top --help) and `ga help COMMAND` (that command's)."""
    if not argv:
        top_help()
        return 0
    if argv[0] in commands:
        import importlib

        try:
            return importlib.import_module(commands[argv[0]]).main([*argv[1:], "--help"])
        except SystemExit as done:  # argparse's --help ends with exit 0
            return int(done.code or 0)
    print(f"ga: no command {argv[0]!r}; commands: {', '.join(commands)} (`{invocation()} help`)", file=sys.stderr)
    return EXIT_USAGE
