"""ga models [list] [--json] | models pull | models stop | models rm: what the configured endpoint serves, and the
embedded model's cache (--local)."""

from __future__ import annotations

import argparse
import json

from ga.config import Settings, load_settings
from ga.errors import ModelError
from ga.invocation import invocation
from ga.local import cli as local
from ga.local.endpoint import local_cache


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"{invocation()} models", description="The models ga can use: what the configured "
                                "endpoint serves (GET /v1/models) and the embedded local model (--local).")
    p.add_argument("action", nargs="?", choices=("list", "pull", "stop", "rm"), default="list",
                   help="list (default): the endpoint's models, the local cache and its server; pull: provision the "
                        "local model now; stop: stop its server kept warm now; rm: stop it and delete its cache")
    p.add_argument("--json", action="store_true", help="print the listing as JSON")
    return p


def endpoint(settings: Settings) -> dict | None:
    """What the configured endpoint serves, as `models --json` prints it under "endpoint"; None: none configured."""
    if not settings.base_url or settings.model == "local":
        return None
    from ga.model.served import served_models  # the HTTP client loads only when there is an endpoint to ask

    row: dict = {"base_url": settings.base_url, "model": settings.model or None}
    try:
        row["models"], row["window"] = served_models(settings)
    except ModelError as e:
        row["error"] = str(e)
    return row


def show(row: dict | None) -> str:
    if row is None:
        return "endpoint: none configured (OPENAI_BASE_URL, OPENAI_API_KEY and GA_MODEL, or --local)"
    if "error" in row:
        return f"endpoint {row['base_url']}: cannot list its models: {row['error']}"
    configured, listed = row["model"], row["models"]
    lines = [f"endpoint {row['base_url']} serves {len(listed)} model{'s' if len(listed) != 1 else ''}"
             + (":" if listed else "")]
    window = f", window {row['window']:,} tokens" if row["window"] else ""
    lines += [f"  {name}" + (f"  (the configured model{window})" if name == configured else "") for name in listed]
    if configured and configured not in listed:
        lines.append(f"  the configured model {configured!r} is not among them: the server may refuse it")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    if args.action != "list":
        return local.main(argv)
    row = endpoint(load_settings())  # a bad config: main.py says it, exit 2
    info = local.describe(local_cache())
    print(json.dumps({**info, "endpoint": row}) if args.json else f"{show(row)}\n{local.show(info)}")
    return 0
