"""A mailbox per run: plain files in the run folder, so any program can steer a run.

RUN_DIR/inbox/NAME.KIND   a message to the run. KIND is `answer` (to the question the run paused on), `message`
                          (shown to the model as the human's message at the next turn boundary) or `stop` (end the
                          run cleanly after the current tool). Write it under a name starting with "." and rename it
                          into place, so the run never reads half a file:
                            echo "use b.txt" > inbox/.tmp && mv inbox/.tmp inbox/$(date +%s%N).answer
                          Messages are read in name order. A message is consumed exactly once: the trajectory event
                          that carries its effect names it, and only then is the file moved to inbox/done/.
RUN_DIR/outbox/           question.json while the run waits for an answer; result.json once it ended (the --json
                          object)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ga.errors import ConfigError, Interrupted
from ga.invocation import invocation
from ga.runs import liveness
from ga.runs.disk import atomic_write
from ga.runs.folder import Run
from ga.tooling.redact import redact_data

KINDS = ("answer", "message", "stop")
ARCHIVES = ("done", "rejected")
"""Folders inside inbox/ where consumed and refused messages go."""
MAX_CHARS = 20_000
"""A message longer than this reaches the model cut (the whole file is kept in inbox/done/)."""
MESSAGE = "Message from the user while you work: {text}"
_READ_CAP = MAX_CHARS * 4
"""Bytes read of a message: MAX_CHARS characters at most 4 bytes each."""


class StopRequested(Interrupted):
    """A stop request from the mailbox: the run ends cleanly and can be resumed."""


@dataclass(kw_only=True)
class Mail:
    id: str
    """The file name: unique within the run's inbox."""
    kind: str
    path: Path
    written: float
    """The file's modification time."""

    def text(self) -> str:
        """The message, read without following a link (one swapped in after the listing is not read) and at most
        MAX_CHARS of it: a message linked to a 1 GiB file costs what a short one does."""
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return ""
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return ""
            data = f.read(_READ_CAP + 1)
        text = data[:_READ_CAP].decode("utf-8", errors="replace").strip()
        if len(data) > _READ_CAP:
            return f"{text[:MAX_CHARS]}\n[… the message goes on: {st.st_size:,} bytes in all, in {self.path.name}]"
        if len(text) > MAX_CHARS:
            text = f"{text[:MAX_CHARS]}\n[… {len(text) - MAX_CHARS} more characters in {self.path.name}]"
        return text


def post(folder: Path, kind: str, text: str = "") -> Path:
    """Put one message into a run's inbox (written whole under a hidden name, then renamed into place)."""
    if kind not in KINDS:
        raise ConfigError(f"Unknown mailbox message kind {kind!r}: use one of {', '.join(KINDS)}.")
    inbox = folder / "inbox"
    inbox.mkdir(mode=0o700, exist_ok=True)
    path = inbox / f"{time.time_ns()}-{secrets.token_hex(3)}.{kind}"
    atomic_write(path, text)
    return path


def write_outbox(run: Run, result: dict, question: dict | None) -> None:
    """After a run ends or pauses: the result (the --json object), and the question while one waits for an answer."""
    if run.gone:
        return
    outbox = run.folder / "outbox"
    outbox.mkdir(mode=0o700, exist_ok=True)
    result, question = redact_data(result), redact_data(question)
    if question:
        waiting = {"run_id": run.id, **question, "asked": time.time(),
                   "answer_with": f'{invocation()} answer {run.id} "..."'}
        atomic_write(outbox / "question.json", json.dumps(waiting, ensure_ascii=False, indent=1))
    atomic_write(outbox / "result.json", json.dumps(result, ensure_ascii=False, indent=1))


def clear_outbox(run: Run) -> None:
    """A run that starts again has no result yet and no question waiting (it asks again if it must)."""
    for name in ("question.json", "result.json"):
        (run.folder / "outbox" / name).unlink(missing_ok=True)


class Inbox:
    """The runtime's side: read at each turn boundary by the agent loop."""

    def __init__(self, run: Run, consumed: set[str]):
        self.run = run
        self.folder = run.folder / "inbox"
        self.consumed = set(consumed)
        self.claimed: list[Mail] = []
        self.since = liveness.started(os.getpid()) or time.time()
        """A stop request written before this process started was meant for an earlier one: it is not obeyed."""

    def pending(self) -> list[Mail]:
        """Unconsumed messages in name order; files already acted on are archived on the way."""
        try:
            with os.scandir(self.folder) as entries:
                listed = sorted((e for e in entries if not e.name.startswith(".") and e.name not in ARCHIVES),
                                key=lambda e: e.name)
        except FileNotFoundError:
            return []
        out = []
        for entry in listed:
            regular = entry.is_file(follow_symlinks=False)  # a link, a folder, a FIFO: never read, never left lying
            mail = Mail(id=entry.name, kind=entry.name.rpartition(".")[2] if regular else "", path=Path(entry.path),
                        written=entry.stat().st_mtime if regular else 0)
            if regular and mail.id in self.consumed:
                self._archive(mail)
            elif mail.kind not in KINDS:
                self._archive(mail, "rejected")
                why = ("name it NAME.answer, NAME.message or NAME.stop" if regular
                       else "only a regular file is a message (moved to inbox/rejected/)")
                self.run.append({"type": "notice",
                                 "text": f"inbox {'file' if regular else 'entry'} {mail.id} ignored: {why}"})
            elif all(c.id != mail.id for c in self.claimed):
                out.append(mail)
        return out

    def answer_for(self, given: str | None) -> tuple[str | None, str | None]:
        """At start: the answer to use (text, mail id): the one given on the command line, else the first answer
        or message waiting in the inbox. The caller records its effect with the mail id; it is archived later."""
        if given is not None:
            return given, None
        mail = next((m for m in self.pending() if m.kind != "stop"), None)
        if mail is None:
            return None, None
        self.claimed.append(mail)
        return mail.text(), mail.id

    def deliver(self, record: Callable[..., None]) -> None:
        """At a turn boundary: the human's messages become user messages (record(message, mail=id) keeps each in
        the trajectory); a stop request ends the run."""
        for mail in self.claimed:  # their effect was recorded when the pending calls were finished
            self.consumed.add(mail.id)
            self._archive(mail)
        self.claimed.clear()
        for mail in self.pending():
            if mail.kind == "stop":
                self._stop(mail)
            else:
                record({"role": "user", "content": MESSAGE.format(text=mail.text())}, mail=mail.id)
                self.consumed.add(mail.id)
                self._archive(mail)

    def stop_if_asked(self) -> None:
        """Before a tool call starts: obey a stop request now (the calls not started run on resume)."""
        for mail in self.pending():
            if mail.kind == "stop":
                self._stop(mail)

    def _stop(self, mail: Mail) -> None:
        stale = mail.written < self.since
        event = {"type": "mail", "mail": mail.id, "kind": "stop"}
        self.run.append({**event, "ignored": "written before this process started"} if stale else event)
        self.consumed.add(mail.id)
        self._archive(mail)
        if not stale:
            resume = f"{invocation()} --resume {self.run.id}"
            raise StopRequested(f"Stopped on request; the run is saved. Resume with: {resume}")

    def _archive(self, mail: Mail, where: str = "done") -> None:
        target = self.folder / where
        with contextlib.suppress(OSError):  # already moved (or unmovable): the trajectory still says it was consumed
            target.mkdir(mode=0o700, exist_ok=True)
            os.replace(mail.path, target / mail.id)
