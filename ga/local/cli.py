"""ga models [--json] | models pull | models stop | models rm — the embedded model's cache and server."""

from __future__ import annotations

import argparse
import json
import sys
import time

from ga.errors import ConfigError
from ga.invocation import invocation
from ga.local.endpoint import local_cache
from ga.local.progress import Steps
from ga.local.provision import Cache, is_ready, provision, remove
from ga.local.shared import status, stop


def describe(cache: Cache) -> dict:
    """What is cached, as the JSON `models --json` prints."""
    def entry(path, **extra) -> dict:
        return {"path": str(path), "present": path.is_file(), "bytes": path.stat().st_size if path.is_file() else 0,
                **extra}

    total = sum(p.stat().st_size for p in cache.root.rglob("*") if p.is_file()) if cache.root.is_dir() else 0
    return {"name": cache.model.name, "ready": is_ready(cache), "cache": str(cache.root), "bytes": total,
            "weights": entry(cache.model_path, sha256=cache.model.sha256),
            "server": entry(cache.server_path, version=f"llama.cpp from {cache.server_spec.package} "
                                                       f"{cache.server_spec.version}"),
            "running": status(cache), "remove": f"{invocation()} models rm" if total else None}


def _size(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def show(info: dict) -> str:
    weights, server = info["weights"], info["server"]
    state = ("ready" if info["ready"] else "partly provisioned (interrupted: the next `--local` run, or `models "
             "pull`, goes on from what is here)" if info["bytes"] else "not provisioned (the first `--local` run, or "
             "`models pull`, does it)")
    lines = [f"local model {info['name']}: {state}",
             f"  cache    {info['cache']} ({_size(info['bytes'])})",
             f"  weights  {weights['path']} " + (f"({_size(weights['bytes'])}, sha256 {weights['sha256']})"
                                                 if weights["present"] else "(missing)"),
             f"  server   {server['path']} " + (f"({_size(server['bytes'])}, {server['version']})"
                                                if server["present"] else "(not built)"),
             f"  running  {_running(info['running'])}"]
    if info["remove"]:  # nothing cached: nothing to remove
        lines.append(f"  remove with: {info['remove']}")
    return "\n".join(lines)


def _running(state: dict | None) -> str:
    if state is None:
        return "no (a --local run starts it; GA_LOCAL_KEEP_ALIVE keeps it warm after, 5 minutes by default)"
    use = "serving a run" if state["in_use"] else "idle"
    return (f"llama-server pid {state['server']} on 127.0.0.1:{state['port']} ({state.get('threads')} threads, "
            f"{state['window']:,}-token window), up {time.time() - state['started']:.0f} s, {use} (stop with: "
            f"{invocation()} models stop)")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog=f"{invocation()} models", description="The embedded local model (--local).")
    parser.add_argument("action", nargs="?", choices=("list", "pull", "stop", "rm"), default="list",
                        help="list (default): what is cached and running; pull: provision now; stop: stop the server "
                             "kept warm now; rm: stop it and delete the cache")
    parser.add_argument("--json", action="store_true", help="print the listing as JSON")
    args = parser.parse_args(argv)
    cache = local_cache()
    try:
        if args.action == "pull":
            provision(cache, Steps())
        elif args.action == "stop":
            print(_stopped(stop(cache)))
            return 0
        elif args.action == "rm":
            stop(cache)  # never delete the files of a server that runs
            existed = cache.root.exists()
            freed = remove(cache)
            print(f"removed {cache.root} ({_size(freed)})" if existed else f"nothing cached in {cache.root}")
            return 0
    except ConfigError as e:
        print(f"ga: {e}", file=sys.stderr)
        return 2
    info = describe(cache)
    print(json.dumps(info) if args.json else show(info))
    return 0


def _stopped(state: dict | None) -> str:
    if state is None:
        return "no local model server was running"
    note = " (a run was using it: its next request fails, and it can be resumed)" if state["in_use"] else ""
    return f"stopped llama-server pid {state['server']} on 127.0.0.1:{state['port']}{note}"
