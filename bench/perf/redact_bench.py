"""Redaction time on large and adversarial text: linear, or stuck.

    python bench/perf/redact_bench.py [--sizes 1,20] [--limit 60] [--cases log,one-token,...]

Each case is a text of SIZE MB built to hit one way a pattern can go quadratic: everyday log lines with a few
secrets, one long token, a secret keyword repeated without a separator, thousands of distinct `password=...`
assignments (each one a harvested secret that must then be found everywhere), PEM openers without their end
lines, URL-like text without an `@`, a keyword followed by a long run of spaces. For each it prints the seconds
taken by `redact` (what every tool result, the trajectory and the ways out pass through), by the memory guard's
`harvest` (what a run's trajectory is searched with for secret values) and by `scrub` with what was harvested
(what memory files pass through). Each case runs in its own process, stopped after --limit seconds (printed
as `>LIMIT`): a quadratic pattern on 20 MB does not finish in any useful time. Asserts nothing.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

LINE = ("2024-05-01T12:00:{s:02d}Z INFO GET /api/items?page={i} 200 12ms user=alice agent=curl/8.5 "
        "msg=\"served from cache, nothing to do\"\n")
SECRETS = ("export API_TOKEN=tk_live_4f9a8b7c6d5e4f3a2b1c\n"
           "OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx\n"
           "db = postgres://app:s3cretpass@db.internal:5432/app\n")


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def build(case: str, size: int) -> str:
    if case == "log":  # everyday text: the figure that matters for every run
        lines = "".join(LINE.format(s=i % 60, i=i) for i in range(1000))
        return _repeat(lines + SECRETS, size)
    if case == "one-token":
        return "a" * size
    if case == "keyword-run":
        return _repeat("token", size)
    if case == "assignments":  # every line's value is a distinct secret to look for everywhere
        return "".join(f"password=v{i:09d}\n" for i in range(size // 20))
    if case == "pem-openers":
        return _repeat("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n", size)
    if case == "url-no-at":
        return "https://user:" + _repeat("p:", size)
    if case == "spaces":
        return "token" + " " * size + "x"
    raise SystemExit(f"unknown case {case!r}")


CASES = ("log", "one-token", "keyword-run", "assignments", "pem-openers", "url-no-at", "spaces")


def measure(case: str, size_mb: float) -> None:
    from ga.tooling.redact import redact
    from memory.guard import harvest, scrub

    text = build(case, int(size_mb * 1_000_000))
    figures = []
    for name, step in (("redact", lambda: redact(text)), ("harvest", lambda: harvest(text))):
        start = time.perf_counter()
        found = step()
        figures.append(f"{name} {time.perf_counter() - start:.2f}")
    secrets = tuple(sorted(found, key=len, reverse=True))
    start = time.perf_counter()
    scrub(text, secrets)
    figures.append(f"scrub({len(secrets)} secrets) {time.perf_counter() - start:.2f}")
    print("  ".join(figures), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1,20", help="MB, comma-separated")
    parser.add_argument("--limit", type=float, default=60, help="seconds per case before it is stopped")
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--one", nargs=2, metavar=("CASE", "MB"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        measure(args.one[0], float(args.one[1]))
        return
    print(f"{'case':<12} {'MB':>4}  seconds")
    for size in args.sizes.split(","):
        for case in args.cases.split(","):
            start = time.perf_counter()
            try:
                proc = subprocess.run([sys.executable, __file__, "--one", case, size], capture_output=True,
                                      text=True, timeout=args.limit, check=False)
                shown = proc.stdout.strip() or f"failed: {proc.stderr.strip().splitlines()[-1:]}"
            except subprocess.TimeoutExpired:
                shown = f">{args.limit:g} (stopped)"
            print(f"{case:<12} {size:>4}  {shown}   [wall {time.perf_counter() - start:.1f}]", flush=True)


if __name__ == "__main__":
    main()
