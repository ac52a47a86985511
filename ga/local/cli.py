"""python run.py models [--json] | models pull | models rm — the embedded model's cache."""

from __future__ import annotations

import argparse
import json
import sys

from ga.errors import ConfigError
from ga.local.endpoint import local_cache
from ga.local.progress import Steps
from ga.local.provision import Cache, is_ready, provision, remove


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
            "remove": "python run.py models rm"}


def _size(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e8 else f"{n / 1e6:.1f} MB"


def show(info: dict) -> str:
    weights, server = info["weights"], info["server"]
    state = "ready" if info["ready"] else "not provisioned (the first `--local` run, or `models pull`, does it)"
    lines = [f"local model {info['name']}: {state}",
             f"  cache    {info['cache']} ({_size(info['bytes'])})",
             f"  weights  {weights['path']} " + (f"({_size(weights['bytes'])}, sha256 {weights['sha256']})"
                                                 if weights["present"] else "(missing)"),
             f"  server   {server['path']} " + (f"({_size(server['bytes'])}, {server['version']})"
                                                if server["present"] else "(not built)"),
             f"  remove with: {info['remove']}"]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="run.py models", description="The embedded local model (--local).")
    parser.add_argument("action", nargs="?", choices=("list", "pull", "rm"), default="list",
                        help="list (default): what is cached; pull: provision now; rm: delete the cache")
    parser.add_argument("--json", action="store_true", help="print the listing as JSON")
    args = parser.parse_args(argv)
    cache = local_cache()
    try:
        if args.action == "pull":
            provision(cache, Steps())
        elif args.action == "rm":
            print(f"removed {cache.root} ({_size(remove(cache))})")
            return 0
    except ConfigError as e:
        print(f"ga: {e}", file=sys.stderr)
        return 2
    info = describe(cache)
    print(json.dumps(info) if args.json else show(info))
    return 0
