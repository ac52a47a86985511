"""llama-server alone, as ga starts it (ga/local/server.py): its settings compared, and what --cache-reuse saves.
Needs the model provisioned (`python run.py models pull`).

    python bench/perf/local_server_bench.py settings [--rounds 2] [--tokens 512] [--only NAME ...]
    python bench/perf/local_server_bench.py reuse

`settings`: each configuration starts a server (time, RSS), evaluates the prompt of a run's first request from
scratch (system prompt, nine tool schemas, the task; cut to --tokens) and generates 32 tokens; the server's own
timings are the physical limit the end-to-end figures (bench/perf/local_bench.py) compare with. The machine is
usually shared: configurations are interleaved round by round, each row says the load and the cores left idle
just before, and medians are compared within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from ga.config import load_settings  # noqa: E402
from ga.local.endpoint import local_cache  # noqa: E402
from ga.local.provision import is_ready  # noqa: E402
from ga.local.server import LocalServer, ServerOptions, idle_cores  # noqa: E402
from ga.prompts import first_message, system_prompt  # noqa: E402
from ga.tooling.dispatch import Dispatcher  # noqa: E402
from tools import load_tools  # noqa: E402


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


def call(root: str, path: str, body: dict | None, key: str, timeout: float = 1800) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(root + path, data, {"Content-Type": "application/json",
                                                          "Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=timeout) as reply:
        return json.loads(reply.read())


def first_request(task: str = "Reply with one word: hello") -> tuple[list[dict], list[dict]]:
    """The messages and tools of a run's first request, as ga sends them (no memory: a fresh GA_HOME)."""
    with tempfile.TemporaryDirectory() as home:
        settings = load_settings(env={}, home=Path(home), workdir=REPO, model="local")
    tools = Dispatcher(load_tools()).schemas()
    messages = [{"role": "system", "content": system_prompt(None, "")},
                {"role": "user", "content": first_message(settings, task)}]
    return messages, tools


class Served:
    """A bare LocalServer with its own key, for measuring the server alone."""

    def __init__(self, options: ServerOptions, folder: Path):
        self.key = secrets.token_urlsafe(24)
        key_file = folder / "key"
        key_file.write_text(self.key + "\n")
        key_file.chmod(0o600)
        self.server = LocalServer(local_cache(), folder / "server.log", key_file=key_file, options=options)

    def __enter__(self) -> Served:
        started = time.monotonic()
        self.server.start()
        self.started_s = time.monotonic() - started
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def call(self, path: str, body: dict | None = None) -> dict:
        return call(self.server.root_url, path, body, self.key)

    def threads(self) -> str:
        args = Path(f"/proc/{self.server.proc.pid}/cmdline").read_bytes().split(b"\0")
        return args[len(args) - 1 - args[::-1].index(b"-t") + 1].decode()  # the last -t given

    def rss_mb(self) -> float:
        status = Path(f"/proc/{self.server.proc.pid}/status").read_text()
        return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS"))) / 1024


SETTINGS = {
    "auto": ServerOptions(),
    "auto nowarmup": ServerOptions(warmup=False),
    "t2 b2048 ub512": ServerOptions(threads=2),
    "t2 nowarmup": ServerOptions(threads=2, warmup=False),
    "t1 b2048 ub512": ServerOptions(threads=1),
    "t2 b2048 ub256": ServerOptions(threads=2, ubatch=256),
    "t2 b2048 ub1024": ServerOptions(threads=2, ubatch=1024),
    "t2 b512 ub512 fa": ServerOptions(threads=2, batch=512, flash_attn=True),
    "t2 b2048 ub512 fa": ServerOptions(threads=2, flash_attn=True),
    "t2 poll0": ServerOptions(threads=2, extra=("--poll", "0")),
    "t2 c8192": ServerOptions(threads=2, context=8192),
    "t1 b2048 ub256": ServerOptions(threads=1, ubatch=256),
    "t1 b2048 ub1024": ServerOptions(threads=1, ubatch=1024),
    "t1 fa": ServerOptions(threads=1, flash_attn=True),
    "t1 fa kv q8_0": ServerOptions(threads=1, flash_attn=True, extra=("-ctk", "q8_0", "-ctv", "q8_0")),
    "t1 c8192": ServerOptions(threads=1, context=8192),
    "t1 c16384": ServerOptions(threads=1, context=16384),
}


def settings_bench(rounds: int, tokens: int, names: list[str]) -> None:
    """Each configuration: server start, RSS, then the prompt of a run's first request evaluated from scratch and
    32 tokens generated; configurations interleaved, `rounds` times."""
    messages, tools = first_request()
    results: dict[str, list[dict]] = {name: [] for name in names}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for name in names:
                with Served(SETTINGS[name], Path(tmp)) as served:
                    prompt = served.call("/apply-template", {"messages": messages, "tools": tools})["prompt"]
                    ids = served.call("/tokenize", {"content": prompt, "with_pieces": False})["tokens"][:tokens]
                    before, idle = load(), idle_cores(1.0)
                    asked = time.monotonic()
                    done = served.call("/completion", {"prompt": ids, "n_predict": 32, "cache_prompt": False,
                                                       "temperature": 0, "ignore_eos": True})
                    t = done["timings"]
                    row = {"start_s": served.started_s, "first_s": time.monotonic() - asked,
                           "rss_mb": served.rss_mb(), "pp": t["prompt_per_second"],
                           "tg": t["predicted_per_second"], "n": t["prompt_n"],
                           "load": f"{before} → {load()}, {idle:.1f} cores idle before"}
                    results[name].append(row)
                    print(f"round {r + 1} {name:18s} -t {served.threads()} start {row['start_s']:5.1f} s  "
                          f"first request {row['first_s']:5.1f} s  rss {row['rss_mb']:6.0f} MB  "
                          f"prompt {row['n']} tok at {row['pp']:6.1f} tok/s  generation {row['tg']:5.1f} tok/s  "
                          f"({row['load']})", flush=True)
    print("\n| setting | start s | first request s | RSS MB | prompt tok/s | generation tok/s |\n"
          "|---|---|---|---|---|---|")
    for name, rows in results.items():
        med = {k: statistics.median(row[k] for row in rows) for k in ("start_s", "first_s", "rss_mb", "pp", "tg")}
        print(f"| {name} | {med['start_s']:.1f} | {med['first_s']:.1f} | {med['rss_mb']:.0f} | {med['pp']:.1f} | "
              f"{med['tg']:.1f} |")


LISTING = ("SOPs that may fit this task (open one with file_read before you start):\n" + "".join(
    f"- sop-{i}: how to handle case {i} of a recurring kind of task, step by step, with its pitfalls "
    f"({Path(tempfile.gettempdir()) / f'sop-{i}/SKILL.md'})\n" for i in range(8)))


def reuse_bench() -> None:
    """--cache-reuse where ga meets it: a run whose system prompt listed SOPs, then one that lists none (the tool
    schemas follow the listing in Qwen's template, so without chunk reuse they are read again)."""
    messages, tools = first_request()
    listed = [{**messages[0], "content": messages[0]["content"] + "\n\n" + LISTING}, messages[1]]
    with tempfile.TemporaryDirectory() as tmp:
        for reuse in (256, 0):
            with Served(ServerOptions(cache_reuse=reuse), Path(tmp)) as served:
                for name, request in (("listing", listed), ("no listing", messages)):
                    done = served.call("/v1/chat/completions", {"messages": request, "tools": tools, "max_tokens": 1})
                    t, prompt = done["timings"], done["usage"]["prompt_tokens"]
                    print(f"--cache-reuse {reuse:3d}: request with {name:10s}: prompt {prompt:,} tokens, evaluated "
                          f"{t['prompt_n']:,} in {t['prompt_ms'] / 1000:.1f} s ({load()})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    s = sub.add_parser("settings")
    s.add_argument("--rounds", type=int, default=2)
    s.add_argument("--tokens", type=int, default=100_000, help="cut the prompt to this many tokens")
    s.add_argument("--only", nargs="*", default=list(SETTINGS), choices=list(SETTINGS))
    sub.add_parser("reuse")
    opts = parser.parse_args()
    if not is_ready(local_cache()):
        sys.exit("the local model is not provisioned: python run.py models pull")
    print(f"{os.cpu_count()} CPUs, {load()}")
    if opts.what == "settings":
        settings_bench(opts.rounds, opts.tokens, opts.only)
    else:
        reuse_bench()


if __name__ == "__main__":
    main()
