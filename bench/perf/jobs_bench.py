"""Long-running job figures, with real ga processes against the scripted server.

    python bench/perf/jobs_bench.py [--steps 500] [--runs 1000] [--turns 1000] [--notifications 5]

Prints figures; asserts nothing. Targets: resume of a 500-step run < 1 s; `runs` with 1,000 runs on disk < 0.5 s;
agent RSS over a 1,000-turn run flat (growth < 20 MB after warm-up); a run's end to its notification < 1 s.
Everything is written under a temporary folder, removed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from ga.cli.commands.runs import collect  # noqa: E402
from ga.runs.folder import Run  # noqa: E402
from tests.scripted import ScriptedServer, tool_call  # noqa: E402

RUN_PY = str(ROOT / "run.py")


def env_for(server: ScriptedServer | None, home: Path, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GA_"))}
    env.update(GA_HOME=str(home), GA_RETRY_BASE="0.01", **extra)
    if server is not None:
        env.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="bench", GA_MODEL="scripted")
    return env


def ga(args: list[str], server, home: Path, cwd: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, RUN_PY, *args], cwd=cwd, env=env_for(server, home, **extra),
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)


class Trimmer:
    """The fake keeps every request; a long run's would fill this process, not ga's. Keeps the count."""

    def __init__(self, server: ScriptedServer):
        self.server, self.dropped, self.stop = server, 0, threading.Event()
        threading.Thread(target=self._trim, daemon=True).start()

    @property
    def served(self) -> int:
        return self.dropped + len(self.server.requests)

    def _trim(self) -> None:
        while not self.stop.wait(0.5):
            n = max(0, len(self.server.requests) - 2)
            del self.server.requests[:n]
            self.dropped += n


def steps(n: int) -> list[dict]:
    calls = [tool_call("file_read", path="notes.txt"), tool_call("update_working_checkpoint", key_info="step {i}")]
    return [{"tool_calls": [{**calls[i % 2], "arguments": {**calls[i % 2]["arguments"]}}]} for i in range(n)]


def long_run(home: Path, ws: Path, n: int, answer: str = "finished") -> tuple[str, float]:
    """A real n-step run (ended by its turn limit); returns its id and how long it took."""
    with ScriptedServer(steps(n)) as server:
        trimmer = Trimmer(server)
        t = time.perf_counter()
        proc = ga(["log the notes", "--json", "--max-turns", str(n)], server, home, ws)
        trimmer.stop.set()
    return json.loads(proc.stdout)["run_id"], time.perf_counter() - t


def resume_figures(home: Path, ws: Path, n: int) -> None:
    run_id, took = long_run(home, ws, n)
    events = len((home / "runs" / run_id / "trajectory.jsonl").read_text().splitlines())
    size = (home / "runs" / run_id / "trajectory.jsonl").stat().st_size
    print(f"\n== resume of a {n}-step run ({events} trajectory events, {size / 1e6:.1f} MB; made in {took:.0f} s)")
    import_started = time.perf_counter()
    from ga.agent import Agent
    from ga.cli.terminal import Terminal
    from ga.config import load_settings
    from ga.model.client import OpenAIModel
    from ga.tooling.dispatch import Dispatcher
    from tools import load_tools
    imports = time.perf_counter() - import_started
    settings = load_settings(env=env_for(None, home) | {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                                                        "OPENAI_API_KEY": "x", "GA_MODEL": "m"}, workdir=ws)
    for label in ("cold", "warm"):
        t = time.perf_counter()
        run = Run.open(home / "runs", run_id)
        agent = Agent(settings=settings, model=OpenAIModel(settings), dispatcher=Dispatcher(load_tools()), run=run,
                      ui=Terminal(quiet=True), interactive=False)
        print(f"in-process ({label}): Run.open + Agent(...).open() rebuilding {len(agent.open().messages)} messages "
              f"{1000 * (time.perf_counter() - t):5.0f} ms")
    print(f"(the imports before it: {imports:.2f} s; a new process pays them, mostly `import openai`)")
    for i in range(3):
        copy = f"{run_id}-{i}"  # each sample resumes the same 500 steps
        shutil.copytree(home / "runs" / run_id, home / "runs" / copy)
        with ScriptedServer([{"content": "resumed"}]) as server:
            t = time.perf_counter()
            proc = subprocess.Popen([sys.executable, RUN_PY, "--resume", copy, "--json", "--max-turns", "0"],
                                    cwd=ws, env=env_for(server, home), stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
            while not server.requests and proc.poll() is None:
                time.sleep(0.005)
            first = time.perf_counter() - t
            out, _ = proc.communicate()
            whole = time.perf_counter() - t
        shutil.rmtree(home / "runs" / copy)
        if json.loads(out)["answer"] != "resumed":
            raise SystemExit(f"the resumed run did not finish: {out}")
        print(f"--resume: invocation → first model request {first:6.2f} s   whole process {whole:5.2f} s   (< 1 s)")


def runs_figures(home: Path, ws: Path, count: int) -> None:
    runs_dir = home / "runs"
    template = next(p for p in runs_dir.iterdir())  # the long run: a realistic state file and trajectory
    for i in range(count):
        target = runs_dir / f"20200101-{i:06d}-bench"
        shutil.copytree(template, target)
        state = json.loads((target / "state.json").read_text())
        if i % 50 == 0:  # some "running" runs whose process is gone, so liveness is checked too
            state.update(status="running", pid=2**22 - i, pid_started=1.0)
        (target / "state.json").write_text(json.dumps(state))
    total = len(list(runs_dir.iterdir()))
    print(f"\n== runs with {total} runs on disk")
    t = time.perf_counter()
    rows, _ = collect(runs_dir, None, 0, 900)
    print(f"in-process, all {len(rows)} rows             {1000 * (time.perf_counter() - t):7.0f} ms")
    for args in (["runs"], ["runs", "--json"], ["runs", "--status", "crashed"]):
        times = []
        for _ in range(3):
            t = time.perf_counter()
            proc = ga(args, None, home, ws)
            times.append(time.perf_counter() - t)
        assert proc.returncode == 0, proc.stderr
        print(f"python run.py {' '.join(args):24s} {min(times):5.2f} s (best of 3; < 0.5 s)")
    bare = min(_timed([sys.executable, "-c", "pass"]) for _ in range(3))
    print(f"(a bare `python -c pass` takes {bare:.2f} s here)")


def _timed(command: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(command, check=True)
    return time.perf_counter() - t


def rss_figures(home: Path, ws: Path, turns: int) -> None:
    script = [*steps(turns), {"content": "done"}]
    samples: list[tuple[int, int]] = []
    with ScriptedServer(script) as server:
        trimmer = Trimmer(server)
        proc = subprocess.Popen([sys.executable, RUN_PY, "log the notes", "--max-turns", "0", "-q"], cwd=ws,
                                env=env_for(server, home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)
        watched = psutil.Process(proc.pid)
        while proc.poll() is None:
            try:
                samples.append((trimmer.served, watched.memory_info().rss))
            except psutil.Error:
                break
            time.sleep(0.2)
        trimmer.stop.set()
    warm = [rss for n, rss in samples if n >= turns // 10]
    print(f"\n== agent RSS over a {turns}-turn run (sampled every 0.2 s)")
    if warm:
        print(f"after warm-up (turn {turns // 10}): {warm[0] / 2**20:6.1f} MB   end: {warm[-1] / 2**20:6.1f} MB   "
              f"max: {max(warm) / 2**20:6.1f} MB   growth: {(warm[-1] - warm[0]) / 2**20:+.1f} MB (< 20 MB)")


def notify_figures(home: Path, ws: Path, n: int) -> None:
    log = home.parent / "notified.jsonl"
    receiver = home.parent / "receiver.py"
    receiver.write_text("import json, sys, time\nevent = json.load(sys.stdin)\n"
                        f"open({str(log)!r}, 'a').write(json.dumps({{'run_id': event['run_id'], 'at': time.time()}})"
                        " + '\\n')\n")
    delays = []
    with ScriptedServer([{"content": f"answer {i}"} for i in range(n)]) as server:
        for _ in range(n):
            run_id = json.loads(ga(["say something", "--json"], server, home, ws,
                                   GA_NOTIFY=f"{sys.executable} {receiver}").stdout)["run_id"]
            lines = (home / "runs" / run_id / "trajectory.jsonl").read_text().splitlines()
            ended = json.loads(lines[-1])["t"]
            deadline = time.time() + 10
            while time.time() < deadline:
                got = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
                mine = [e for e in got if e["run_id"] == run_id]
                if mine:
                    delays.append(mine[0]["at"] - ended)
                    break
                time.sleep(0.01)
    print(f"\n== a run's end (its last trajectory event) → the notifier has the event ({n} runs)")
    print(f"median {statistics.median(delays):.3f} s   max {max(delays):.3f} s   (< 1 s; includes the notifier's "
          "own Python start)")


def detach_figures(home: Path, ws: Path) -> None:
    times = []
    with ScriptedServer([{"content": "bg"}] * 3) as server:
        for _ in range(3):
            t = time.perf_counter()
            proc = ga(["in the background", "--detach"], server, home, ws)
            times.append(time.perf_counter() - t)
            assert proc.returncode == 0, proc.stderr
            ga(["tail", proc.stdout.strip()], None, home, ws)
    print(f"\n== --detach returns with the run id after {min(times):.2f} s (best of 3)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=500)
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--turns", type=int, default=1000)
    p.add_argument("--notifications", type=int, default=5)
    args = p.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="ga-jobs-bench-"))
    try:
        home, ws = scratch / "home", scratch / "ws"
        ws.mkdir()
        (ws / "notes.txt").write_text("one\ntwo\nthree\n")
        resume_figures(home, ws, args.steps)
        runs_figures(home, ws, args.runs - 1)
        rss_figures(scratch / "home-rss", ws, args.turns)
        notify_figures(scratch / "home-notify", ws, args.notifications)
        detach_figures(scratch / "home-detach", ws)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
