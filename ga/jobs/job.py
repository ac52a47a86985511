"""Scheduled jobs: GA_HOME/schedule/<job>.toml, fired by `python run.py schedule run` (a foreground daemon).

    task = "Summarise yesterday's new issues into notes/daily.md"
    cron = "0 3 * * *"          # local time (croniter syntax; a 6th field is seconds)   — or:  every = "6h"
    workdir = "/home/me/project"
    enabled = true
    max_turns = 40              # optional limits, as the flags of the same name; model = "...", profile = "..." too
    check = "make test"         # optional: what done means (--check): the run is done only when it exits 0

Every firing is one line in GA_HOME/schedule/history/<job>.jsonl: `firing` (written before the run starts, so a
daemon killed right then never fires that slot twice), then `fired` with the run id, `skipped` (the job's last run
was still running) or `failed` (the run could not start), and later `ended` with the run's status and tokens. A
slot is a time the job was due. After downtime, the missed slots fire once, as the latest of them, not N times.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import tomlkit
from croniter import CroniterError, croniter
from dateutil.tz import tzlocal

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from ga.errors import ConfigError
from ga.runs.disk import atomic_write

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_EVERY = re.compile(r"(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|d)?", re.IGNORECASE)
_UNITS = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_KEYS = {"task": str, "cron": str, "every": (str, int, float), "workdir": str, "enabled": bool, "model": str,
         "profile": str, "max_turns": int, "max_tokens": int, "max_time": (int, float), "check": str}
TAIL_BYTES = 65536
"""How much of a job's history is read to find its last slot and run (the file only grows)."""
MISSED_CAP = 100_000


def parse_every(value: str | float) -> float:
    """An interval: seconds as a number, or "90s", "15m", "6h", "1d"."""
    match = _EVERY.fullmatch(str(value).strip())
    seconds = float(match[1]) * _UNITS[(match[2] or "").lower()] if match else 0
    if seconds <= 0 or isinstance(value, bool):
        raise ConfigError(f"every = {value!r} is not an interval: use seconds or a number with s, m, h or d (\"6h\")")
    return seconds


@dataclass(kw_only=True)
class Job:
    name: str
    task: str
    workdir: Path
    cron: str = ""
    """A cron expression in local time; empty when `every` is used."""
    every: float = 0
    """Seconds between firings; 0 when `cron` is used."""
    enabled: bool = True
    model: str = ""
    profile: str = ""
    """A [profiles.NAME] of GA_HOME/config.toml (--profile): the endpoint the job's runs use."""
    max_turns: int | None = None
    max_tokens: int | None = None
    max_time: float | None = None
    check: str = ""
    """Run when the model answers (--check): the run is done only when it exits 0."""

    @property
    def when(self) -> str:
        return self.cron or f"every {_human_seconds(self.every)}"

    def next_after(self, t: float) -> float:
        if self.cron:
            return croniter(self.cron, datetime.fromtimestamp(t, tz=tzlocal())).get_next(float)
        return t + self.every

    def catch_up(self, base: float, now: float) -> tuple[float, int]:
        """The latest slot due by `now` after `base`, and how many earlier slots it stands in for."""
        if self.every:
            n = math.floor((now - base) / self.every)
            return base + n * self.every, max(0, n - 1)
        slot = croniter(self.cron, datetime.fromtimestamp(now + 1e-3, tz=tzlocal())).get_prev(float)
        it, missed = croniter(self.cron, datetime.fromtimestamp(base, tz=tzlocal())), 0
        while it.get_next(float) < slot and missed < MISSED_CAP:
            missed += 1
        return slot, missed

    def run_args(self) -> list[str]:
        """The `run.py run` arguments of one firing."""
        args = ["--workdir", str(self.workdir)]
        for flag, value in (("--model", self.model), ("--profile", self.profile), ("--max-turns", self.max_turns),
                            ("--max-tokens", self.max_tokens), ("--max-time", self.max_time),
                            ("--check", self.check)):
            if value not in (None, ""):
                args += [flag, str(value)]
        return [*args, "--", self.task]  # a task starting with "-" is still the task

    def toml(self) -> str:
        values: dict[str, object] = {"task": self.task, **({"cron": self.cron} if self.cron else {}),
                                     **({"every": _human_seconds(self.every)} if self.every else {}),
                                     "workdir": str(self.workdir), "enabled": self.enabled}
        values.update({k: v for k in ("model", "profile", "max_turns", "max_tokens", "max_time", "check")
                       if (v := getattr(self, k)) not in (None, "")})
        return tomlkit.dumps(values)


def _human_seconds(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{int(seconds // size)}{unit}"
    return f"{seconds:g}s"


def written(folder: Path, job: Job) -> float:
    """When the job's file was written: a job never fired counts its first slot from there."""
    try:
        return (folder / f"{job.name}.toml").stat().st_mtime
    except OSError:
        return time.time()


def load_job(path: Path) -> Job:
    """One job file, checked: a clear error names the file and the field."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: not readable: {e}") from None
    return parse_job(path.stem, text, str(path))


def parse_job(name: str, text: str, where: str) -> Job:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{where}: not valid TOML: {e}") from None
    unknown = sorted(set(data) - set(_KEYS))
    if unknown:
        raise ConfigError(f"{where}: unknown field(s) {', '.join(unknown)}; known: {', '.join(_KEYS)}")
    for key, kind in _KEYS.items():
        if key in data and (not isinstance(data[key], kind) or (kind is int and isinstance(data[key], bool))):
            raise ConfigError(f"{where}: {key} has the wrong type ({type(data[key]).__name__})")
    if not str(data.get("task", "")).strip():
        raise ConfigError(f"{where}: task is missing or empty")
    if ("cron" in data) == ("every" in data):
        raise ConfigError(f"{where}: give exactly one of cron = \"...\" or every = \"...\"")
    if "cron" in data and (problem := cron_problem(data["cron"])):
        raise ConfigError(f"{where}: cron = {data['cron']!r} {problem}")
    for key in ("max_turns", "max_tokens", "max_time"):
        if not 0 <= data.get(key, 0) < math.inf:  # NaN fails both
            raise ConfigError(f"{where}: {key} must be a number, 0 (no limit) or more")
    workdir = Path(data.get("workdir") or ".").expanduser()
    if not workdir.is_absolute():
        raise ConfigError(f"{where}: workdir must be an absolute path")
    return Job(name=name, task=data["task"], workdir=workdir, cron=data.get("cron", ""),
               every=parse_every(data["every"]) if "every" in data else 0, enabled=data.get("enabled", True),
               model=data.get("model", ""), profile=data.get("profile", ""), max_turns=data.get("max_turns"),
               max_tokens=data.get("max_tokens"), max_time=data.get("max_time"), check=data.get("check", "").strip())


def cron_problem(expr: str) -> str | None:
    """Why `expr` cannot schedule anything, or None. A well-formed expression may still name no date at all
    (`0 0 30 2 *`, 30 February): croniter accepts it and fails only when asked for the next time."""
    if not croniter.is_valid(expr):
        return 'is not a valid cron expression (e.g. "0 3 * * *")'
    try:
        croniter(expr, datetime.now(tz=tzlocal())).get_next(float)
    except (CroniterError, ValueError, OverflowError):
        return "never fires: no date matches it (such as 30 February)"
    return None


def load_jobs(folder: Path) -> tuple[list[Job], list[str]]:
    """Every job in the folder, and the errors of the files that are not jobs (they are skipped, not fatal)."""
    jobs, errors = [], []
    for path in sorted(folder.glob("*.toml")):
        try:
            jobs.append(load_job(path))
        except ConfigError as e:
            errors.append(str(e))
    return jobs, errors


def save_job(folder: Path, job: Job) -> Path:
    if not NAME.fullmatch(job.name):
        raise ConfigError(f"Job name {job.name!r}: use letters, digits, '.', '_' and '-' (at most 64).")
    path = folder / f"{job.name}.toml"
    text = job.toml()
    parse_job(job.name, text, str(path))  # what is written reads back as a valid job, or nothing is written
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    atomic_write(path, text)
    return path


class History:
    """GA_HOME/schedule/history/<job>.jsonl: one line per firing event."""

    def __init__(self, folder: Path):
        self.folder = folder / "history"

    def append(self, job: str, record: dict) -> dict:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        record = {"t": round(time.time(), 3), "job": job, **record}
        fd = os.open(self.folder / f"{job}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
        return record

    def recent(self, job: str) -> list[dict]:
        """The newest records (the tail of the file; a torn last line is skipped)."""
        path = self.folder / f"{job}.jsonl"
        try:
            with open(path, "rb") as f:
                size = f.seek(0, os.SEEK_END)
                f.seek(max(0, size - TAIL_BYTES))
                lines = f.read().decode("utf-8", errors="replace").splitlines()
        except FileNotFoundError:
            return []
        if size > TAIL_BYTES:
            lines = lines[1:]  # the first line read is only the end of one
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                continue
        return out

    def last_slot(self, job: str) -> float | None:
        return next((float(r["slot"]) for r in reversed(self.recent(job)) if "slot" in r), None)

    def last_run(self, job: str) -> tuple[dict | None, dict | None]:
        """The last `fired` record and its `ended` record (None while the run has not been seen to end)."""
        records = self.recent(job)
        fired = next((r for r in reversed(records) if r.get("event") == "fired"), None)
        if fired is None:
            return None, None
        ended = next((r for r in records if r.get("event") == "ended" and r.get("run_id") == fired["run_id"]), None)
        return fired, ended
