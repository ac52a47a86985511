"""Run folders: an append-only trajectory (the source of truth) and a small state file written atomically.

GA_HOME/runs/<run_id>/           (folders 0700, files 0600: private to the user; secrets redacted)
  trajectory.jsonl   one event per line: message, call_start, result, status, notice
  state.json         status, task, owner process (pid, start time), turns and usage, tool state (checkpoint,
                     file stamps), escalation; rewritten atomically
  outputs/           full outputs of truncated tool results
  inbox/ outbox/     the mailbox (mailbox.py); heartbeat: touched while the run makes progress (liveness.py)
  output.log         what a background run (--detach) printed"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from ga.errors import AgentStop, ConfigError
from ga.invocation import invocation
from ga.protocols import Usage
from ga.runs import liveness
from ga.runs.disk import atomic_write, hold_lock, private_folder
from ga.tooling.encoding import dumps
from ga.tooling.redact import redact_data
from ga.tooling.spec import ran


class RunFolderGone(AgentStop):
    """The run's folder vanished under it: the run stops, and ends failed."""


@dataclass(kw_only=True)
class History:
    """What the trajectory says happened, rebuilt on resume."""

    messages: list[dict] = field(default_factory=list)
    results: dict[str, dict] = field(default_factory=dict)
    """Recorded tool results by call id."""
    started: set[str] = field(default_factory=set)
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    mail: set[str] = field(default_factory=set)
    """Mailbox messages already acted on (their effect is in the trajectory): never delivered twice."""


class Run:
    def __init__(self, folder: Path, state: dict):
        self.folder = folder
        self.state = state
        self._trajectory = folder / "trajectory.jsonl"
        self._lock: int | None = None
        self._torn_checked = False
        self.gone = False
        """The folder was deleted under the run: nothing more is written (see _check_folder)."""

    @property
    def id(self) -> str:
        return self.folder.name

    @classmethod
    def create(cls, runs_dir: Path, task: str, meta: dict) -> Run:
        folder = runs_dir / (time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3))
        try:
            if not runs_dir.parent.exists():
                private_folder(runs_dir.parent)  # GA_HOME, when ga creates it
            private_folder(runs_dir)
            folder.mkdir(mode=0o700)
            state = {"task": task, "status": "running", "created": time.time(), **meta, **liveness.owner()}
            run = cls(folder, {**state, "tool_state": {}})
            run.save_state()
        except OSError as e:
            raise ConfigError(f"Cannot create a run folder in {runs_dir}: {e.strerror or e}. "
                              "Set GA_HOME to a writable folder.") from None
        return run

    @classmethod
    def open(cls, runs_dir: Path, run_id: str) -> Run:
        """The run with this id, or with this unique id prefix."""
        folder = runs_dir / resolve_id(runs_dir, run_id)
        try:
            state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError) as e:  # RecursionError: nested thousands deep
            raise ConfigError(f"Run {folder.name} has an unreadable state file: {type(e).__name__}: "
                              f"{str(e)[:200]}") from None
        if not isinstance(state, dict):
            raise ConfigError(f"Run {folder.name} has a state file that is not a JSON object "
                              f"({type(state).__name__}): it cannot be resumed.")
        return cls(folder, state)

    def save_state(self) -> None:
        self.state["updated"] = time.time()
        if self.gone:
            return
        try:
            atomic_write(self.folder / "state.json", dumps(redact_data(self.state)))
        except FileNotFoundError:
            self._check_folder()
            raise

    def lock(self) -> None:
        """Own the run for this process: a second ga on the same run is refused, not interleaved."""
        try:
            self._lock = hold_lock(self.folder / "lock")
        except BlockingIOError as e:
            raise ConfigError(f"Run {self.id} is in use by another ga process (pid {e.args[0]}).") from None
        self.state.update(liveness.owner())  # readers tell a live run from a crashed one by this process
        self.save_state()

    def discard(self) -> None:
        """Remove the run folder: only for a run that never started (nothing in it is worth keeping)."""
        shutil.rmtree(self.folder, ignore_errors=True)

    def unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing releases the flock
            self._lock = None

    def append(self, event: dict) -> None:
        """One JSON line, written with a single write call and flushed, so a kill leaves at most a torn tail."""
        line = dumps(redact_data({"t": round(time.time(), 3), **event})) + "\n"
        if self.gone:
            return
        try:
            fd = os.open(self._trajectory, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o600)
        except FileNotFoundError:
            self._check_folder()
            raise
        with open(fd, "a+b") as f:
            if not self._torn_checked:  # a line torn by an earlier kill: start ours on a fresh line
                self._torn_checked = True
                if f.tell() and (f.seek(-1, os.SEEK_END), f.read(1))[1] != b"\n":
                    line = "\n" + line
            f.write(line.encode("utf-8"))
            f.flush()

    def _check_folder(self) -> None:
        """The run folder was deleted under the run: it stops once; later writes are no-ops."""
        if self.folder.is_dir():
            return
        self.gone = True
        raise RunFolderGone(f"The run's folder {self.folder} was deleted while the run went on (was GA_HOME "
                            "removed?), so nothing more of it can be saved: the run stops here and cannot be resumed. "
                            "What it did in the workspace stays.")

    def events(self) -> list[dict]:
        if not self._trajectory.exists():
            return []
        events = []
        with open(self._trajectory, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    event = json.loads(line)
                except (ValueError, RecursionError):
                    continue  # a line torn by a kill (appends after it start on a fresh line), or not ga's
                if isinstance(event, dict):
                    events.append(event)
        return events

    def history(self) -> History:
        """Messages in the order the model must see them; tool results follow their call's order."""
        h = History()
        for event in self.events():
            kind = event.get("type")
            if kind == "message" and isinstance(event.get("message"), dict):
                h.messages.append(event["message"])
                h.usage.add(_usage(event))
            elif kind in ("summary", "memory"):  # side requests (the context's summary; older runs' distillation)
                h.usage.add(_usage(event))
            elif kind == "call_start" and isinstance(event.get("id"), str):
                h.started.add(event["id"])
            elif kind == "result" and isinstance(event.get("id"), str):
                h.results[event["id"]] = event
                h.tool_calls += ran(event["details"] if isinstance(event.get("details"), dict) else {})
            # a mailbox message is consumed by the one event that carries its effect
            if mail := event.get("mail") or (event.get("details") or {}).get("mail"):
                h.mail.add(mail)
        h.messages = _with_results(h.messages, h.results)
        return h


def _usage(event: dict) -> Usage:
    """An event's usage; a hand-edited or foreign one counts what it can (whole numbers of known fields)."""
    given = event.get("usage")
    known = {f.name for f in dataclasses.fields(Usage)}
    return Usage(**{k: v for k, v in given.items() if k in known and type(v) is int}) if isinstance(given, dict) \
        else Usage()


def _with_results(messages: list[dict], results: dict[str, dict]) -> list[dict]:
    out: list[dict] = []
    for message in messages:
        out.append(message)
        for call in message.get("tool_calls") or []:
            if call["id"] in results:
                out.append(tool_message(call["id"], results[call["id"]]["content"]))
    return out


def tool_message(call_id: str, content: str) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content}


def run_ids(runs_dir: Path) -> list[str]:
    """Every run's id, oldest first (ids start with their creation time)."""
    try:
        with os.scandir(runs_dir) as entries:
            return sorted(e.name for e in entries if e.is_dir() and not e.name.startswith("."))
    except FileNotFoundError:
        return []


def resolve_id(runs_dir: Path, given: str) -> str:
    """A run id from an id or a unique prefix of one; a clear error otherwise."""
    if given and "/" not in given and given not in (".", "..") and (runs_dir / given / "state.json").is_file():
        return given
    known = run_ids(runs_dir)
    matches = [i for i in known if given and i.startswith(given)] if "/" not in given else []
    if len(matches) == 1:
        return matches[0]
    if matches:
        shown = ", ".join(matches[:5]) + (", ..." if len(matches) > 5 else "")
        raise ConfigError(f"Run id prefix {given!r} matches {len(matches)} runs ({shown}): give more of the id.")
    recent = ", ".join(reversed(known[-3:])) or "none"  # newest first, as `runs` lists them
    raise ConfigError(f"No run {given!r} in {runs_dir} (recent runs: {recent}; list them with: {invocation()} runs).")


def read_state(folder: Path) -> dict | None:
    """A run's state file, or None when it is missing or unreadable (a listing skips such folders)."""
    try:
        with open(folder / "state.json", encoding="utf-8") as f:
            state = json.load(f)
    except (OSError, ValueError, RecursionError):
        return None
    return state if isinstance(state, dict) else None


def newest_run(runs_dir: Path, workdir: Path) -> str | None:
    """The id of the run in this workspace that was active last (for --continue / --last)."""
    found = [(float(state.get("updated") or state.get("created") or 0), run_id) for run_id in run_ids(runs_dir)
             if (state := read_state(runs_dir / run_id)) is not None and state.get("workdir") == str(workdir)]
    return max(found)[1] if found else None
