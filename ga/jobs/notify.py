"""GA_NOTIFY=COMMAND: told once when a run ends or pauses, with one JSON object on stdin.

    {"event": "end" | "pause", "run_id", "status", "task", "answer" | "question" + "candidates", "usage",
     "tool_calls", "exit_code", "run_dir", "workdir"}

ga hands the event to a small watchdog process (this file, run as a script) and returns at once, so a notifier
that fails or hangs never holds up or hurts the run. The watchdog runs COMMAND with /bin/sh, gives it
GA_NOTIFY_TIMEOUT seconds (default 30), then kills its process group; what went wrong goes to RUN_DIR/notify.log."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

DEFAULT_TIMEOUT = 30.0
_LOG_CHARS = 2000


def payload(*, event: str, run_id: str, status: str, exit_code: int, state: dict, answer: str,
            question: dict | None, usage: dict, tool_calls: int, run_dir: Path) -> dict:
    body: dict = {"event": event, "run_id": run_id, "status": status, "task": state.get("task", "")}
    if question:
        body.update(question=question.get("question", ""), candidates=question.get("candidates", []))
    else:
        body["answer"] = answer
    body.update(verified=state.get("verified"), usage=usage, tool_calls=tool_calls, exit_code=exit_code,
                run_dir=str(run_dir), workdir=state.get("workdir"))
    return body


def send(body: dict, run_dir: Path, env: dict[str, str] | None = None) -> bool:
    """Hand one event to the watchdog; never raises, never waits. False when GA_NOTIFY is not set."""
    env = dict(os.environ if env is None else env)
    if not env.get("GA_NOTIFY", "").strip():
        return False
    from ga.tooling.redact import redact_data  # here: the watchdog runs this file without the ga package

    body = redact_data(body)  # the notifier is a program of the user's choice: what leaves ga carries no secret
    try:
        fd, path = tempfile.mkstemp(dir=run_dir, prefix=".notify-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(body, f, ensure_ascii=False, default=str)
        # the watchdog is this file run on its own (-I -S: no site, no ga package): it starts in a few milliseconds
        proc = subprocess.Popen([sys.executable, "-I", "-S", __file__, path, str(run_dir.resolve())], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True, close_fds=True)
    except OSError as e:
        _log(run_dir, f"notification not sent: {e}")
        return False
    threading.Thread(target=proc.wait, daemon=True).start()  # reaped if this process lives on (the scheduler)
    return True


def deliver(path: Path, run_dir: Path, command: str, timeout: float) -> int:
    """The watchdog: run the notifier with the event on stdin, within `timeout` seconds."""
    try:
        with open(path, "rb") as stdin:
            proc = subprocess.Popen(["/bin/sh", "-c", command], stdin=stdin, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, start_new_session=True, cwd=run_dir)
    except OSError as e:
        _log(run_dir, f"notifier {command!r} could not start: {e}")
        return 1
    finally:
        path.unlink(missing_ok=True)
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        _log(run_dir, f"notifier {command!r} killed after {timeout:g} s")
        return 1
    if proc.returncode:
        text = err.decode(errors="replace").strip()[-_LOG_CHARS:]
        _log(run_dir, f"notifier {command!r} exited {proc.returncode}" + (f": {text}" if text else ""))
    return proc.returncode


def _log(run_dir: Path, line: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(run_dir / "notify.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}\n")


def main(argv: list[str] | None = None) -> int:
    path, run_dir = map(Path, (sys.argv[1:] if argv is None else argv)[:2])
    try:
        timeout = float(os.environ.get("GA_NOTIFY_TIMEOUT") or DEFAULT_TIMEOUT)
    except ValueError:
        timeout = DEFAULT_TIMEOUT
    return deliver(path, run_dir, os.environ.get("GA_NOTIFY", ""), timeout)


if __name__ == "__main__":
    sys.exit(main())
