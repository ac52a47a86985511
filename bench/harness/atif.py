"""Trajectories in Harbor's ATIF (Agent Trajectory Interchange Format, v1.4), built from the metered exchanges, so
every agent's trajectory has the same shape and the same token counts as the report, whatever its own log says.

Steps: the system prompt and the task as the model saw them, then one agent step per model reply (its text, tool
calls, metrics), whose observation holds the tool results the next request sent back; user messages that appear
between two replies (a nudge, a human's answer) become user steps.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from bench.harness.meter import ANTHROPIC, CHAT, RESPONSES
from bench.harness.proxy import Exchange
from ga.runs.disk import atomic_write

SCHEMA_VERSION = "ATIF-v1.4"


def _text(content: object) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") or p.get("content") or "" if isinstance(p, dict) else str(p) for p in content]
        return "\n".join(_text(p) for p in parts)
    return json.dumps(content, ensure_ascii=False)


def _items(api: str, request: dict) -> list[dict]:
    """The conversation of a request as (role, kind, id, text) dicts, in order."""
    out: list[dict] = []
    if api == ANTHROPIC and request.get("system"):
        out.append({"role": "system", "text": _text(request["system"])})
    if api == RESPONSES:
        if request.get("instructions"):
            out.append({"role": "system", "text": _text(request["instructions"])})
        raw = request.get("input")
        for item in [{"role": "user", "content": raw}] if isinstance(raw, str) else raw or []:
            kind = item.get("type", "message")
            if kind == "function_call_output":
                out.append({"role": "tool", "id": item.get("call_id", ""), "text": _text(item.get("output"))})
            elif kind == "function_call":
                out.append({"role": "assistant", "text": ""})
            elif kind == "message":
                out.append({"role": item.get("role", "user"), "text": _text(item.get("content"))})
        return out
    for message in request.get("messages") or []:
        role, content = message.get("role", "user"), message.get("content")
        if role == "tool":
            out.append({"role": "tool", "id": message.get("tool_call_id", ""), "text": _text(content)})
        elif api == ANTHROPIC and isinstance(content, list):
            texts = []
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    out.append({"role": "tool", "id": block.get("tool_use_id", ""),
                                "text": _text(block.get("content"))})
                elif isinstance(block, dict) and block.get("type") == "text":
                    texts.append(block.get("text", ""))
            if texts or role == "assistant":
                out.append({"role": role, "text": "\n".join(texts)})
        else:
            out.append({"role": "system" if role == "developer" else role, "text": _text(content)})
    return out


def _after_last_reply(items: list[dict]) -> list[dict]:
    last = max((i for i, item in enumerate(items) if item["role"] == "assistant"), default=-1)
    return items[last + 1:]


def _arguments(raw: str) -> dict:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {"_raw": raw}
    return value if isinstance(value, dict) else {"_value": value}


def _iso(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def build(exchanges: list[Exchange], *, agent: str, version: str, model: str, session: str,
          instruction: str = "") -> dict:
    steps: list[dict] = []

    def add(source: str, message: str, t: float, **extra: object) -> dict:
        step = {"step_id": len(steps) + 1, "timestamp": _iso(t), "source": source, "message": message,
                **{k: v for k, v in extra.items() if v not in (None, [], {})}}
        steps.append(step)
        return step

    metered = [e for e in exchanges if e.api in (CHAT, RESPONSES, ANTHROPIC)]
    if metered:
        for item in _items(metered[0].api, metered[0].request):
            if item["role"] in ("system", "user"):
                add(item["role"], item["text"], metered[0].t)
    elif instruction:
        add("user", instruction, time.time())
    previous: dict | None = None
    for ex in metered:
        if previous is not None:
            later = _after_last_reply(_items(ex.api, ex.request))
            results = [{"source_call_id": i["id"], "content": i["text"]} for i in later if i["role"] == "tool"]
            if results:
                previous["observation"] = {"results": results}
            for item in later:
                if item["role"] == "user":
                    add("user", item["text"], ex.t)
        if ex.status != 200:
            add("system", f"model request failed: HTTP {ex.status} {ex.error[:300]}", ex.t)
            continue
        calls = [{"tool_call_id": c["id"], "function_name": c["name"], "arguments": _arguments(c["arguments"])}
                 for c in ex.tool_calls]
        metrics = {"prompt_tokens": ex.input_tokens, "completion_tokens": ex.output_tokens,
                   "cached_tokens": ex.cached_tokens, "extra": {"latency_s": ex.latency_s,
                                                                 "usage_source": ex.usage_source}}
        previous = add("agent", ex.content, ex.t, model_name=ex.model or model, tool_calls=calls, metrics=metrics)
    done = [e for e in metered if e.status == 200]
    return {
        "schema_version": SCHEMA_VERSION, "session_id": session,
        "agent": {"name": agent, "version": version or "unknown", "model_name": model},
        "steps": steps,
        "final_metrics": {"total_prompt_tokens": sum(e.input_tokens for e in done),
                          "total_completion_tokens": sum(e.output_tokens for e in done),
                          "total_cached_tokens": sum(e.cached_tokens for e in done), "total_steps": len(steps)},
        "notes": "Built by ga's benchmark harness from the exchanges its metering proxy saw.",
    }


def export(path: Path, exchanges: list[Exchange], **kwargs: str) -> None:
    atomic_write(path, json.dumps(build(exchanges, **kwargs), ensure_ascii=False, indent=1))
