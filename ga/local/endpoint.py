"""`--local` / GA_MODEL=local: provision the embedded model if needed, hold its server for the run (started, or
found warm), point ga at it."""

from __future__ import annotations

import dataclasses
import math
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from ga.config import Settings
from ga.errors import ConfigError
from ga.invocation import invocation
from ga.local.progress import Steps
from ga.local.provision import Cache, cache_root, provision
from ga.local.server import ServerOptions
from ga.local.shared import attach, keep_alive

LOCAL = "local"
"""The model name that means the embedded model."""
HISTORY_SHARE = 0.75
"""Of the model's window, what ga's history may use: the rest is the reply, the schemas and the slack of token
estimates (the server refuses a request larger than its window)."""
SERVER_ARGS_ENV = "GA_LOCAL_SERVER_ARGS"


def is_local(settings: Settings) -> bool:
    return settings.model == LOCAL


def local_cache(env: dict[str, str] | None = None) -> Cache:
    """The cache, with GA_LOCAL_PIP_ARGS (e.g. `--index-url URL`) added to every `pip download`."""
    env = os.environ if env is None else env
    return Cache(root=cache_root(env), pip_args=shlex.split(env.get("GA_LOCAL_PIP_ARGS", "")))


def server_options(budget: int = 0, window: int = 0, env: dict[str, str] | None = None) -> ServerOptions:
    """The measured defaults, a KV cache as large as a run with this history budget needs (in steps of 4,096
    tokens, at most the model's window), and GA_LOCAL_SERVER_ARGS (llama-server flags, appended so they win)."""
    env = os.environ if env is None else env
    context = min(window, math.ceil(budget / HISTORY_SHARE / 4096) * 4096) if budget and window else 0
    try:
        return ServerOptions(context=context, extra=tuple(shlex.split(env.get(SERVER_ARGS_ENV, ""))))
    except ValueError as err:
        raise ConfigError(f"{SERVER_ARGS_ENV}: {err} (give llama-server flags as on a shell line)") from None


def ensure_provisioned(settings: Settings, steps: Steps | None = None) -> None:
    """Before a run folder is made: the cache ready, GA_LOCAL_KEEP_ALIVE readable."""
    if is_local(settings):
        keep_alive()
        server_options()
        try:
            provision(local_cache(), steps or Steps())
        except KeyboardInterrupt:  # what was fetched or built stays: the next --local goes on from there
            print("\nga: provisioning the local model was interrupted; what is done is kept, and the next --local "
                  f"run (or `{invocation()} models pull`) goes on from there.", file=sys.stderr, flush=True)
            raise


@contextmanager
def serving(settings: Settings, log: Path, notice: Callable[[str], None],
            meanwhile: Callable[[], object] | None = None) -> Iterator[Settings]:
    """The settings to run with: unchanged, or pointing at the local server, which this run holds until the block
    ends (the server stops then if GA_LOCAL_KEEP_ALIVE is 0, else once idle that long). `log` gets a line saying
    which server served the run; `meanwhile` runs while a server starts (the run's own imports: seconds)."""
    if not is_local(settings):
        yield settings
        return
    cache = local_cache()
    provision(cache, Steps())
    keep, options = keep_alive(), server_options(settings.context_tokens, cache.model.window)
    started = time.monotonic()
    lease = attach(cache, options, keep, meanwhile=meanwhile)
    try:
        how = "started" if lease.started else "kept warm"
        notice(f"local model {cache.model.name} ready at {lease.url} in {time.monotonic() - started:.1f} s ({how})")
        log.parent.mkdir(parents=True, exist_ok=True)
        with open(log, "a", encoding="utf-8") as f:
            f.write(f"llama-server pid {lease.state['server']} on 127.0.0.1:{lease.state['port']} ({how}; keeper pid "
                    f"{lease.state['keeper']}); its log: {lease.folder.log}\n")
        budget = min(settings.context_tokens or lease.window, int(lease.window * HISTORY_SHARE))
        yield dataclasses.replace(settings, base_url=lease.url, api_key=lease.key, context_tokens=budget,
                                  context_steps=settings.context_steps or "large")
    finally:
        lease.release()
