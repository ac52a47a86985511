"""Start-up figures: `ga "Hello"` end to end against the scripted server, and `ga --help`, in real processes.

    python bench/perf/startup_bench.py [--runs 10] [--python PY] [--ga PROGRAM] [--against RUN_PY] [--piped]
                                       [--imports]

Targets (README, issue 24): `ga "Hello"` ≤ 1.0 s, `ga --help` ≤ 0.3 s, median wall time on a 2-core machine; and
(issue 35) `ga "Hello"` at most 0.4 s more than `python -c "import openai"`, the SDK ga keeps: the two are timed
alternately, run by run, and the median of the differences is the figure (the "gap"), with its ratio.
Each `Hello` runs in a new workspace of one warm GA_HOME (a warm-up run first), on a pseudo-terminal as in a
user's shell: the spinner, the answer rendered as Markdown (--piped: stdin from /dev/null and stdout and stderr
pipes, as a script or a harness runs it: an autonomous run, which also probes the sandbox). Wall
time depends on the machine's load, so the load average is printed, and CPU time (user + system) beside it;
`--against` another checkout's run.py alternates the two, run by run, and prints the ratios: compare those.
`--imports` adds what one `Hello` spends importing, by top-level package (python -X importtime, self time).
Prints figures; asserts nothing. Everything is written under a temporary folder, removed at the end.
"""

from __future__ import annotations

import argparse
import collections
import fcntl
import os
import pty
import re
import resource
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.scripted import ScriptedServer  # noqa: E402

ANSWER = "Hello! How can I help?"


def timed(command: list[str], env: dict, cwd: Path, piped: bool) -> tuple[float, float, str]:
    """(wall s, CPU s of the process and its children, what it wrote) of one run: on a pseudo-terminal (stdin,
    stdout and stderr, as in a user's shell), or piped (stdin /dev/null, stdout and stderr pipes)."""
    if piped:
        streams = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    else:
        primary, secondary = pty.openpty()
        fcntl.ioctl(secondary, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))  # rows, columns
        streams = {"stdin": secondary, "stdout": secondary, "stderr": secondary}
        written: list[bytes] = []
        reader = threading.Thread(target=_drain, args=(primary, written), daemon=True)
        reader.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        proc = subprocess.run(command, cwd=cwd, env=env, timeout=120, check=False, **streams)
    finally:
        if not piped:
            os.close(secondary)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    if piped:
        output = (proc.stdout + proc.stderr).decode(errors="replace")
    else:
        reader.join(timeout=10)
        os.close(primary)
        output = b"".join(written).decode(errors="replace")
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited {proc.returncode}:\n{output[-2000:]}")
    return wall, cpu, output


def _drain(fd: int, into: list[bytes]) -> None:
    """Read a pseudo-terminal until its last writer is gone (the child must never block on a full buffer)."""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child and our copy of its end are closed
            return
        if not chunk:
            return
        into.append(chunk)


def program(python: str, given: str) -> list[str]:
    """A checkout's run.py is run with PYTHON; anything else (an installed `ga`) as it is."""
    return [python, given] if given.endswith(".py") else [given]


def with_importtime(command: list[str]) -> list[str]:
    """The same `Hello` under python -X importtime (an installed ga: the interpreter its first line names)."""
    if len(command) == 2:
        return [command[0], "-X", "importtime", command[1], "Hello"]
    interpreter = Path(command[0]).read_text(errors="replace").splitlines()[0].removeprefix("#!").strip()
    return [interpreter, "-X", "importtime", command[0], "Hello"]


def figures(samples: list[tuple[float, float]]) -> str:
    walls, cpus = [w for w, _ in samples], [c for _, c in samples]
    return (f"median {statistics.median(walls):.3f} s (min {min(walls):.3f}), "
            f"CPU {statistics.median(cpus):.3f} s")


def imports_by_package(stderr: str) -> list[tuple[str, float]]:
    spent: collections.Counter = collections.Counter()
    for line in stderr.splitlines():
        if m := re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s*(\S+)", line):
            spent[m[2].split(".")[0]] += int(m[1]) / 1e6
    return spent.most_common(12)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="timed runs of each (default 10)")
    parser.add_argument("--python", default=sys.executable, help="the interpreter for run.py (default: this one)")
    parser.add_argument("--ga", default=str(ROOT / "run.py"), help="what to time: a run.py, or an installed ga")
    parser.add_argument("--against", help="another program to time alternately (e.g. main's run.py)")
    parser.add_argument("--piped", action="store_true", help="no terminal: stdin /dev/null, stdout and stderr pipes")
    parser.add_argument("--imports", action="store_true", help="what one Hello spends importing, by package")
    args = parser.parse_args()
    programs = {"this": program(args.python, args.ga)}
    if args.against:
        programs["against"] = program(args.python, args.against)
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; {args.runs} runs each; "
          f"{'piped' if args.piped else 'on a terminal'}")
    for name, command in programs.items():
        print(f"  {name}: {' '.join(command)}")
    with tempfile.TemporaryDirectory(prefix="ga-startup-") as tmp, \
            ScriptedServer([{"content": ANSWER}] * (4 * args.runs + 8)) as server:
        work = Path(tmp)
        # as in a user's shell: no GA_/OPENAI_ settings, and bytecode cached (a test runner's
        # PYTHONDONTWRITEBYTECODE would make every run compile ga's 150 modules again)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("OPENAI_", "GA_")) and k != "PYTHONDONTWRITEBYTECODE"}
        env.update(OPENAI_BASE_URL=server.url, OPENAI_API_KEY="bench", GA_MODEL="scripted", GA_HOME=str(work / "home"))
        floor = [timed([args.python, "-c", "pass"], env, work, True)[:2] for _ in range(args.runs)]
        sdk: list[tuple[float, float]] = []
        hello: dict[str, list] = {name: [] for name in programs}
        helped: dict[str, list] = {name: [] for name in programs}
        for command in programs.values():  # warm-up: bytecode, the seed SOPs of a new GA_HOME
            timed([*command, "Hello"], env, work, args.piped)
        for i in range(args.runs):
            sdk.append(timed([args.python, "-c", "import openai"], env, work, True)[:2])
            for name, command in programs.items():
                workspace = work / f"ws-{name}-{i}"
                workspace.mkdir()
                wall, cpu, _ = timed([*command, "Hello"], env, workspace, args.piped)
                hello[name].append((wall, cpu))
                helped[name].append(timed([*command, "--help"], env, work, True)[:2])
        print(f"python -c pass            {figures(floor)}")
        print(f"python -c 'import openai' {figures(sdk)}  (the model client's SDK alone)")
        for name in programs:
            print(f'{name:>8}: ga "Hello"       {figures(hello[name])}   (target ≤ 1.0 s)')
            print(f"{name:>8}: ga --help        {figures(helped[name])}   (target ≤ 0.3 s)")
        gaps = [h[0] - o[0] for h, o in zip(hello["this"], sdk, strict=True)]
        print(f'this: ga "Hello" - import openai: gap median {statistics.median(gaps):.3f} s (goal ≤ 0.4 s), '
              f'ratio {statistics.median(w for w, _ in hello["this"]) / statistics.median(w for w, _ in sdk):.2f}')
        if args.against:
            ratio = statistics.median(w for w, _ in hello["this"]) / statistics.median(w for w, _ in hello["against"])
            cpu = statistics.median(c for _, c in hello["this"]) / statistics.median(c for _, c in hello["against"])
            print(f'this / against, ga "Hello": wall {ratio:.2f}, CPU {cpu:.2f}')
        if args.imports:
            workspace = work / "ws-imports"
            workspace.mkdir()
            _, _, stderr = timed(with_importtime(programs["this"]), env, workspace, args.piped)
            print("imports of one Hello (self time by top-level package, under -X importtime):")
            for package, seconds in imports_by_package(stderr):
                print(f"  {package:<20} {seconds:.3f} s")


if __name__ == "__main__":
    main()
