"""Run folders: an append-only trajectory (the source of truth) and a small state file written atomically.

GA_HOME/runs/<run_id>/
  trajectory.jsonl   one event per line: message, call_start, result, status, notice
  state.json         status, task, tool state (checkpoint, file stamps), escalation; rewritten atomically
  outputs/           full outputs of truncated tool results
"""

from __future__ import annotations

import fcntl
import json
import os
import secrets
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ga.errors import ConfigError
from ga.protocols import Usage


def atomic_write(path: Path, text: str) -> None:
    """Write via a temp file in the same folder and rename: a reader never sees half a file."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def new_run_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)


@dataclass(kw_only=True)
class History:
    """What the trajectory says happened, rebuilt on resume."""

    messages: list[dict] = field(default_factory=list)
    results: dict[str, dict] = field(default_factory=dict)
    """Recorded tool results by call id."""
    started: set[str] = field(default_factory=set)
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0


class Run:
    def __init__(self, folder: Path, state: dict):
        self.folder = folder
        self.state = state
        self._trajectory = folder / "trajectory.jsonl"
        self._lock: int | None = None
        self._torn_checked = False

    @property
    def id(self) -> str:
        return self.folder.name

    @classmethod
    def create(cls, runs_dir: Path, task: str, meta: dict) -> Run:
        folder = runs_dir / new_run_id()
        try:
            folder.mkdir(parents=True)
            run = cls(folder, {"task": task, "status": "running", "created": time.time(), **meta, "tool_state": {}})
            run.save_state()
        except OSError as e:
            raise ConfigError(f"Cannot create a run folder in {runs_dir}: {e.strerror or e}. "
                              "Set GA_HOME to a writable folder.") from None
        return run

    @classmethod
    def open(cls, runs_dir: Path, run_id: str) -> Run:
        folder = runs_dir / run_id
        if not run_id or "/" in run_id or not (folder / "state.json").is_file():
            known = sorted(p.parent.name for p in runs_dir.glob("*/state.json")) if runs_dir.is_dir() else []
            recent = ", ".join(known[-3:]) or "none"
            raise ConfigError(f"No run {run_id!r} in {runs_dir} (recent runs: {recent}).")
        try:
            state = json.loads((folder / "state.json").read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as e:
            raise ConfigError(f"Run {run_id} has an unreadable state file: {e}") from None
        return cls(folder, state)

    def save_state(self) -> None:
        self.state["updated"] = time.time()
        atomic_write(self.folder / "state.json", json.dumps(self.state, ensure_ascii=False, default=str))

    def lock(self) -> None:
        """Own the run for this process: a second ga on the same run is refused, not interleaved."""
        fd = os.open(self.folder / "lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
            os.close(fd)
            raise ConfigError(f"Run {self.id} is in use by another ga process (pid {holder}).") from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._lock = fd

    def unlock(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing releases the flock
            self._lock = None

    def append(self, event: dict) -> None:
        """One JSON line, written with a single write call and flushed, so a kill leaves at most a torn tail."""
        line = json.dumps({"t": round(time.time(), 3), **event}, ensure_ascii=False, default=str) + "\n"
        with open(self._trajectory, "a+b") as f:
            if not self._torn_checked:  # a line torn by an earlier kill: start ours on a fresh line
                self._torn_checked = True
                if f.tell() and (f.seek(-1, os.SEEK_END), f.read(1))[1] != b"\n":
                    line = "\n" + line
            f.write(line.encode("utf-8"))
            f.flush()

    def events(self) -> list[dict]:
        if not self._trajectory.exists():
            return []
        events = []
        with open(self._trajectory, encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    events.append(json.loads(line))
                except json.JSONDecodeError:
                    continue  # a line torn by a kill; appends after it start on a fresh line
        return events

    def history(self) -> History:
        """Messages in the order the model must see them; tool results follow their call's order."""
        h = History()
        for event in self.events():
            kind = event.get("type")
            if kind == "message":
                h.messages.append(event["message"])
                h.usage.add(Usage(**event.get("usage", {})))
            elif kind == "summary":  # the context's side request: real spend
                h.usage.add(Usage(**event.get("usage", {})))
            elif kind == "call_start":
                h.started.add(event["id"])
            elif kind == "result":
                h.results[event["id"]] = event
                h.tool_calls += 1
        h.messages = _with_results(h.messages, h.results)
        return h


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
