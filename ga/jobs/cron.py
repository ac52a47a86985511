"""Schedules are the user's crontab: one entry per job that starts `ga --detach` with the job's workdir, limits and
check, marked `# ga-schedule:NAME` at its end so that ga reads and edits its own entries and never another line.

    0 3 * * * GA_HOME=/home/me/.ga /usr/bin/python3 -P /opt/ga/run.py --detach --workdir /home/me/project
        --max-turns 40 -- 'Summarise the new issues' >>/home/me/.ga/schedule/nightly.log 2>&1  # ga-schedule:nightly

cron gives the job its own environment, not the shell's: the entry carries GA_HOME and the endpoint and model named
in this shell (never the key: that is kept in GA_HOME/config.toml). Where `crontab` is missing, the entry is printed
with a systemd timer that does the same."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ga.errors import ConfigError
from ga.invocation import ga_command

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
MARK = "# ga-schedule:"
CARRIED = ("GA_HOME", "OPENAI_BASE_URL", "GA_MODEL")
"""The environment an entry sets: where ga keeps its data, and the endpoint and model of this shell."""
MAX_COMMAND = 1000
"""Characters cron takes for an entry's command (Debian's cron refuses a longer one)."""
_ENTRY = re.compile(rf"^(?P<when>@\w+|(?:\S+\s+){{4}}\S+)\s+(?P<command>.*?)\s*{MARK}(?P<name>{NAME.pattern})\s*$")
_EVERY = re.compile(r"(\d+)\s*(m|min|h|d)", re.IGNORECASE)
_BOUNDS = ((0, 59), (0, 23), (1, 31), (1, 12), (0, 7))
_NAMED = ("hourly", "daily", "midnight", "weekly", "monthly", "yearly", "annually")
_DAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def when(*, every: str = "", at: str = "", cron: str = "") -> str:
    """The cron schedule of --every, --at (daily, HH:MM) or --cron, checked."""
    if at:
        match = re.fullmatch(r"([01]?\d|2[0-3]):([0-5]\d)", at.strip())
        if not match:
            raise ConfigError(f"--at {at!r}: give a time of day as HH:MM (\"03:30\")")
        return f"{int(match[2])} {int(match[1])} * * *"
    if every:
        match = _EVERY.fullmatch(every.strip())
        n, unit = (int(match[1]), match[2][0].lower()) if match else (0, "")
        if unit == "m" and n and 60 % n == 0:
            return f"*/{n} * * * *" if n > 1 else "* * * * *"
        if unit == "h" and n and 24 % n == 0:
            return f"0 */{n} * * *" if n > 1 else "0 * * * *"
        if unit == "d" and n == 1:
            return "0 0 * * *"
        raise ConfigError(f"--every {every!r}: cron fires evenly only every N minutes dividing an hour (15m), N hours "
                          "dividing a day (6h) or 1d; use --cron for anything else")
    cron = " ".join(cron.split())
    if cron.startswith("@") and cron[1:] in _NAMED:
        return cron
    fields = cron.split(" ")
    if len(fields) != 5 or not all(_field_ok(f, low, high) for f, (low, high) in zip(fields, _BOUNDS, strict=False)):
        raise ConfigError(f"--cron {cron!r} is not a cron schedule: five fields, minute hour day month weekday "
                          "(\"0 3 * * *\"), or @daily, @hourly, @weekly...")
    return cron


def _field_ok(field: str, low: int, high: int) -> bool:
    for item in field.split(","):
        span, _, step = item.partition("/")
        if (step and not step.isdigit()) or not re.fullmatch(r"\*|\w+(-\w+)?", span):
            return False
        numbers = [int(n) for n in re.findall(r"\d+", span)]
        if any(not low <= n <= high for n in numbers) or (not numbers and span != "*" and not span.isalpha()):
            return False
    return True


@dataclass(kw_only=True)
class Entry:
    name: str
    when: str
    command: str
    """The shell command as cron runs it (`%` already unescaped)."""

    @property
    def line(self) -> str:
        escaped = self.command.replace("%", "\\%")  # cron reads a bare % as the end of the command
        return f"{self.when} {escaped}  {MARK}{self.name}"

    def argv(self) -> list[str]:
        return shlex.split(self.command)

    def row(self) -> dict:
        words = self.argv()
        task = words[words.index("--") + 1] if "--" in words[:-1] else ""
        workdir = words[words.index("--workdir") + 1] if "--workdir" in words[:-1] else ""
        return {"name": self.name, "when": self.when, "task": task, "workdir": workdir, "command": self.command}


def entry(name: str, schedule: str, flags: list[str], task: str, *, env: dict[str, str], log: Path) -> Entry:
    """The entry of a job: `ga --detach FLAGS -- TASK`, its output appended to `log`."""
    if not NAME.fullmatch(name):
        raise ConfigError(f"Job name {name!r}: use letters, digits, '.', '_' and '-' (at most 64).")
    if any(c in text for text in (task, *flags) for c in "\n\r\0"):
        raise ConfigError("A scheduled task and its flags are one line each (a crontab entry is one line).")
    settings = [f"{k}={shlex.quote(env[k])}" for k in CARRIED if env.get(k)]
    words = [*ga_command(), "--detach", *flags, "--", task]
    command = " ".join([*settings, *map(shlex.quote, words), f">>{shlex.quote(str(log))}", "2>&1"])
    made = Entry(name=name, when=schedule, command=command)
    if len(made.line) - len(schedule) > MAX_COMMAND:
        raise ConfigError(f"The entry would be {len(made.line)} characters, more than cron takes: shorten the task.")
    return made


def entries(text: str) -> list[Entry]:
    """ga's entries in a crontab, in order (`\\%` is how a crontab writes a `%` of the command)."""
    found = (_ENTRY.match(line) for line in text.splitlines() if not line.lstrip().startswith("#"))
    return [Entry(name=m["name"], when=m["when"], command=m["command"].replace("\\%", "%")) for m in found if m]


def without(text: str, name: str) -> str:
    """The crontab without the entries of job `name`; every other line as it was."""
    kept = [line for line in text.splitlines() if not ((m := _ENTRY.match(line)) and m["name"] == name)]
    return "".join(f"{line}\n" for line in kept)


def crontab() -> str | None:
    return shutil.which("crontab")


def read_crontab(program: str) -> str:
    proc = subprocess.run([program, "-l"], capture_output=True, text=True, timeout=30, check=False)
    if proc.returncode != 0 and "no crontab" not in proc.stderr.lower():
        raise ConfigError(f"`crontab -l` failed: {proc.stderr.strip()}")
    return proc.stdout if proc.returncode == 0 else ""


def write_crontab(program: str, text: str) -> None:
    proc = subprocess.run([program, "-"], input=text, capture_output=True, text=True, timeout=30, check=False)
    if proc.returncode != 0:
        raise ConfigError(f"crontab refused the new table, which is left as it was: {proc.stderr.strip()}")


def systemd_units(job: Entry) -> tuple[str, str]:
    """A service and a timer that do what the entry does, for a machine with systemd but no crontab."""
    words = " ".join(_unit_quote(w) for w in job.argv() if not w.startswith(">>") and w != "2>&1")
    calendar = job.when[1:].replace("midnight", "daily").replace("annually", "yearly") if job.when.startswith(
        "@") else on_calendar(job.when)
    service = (f"[Unit]\nDescription=ga job {job.name}\n\n[Service]\nType=oneshot\nExecStart=/usr/bin/env {words}\n"
               "KillMode=process\n")
    timer = (f"[Unit]\nDescription=ga job {job.name}\n\n[Timer]\nOnCalendar={calendar}\n\n"
             "[Install]\nWantedBy=timers.target\n")
    return service, timer


def on_calendar(schedule: str) -> str:
    """systemd's OnCalendar= for a five-field cron schedule (numbers, lists, ranges and steps)."""
    minute, hour, day, month, weekday = (f.replace("*/", "0/" if i < 2 else "1/").replace("-", "..")
                                         for i, f in enumerate(schedule.split()))
    days = ",".join("..".join(_DAYS[int(d)] if d.isdigit() else d[:3].capitalize() for d in item.split(".."))
                    for item in weekday.split(","))
    return f"{'' if weekday == '*' else days + ' '}*-{month}-{day} {hour}:{minute}:00"


def _unit_quote(word: str) -> str:
    """One word of ExecStart=: double-quoted, with systemd's specifiers (%) and variables ($) kept literal."""
    escaped = word.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'
