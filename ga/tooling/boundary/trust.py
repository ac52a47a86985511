"""What a run runs with, sealed: a resume believes the settings in state.json only under their seal.

state.json can be edited by anything that runs as the user (the model's file tools, code run without the sandbox,
another program), and a resume that believed `"sandbox": false` written there ran the model's next command on the
host. So the settings that bound a run (KEPT and its endpoint) are kept twice: as plain keys, which readers use, and
as a sealed copy (state["sealed"]: the values and their HMAC-SHA256 under a key in GA_HOME/.run-seal-key, 0600,
hidden from sandboxed code like the rest of GA_HOME but sop/). A resume runs with the sealed copy: an edit of the
plain keys is ignored (and said). Where no seal holds (the copy was edited too, or an older ga made the run) it takes
the strictest it can: the sandbox on when it works, plan mode unless the state names confirm, no extra paths, the
endpoint as configured in this shell, and a workspace or a check it cannot vouch for must be given again (--workdir,
--check). A flag given on the resume always wins, and what the resume runs with is sealed again.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from ga.config import Settings
from ga.errors import ConfigError
from ga.invocation import invocation
from ga.tooling.encoding import dumps
from ga.tooling.redact import redact_data


class Run(Protocol):
    """What sealing reads of a run (ga.runs.folder.Run, which seals new runs: so it is not imported here)."""

    folder: Path
    id: str
    state: dict

KEPT = ("workdir", "model", "mode", "sandbox", "allow_paths", "learn", "check")
"""Settings a resumed run keeps from its first invocation unless their flags are given again."""
SEALED = (*KEPT, "endpoint")
KEY_FILE = ".run-seal-key"
"""In GA_HOME, beside runs/ (whose entries are runs only)."""
KEY_BYTES = 32
UNTRUSTED = "its state.json was changed after the run started (or an older ga made it), so ga does not trust it"


def record(settings: Settings) -> dict:
    """The sealed settings as state.json keeps them (the endpoint without its key)."""
    kept = {k: getattr(settings, k) for k in KEPT}
    kept.update(workdir=str(settings.workdir), allow_paths=[str(p) for p in settings.allow_paths],
                endpoint={"base_url": settings.base_url, "profile": settings.profile})
    return kept


def seal(runs_dir: Path, run_id: str, state: dict) -> None:
    """Seal the settings in `state` as they will be written (save_state redacts them the same way): a copy of them,
    and its HMAC, under state["sealed"]."""
    key = _key(runs_dir, create=True)
    values = json.loads(dumps(redact_data({k: state.get(k) for k in SEALED})))
    state["sealed"] = {"settings": values, "mac": _mac(key, run_id, values) if key else ""}


def sealed_settings(runs_dir: Path, run_id: str, state: dict) -> dict | None:
    """The settings ga sealed for this run (as read from disk), or None when there is no seal that holds."""
    copy, key = state.get("sealed"), _key(runs_dir, create=False)
    if not (isinstance(copy, dict) and isinstance(copy.get("mac"), str) and isinstance(copy.get("settings"), dict)
            and key):
        return None
    values = copy["settings"]
    if set(values) != set(SEALED) or not hmac.compare_digest(copy["mac"], _mac(key, run_id, values)):
        return None
    return values


def remembered_endpoint(run: Run) -> dict:
    """The endpoint a resumed run started with ({"base_url", "profile"}), or {} when its seal does not hold."""
    values = sealed_settings(run.folder.parent, run.id, run.state) or {}
    return values.get("endpoint") if isinstance(values.get("endpoint"), dict) else {}


def resumed(run: Run, settings: Settings, given: set[str], *,
            sandbox_default: Callable[[], bool]) -> tuple[Settings, str]:
    """The settings a resume runs with, and a notice for the user ("" when state.json was as sealed); the run's state
    then records them, sealed. `given`: the KEPT settings whose flags this invocation gave; `sandbox_default`: whether
    a new run would be sandboxed (asked only when no seal holds)."""
    recorded = sealed_settings(run.folder.parent, run.id, run.state)
    if recorded is not None:
        edited = [k for k in SEALED if run.state.get(k) != recorded[k]]
        changes = _as_recorded(run.id, recorded, given)
        notice = (f"run {run.id}: its state.json was changed after the run started ({', '.join(edited)}): the "
                  "changes are ignored, the run goes on with the settings it was sealed with." if edited else "")
    else:
        changes, notice = _strictest(run, settings, given, sandbox_default)
    effective = dataclasses.replace(settings, **changes)
    run.state.update(record(effective))
    seal(run.folder.parent, run.id, run.state)
    return effective, notice


def _as_recorded(run_id: str, recorded: dict, given: set[str]) -> dict:
    changes = {k: recorded[k] for k in KEPT if k not in given and recorded.get(k) not in (None, "")}
    if "allow_paths" in changes:
        changes["allow_paths"] = [Path(p) for p in changes["allow_paths"]]
    if "workdir" in changes:
        changes["workdir"] = Path(changes["workdir"])
        if not changes["workdir"].is_dir():
            raise ConfigError(f"Run {run_id} worked in {changes['workdir']}, which no longer exists: pass --workdir.")
    return changes


def _strictest(run: Run, settings: Settings, given: set[str], sandbox_default: Callable[[], bool]) -> tuple[dict, str]:
    state, changes = run.state, {}
    named = state.get("workdir")
    if "workdir" not in given and isinstance(named, str) and named and Path(named) != settings.workdir:
        raise ConfigError(f"Run {run.id}: {UNTRUSTED}, nor the workspace it names ({named}). See what the run did "
                          f"({invocation()} runs show {run.id}); to resume it there, give --workdir with that folder.")
    if "check" not in given and state.get("check"):
        raise ConfigError(f"Run {run.id}: {UNTRUSTED}, nor the check it names ({str(state['check'])[:200]!r}). See "
                          f"what the run did ({invocation()} runs show {run.id}); to resume it, give its check again: "
                          "--check CMD.")
    if "sandbox" not in given:
        changes["sandbox"] = state.get("sandbox") is True or sandbox_default()
        changes["sandbox_why"] = "as for a new run: the run's state.json is not trusted"
    if "mode" not in given:  # the mode it began in is unknown: plan, unless the state names confirm (as strict)
        changes["mode"] = state["mode"] if state.get("mode") in ("plan", "confirm") else "plan"
    if changes.get("mode") == "plan" and "check" in given:
        raise ConfigError(f"Run {run.id}: {UNTRUSTED}, nor its mode, so it would resume in plan mode, where a check "
                          "has nothing to verify: give --mode default (or --confirm) with --check.")
    if "learn" not in given:
        changes["learn"] = settings.learn and state.get("learn") is not False
    if "model" not in given and isinstance(state.get("model"), str) and state["model"]:
        changes["model"] = state["model"]
    effective = dataclasses.replace(settings, **changes)
    paths = ", ".join(map(str, effective.allow_paths)) or "no path outside the workspace"
    notice = (f"run {run.id}: {UNTRUSTED}: resuming with the sandbox {'on' if effective.sandbox else 'off'}, "
              f"{effective.mode} mode, {paths}, the endpoint as configured in this shell"
              f"{', check: ' + effective.check if effective.check else ''}. To choose otherwise, give the flags again "
              "(--no-sandbox, --mode default, --allow-path DIR, --profile NAME).")
    return changes, notice


def _mac(key: bytes, run_id: str, values: dict) -> str:
    text = json.dumps([run_id, values], sort_keys=True, ensure_ascii=True, separators=(",", ":"))
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def _key(runs_dir: Path, *, create: bool) -> bytes | None:
    """The sealing key (made on first use; the first ga to link its key in wins), or None when there is none that can
    be trusted: a link, a file another user owns or others can read."""
    path = runs_dir.parent / KEY_FILE
    try:
        return _read_key(path)
    except FileNotFoundError:
        if not create:
            return None
    except OSError:
        return None
    tmp = path.with_name(f"{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(secrets.token_bytes(KEY_BYTES))
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
        return _read_key(path)
    except OSError:
        return None


def _read_key(path: Path) -> bytes | None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
            return None
        key = f.read(KEY_BYTES + 1)
    return key if len(key) == KEY_BYTES else None
