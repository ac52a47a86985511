"""The prefix every run sends first (system prompt and tool schemas, ~1,300 tokens, byte-identical run after run)
kept across servers as llama.cpp's saved slot state, so a new server's first request evaluates only what follows it.

Saved when a server stops, if no file holds that prefix yet and it carries the tool schemas (the slot cut back to
the prefix first, by a request for the prefix alone). Restored when a server starts: the newest file made by this
model with these KV settings; the server compares it token by token with each request, so a changed prefix costs
only the re-read it would have cost anyway. Files: CACHE/prefix/<model sha256>-<KV settings>-<prefix sha256>.bin,
the newest few kept.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path

from ga.local.provision import Cache
from ga.local.server import ServerOptions

KEPT = 4
"""Saved prefixes kept per model (one per memory state or tool set in use, roughly)."""
KV_FLAGS = ("-fa", "--flash-attn", "-ctk", "--cache-type-k", "-ctv", "--cache-type-v")
"""The flags that shape a saved KV state: a switch, then the ones followed by a value."""
SYSTEM, USER, TOOL = "\x01SYSTEM\x01", "\x01USER\x01", "ga_probe_tool"

Call = Callable[[str, "dict | None"], dict]
"""(path, JSON body or None for a GET) → the server's JSON reply, authorised."""


def folder(cache: Cache) -> Path:
    return cache.root / "prefix"


def tag(cache: Cache, options: ServerOptions) -> str:
    """What a saved state depends on besides the prefix: the model, the server build and the KV cache's layout
    (flash attention transposes V; the cache types), not the threads or the batch sizes."""
    extra = options.extra
    layout = [a for i, a in enumerate(extra) if a in KV_FLAGS or (i and extra[i - 1] in KV_FLAGS[2:])]
    shape = json.dumps([cache.server_spec.version, options.flash_attn, layout])
    return f"{cache.model.sha256[:16]}-{hashlib.sha256(shape.encode()).hexdigest()[:8]}"


def restore(cache: Cache, options: ServerOptions, call: Call) -> int:
    """Load the newest saved prefix into slot 0; the tokens restored (0: none, or a file the server refused, which
    is removed)."""
    files = _saved(cache, options)
    if not files:
        return 0
    newest = files[0]
    try:
        done = call("/slots/0?action=restore", {"filename": newest.name})
    except OSError:
        newest.unlink(missing_ok=True)  # unreadable for this server (a different build wrote it): not again
        return 0
    os.utime(newest)  # the newest is the one in use
    return int(done.get("n_restored") or 0)


def save(cache: Cache, options: ServerOptions, call: Call) -> str:
    """Keep slot 0's prefix unless a file holds it already; the file name, or "" when there was nothing to save."""
    prompt = (call("/slots", None) or [{}])[0].get("prompt") or ""
    prefix = run_prefix(prompt, call)
    if not prefix:
        return ""
    target = folder(cache) / f"{tag(cache, options)}-{hashlib.sha256(prefix.encode()).hexdigest()[:16]}.bin"
    if target.exists():
        os.utime(target)
        return ""
    target.parent.mkdir(parents=True, exist_ok=True)
    call("/completion", {"prompt": prefix, "n_predict": 0, "cache_prompt": True, "temperature": 0})  # cut back
    call("/slots/0?action=save", {"filename": target.name})
    for old in _saved(cache, options)[KEPT:]:
        old.unlink(missing_ok=True)
    return target.name


def run_prefix(prompt: str, call: Call) -> str:
    """The prompt's system turn, up to the token that ends it, if it carries tool schemas; else "". Where the turn
    ends and how tools begin are learned from the server's own chat template."""
    def probe(tools: list[dict]) -> str:
        messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
        text = call("/apply-template", {"messages": messages, "tools": tools})["prompt"]
        return text[text.find(SYSTEM) + len(SYSTEM):]

    turn_end = probe([]).split(USER)[0]
    tool = {"type": "function", "function": {"name": TOOL, "description": "", "parameters": {"type": "object"}}}
    tools_head = probe([tool]).split(TOOL)[0]
    tools_head = tools_head[:tools_head.rfind("\n") + 1]
    cut = prompt.find(turn_end) if turn_end else -1
    if cut <= 0 or not tools_head.strip() or tools_head not in prompt[:cut]:
        return ""
    return prompt[:cut]  # before the turn's end token: tokenized alike alone and within the whole prompt


def _saved(cache: Cache, options: ServerOptions) -> list[Path]:
    """This model's saved prefixes for these KV settings, newest first."""
    found = folder(cache).glob(f"{tag(cache, options)}-*.bin")
    return sorted(found, key=lambda p: p.stat().st_mtime_ns, reverse=True)
