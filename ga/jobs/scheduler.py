"""The scheduler daemon behind `python run.py schedule run`: fires each due job as a background run.

One tick: reload the job files (edits apply without a restart), record the end of runs that ended, and fire every
job whose next slot has come: once, however many slots were missed, and not while its last run is still running.
Runs start in their own session (ga/runs/detach.py), so stopping the daemon never stops a run.
"""

from __future__ import annotations

import math
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from ga.errors import ConfigError
from ga.jobs import notify
from ga.jobs.job import History, Job, load_jobs, written
from ga.runs.detach import DetachFailed, spawn
from ga.runs.disk import hold_lock
from ga.runs.folder import read_state
from ga.runs.liveness import effective_status


class Scheduler:
    def __init__(self, home: Path, *, say: Callable[[str], None] = print):
        self.folder = home / "schedule"
        self.runs_dir = home / "runs"
        self.history = History(self.folder)
        self.say = say
        self.children: list[subprocess.Popen] = []
        self.fired: list[tuple[str, str, subprocess.Popen | None]] = []
        """What this scheduler fired: (job, run id or why it could not start, the run's process)."""
        self._reported: set[str] = set()

    def serve(self, *, tick: float = 5.0, once: bool = False) -> None:
        """Fire due jobs until interrupted (or once). Only one scheduler serves a GA_HOME at a time."""
        lock = self._lock()
        try:
            self.say(f"scheduler serving {self.folder} (pid {os.getpid()})")
            while True:
                wake = self.tick()
                if once:
                    return
                time.sleep(max(0.05, min(tick, wake - time.time())))
        finally:
            os.close(lock)

    def tick(self, now: float | None = None) -> float:
        """One pass over the jobs; returns when the next one is due (seconds since the epoch)."""
        now = time.time() if now is None else now
        self.children = [c for c in self.children if c.poll() is None]  # reap runs that ended
        jobs, errors = load_jobs(self.folder)
        for error in errors:
            self._report_once(f"skipping a job file: {error}")
        wake = math.inf
        for job in jobs:
            try:
                wake = min(wake, self._tick_job(job, now))
            except Exception as e:  # one job's fault never stops the others
                self._report_once(f"{job.name}: skipped, it failed: {type(e).__name__}: {e}")
        return wake

    def _tick_job(self, job: Job, now: float) -> float:
        """Settle the job's last run, fire it if due; returns when it is due next (inf: disabled)."""
        self.settle(job)
        if not job.enabled:
            return math.inf
        base = self.history.last_slot(job.name)
        if base is None:  # a job never seen before counts from when its file was written
            base = self.history.append(job.name, {"event": "seen", "slot": written(self.folder, job)})["slot"]
        if job.next_after(base) <= now:
            self.fire(job, base, now)
            base = self.history.last_slot(job.name) or now
        return job.next_after(base)

    def _report_once(self, line: str) -> None:
        if line not in self._reported:  # said once, not every tick
            self._reported.add(line)
            self.say(line)

    def fire(self, job: Job, base: float, now: float) -> None:
        slot, missed = job.catch_up(base, now)
        fired, ended = self.history.last_run(job.name)
        if fired and ended is None and self._status(fired["run_id"]) == "running":
            self.history.append(job.name, {"event": "skipped", "slot": slot,
                                           "reason": f"run {fired['run_id']} is still running"})
            self.say(f"{job.name}: skipped, its last run {fired['run_id']} is still running")
            return
        # the slot is recorded before the run starts: a daemon killed in between never fires it twice
        self.history.append(job.name, {"event": "firing", "slot": slot, "missed": missed})
        try:
            if not job.workdir.is_dir():
                raise DetachFailed(f"workdir {job.workdir} is not a folder", 2)
            run_id, proc = spawn(job.run_args(), cwd=job.workdir)
        except (DetachFailed, OSError) as e:
            self.history.append(job.name, {"event": "failed", "slot": slot, "error": str(e)[-2000:]})
            self.say(f"{job.name}: could not start: {e}")
            self.fired.append((job.name, f"could not start: {e}", None))
            return
        self.children.append(proc)
        self.fired.append((job.name, run_id, proc))
        self.history.append(job.name, {"event": "fired", "slot": slot, "missed": missed, "run_id": run_id})
        self.say(f"{job.name}: fired run {run_id}" + (f" (stands in for {missed} missed)" if missed else ""))

    def wait_fired(self) -> int:
        """`schedule run --once`: wait for the runs it fired to end; 0 when each one ended done, else 1 (a job that
        could not start, or a run that failed, paused or reached a limit), as cron and CI expect."""
        for _, _, proc in self.fired:
            if proc is not None:
                proc.wait()
        jobs, _ = load_jobs(self.folder)
        for job in jobs:  # each end said and kept in the history (`schedule list` shows it)
            try:
                self.settle(job)
            except Exception as e:  # one job's fault never hides the others (said once, as tick() says it)
                self._report_once(f"{job.name}: skipped, it failed: {type(e).__name__}: {e}")
        failed = [name for name, run_id, proc in self.fired if proc is None or self._status(run_id) != "done"]
        return 1 if failed else 0

    def settle(self, job: Job) -> None:
        """Record the end of the job's last run once it has ended (a crash is also notified: nobody else can)."""
        fired, ended = self.history.last_run(job.name)
        if fired is None or ended is not None:
            return
        run_id = fired["run_id"]
        state = read_state(self.runs_dir / run_id) or {"status": "crashed"}
        status = effective_status(self.runs_dir / run_id, state)
        if status == "running":
            return
        usage = state.get("usage") or {}
        tokens = int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0))
        self.history.append(job.name, {"event": "ended", "run_id": run_id, "status": status, "tokens": tokens})
        self.say(f"{job.name}: run {run_id} ended {status} ({tokens} tokens)")
        if status == "crashed":
            notify.send(notify.payload(event="end", run_id=run_id, status="crashed", exit_code=1, state=state,
                                       answer="The run's process is gone.", question=None, usage=usage,
                                       tool_calls=int(state.get("tool_calls") or 0),
                                       run_dir=self.runs_dir / run_id), self.runs_dir / run_id)

    def _status(self, run_id: str) -> str:
        state = read_state(self.runs_dir / run_id)
        return effective_status(self.runs_dir / run_id, state) if state else "crashed"

    def _lock(self) -> int:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        try:
            return hold_lock(self.folder / ".scheduler.lock")
        except BlockingIOError as e:
            raise ConfigError(f"Another scheduler already serves {self.folder} (pid {e.args[0]}).") from None
