"""A reply that repeats the last turn's calls exactly is asked again, warmer (ModelSettings.resample_temperatures).

At temperature 0 a small model that repeated a step once most often repeats it until the run's limits: the same
failing `python3 reverse.py` five times over "No such file", the same `cat longest.txt` after the task was done,
whatever the hints beside the result say. The same request sampled warmer gives another reply (a fix, the missing
step, or the final answer); the repeat is dropped unseen, its tokens counted. When every warmer reply repeats too,
the last one goes on as any reply does (the repeat guards and escalation take it from there)."""

from __future__ import annotations

import json
from collections.abc import Callable

from ga.protocols import Model, Reply, Usage


class Resampling:
    """Wraps the model (the client, or the text format around it) for the loop."""

    def __init__(self, model: Model, temperatures: tuple[float, ...], on_retry: Callable[[str], None] | None = None):
        self.model, self.temperatures, self.on_retry = model, temperatures, on_retry

    def __getattr__(self, name: str) -> object:  # the client's other attributes (its settings, the model list)
        return getattr(self.model, name)

    def context_window(self) -> int | None:
        return self.model.context_window()

    def complete(self, messages: list[dict], tools: list[dict], on_text: Callable[[str], None] | None = None,
                 *, deadline: float | None = None, temperature: float | None = None) -> Reply:
        reply = self.model.complete(messages, tools, on_text, deadline=deadline, temperature=temperature)
        last, spent = last_calls(messages), Usage()
        for warmer in self.temperatures if tools and last else ():
            if calls(reply) != last:
                break
            spent.add(reply.usage)
            if self.on_retry:
                self.on_retry(f"the reply repeated the last step exactly; asking again at temperature {warmer:g}")
            reply = self.model.complete(messages, tools, on_text, deadline=deadline, temperature=warmer)
        if spent.requests:
            reply.resampled = spent
        return reply


def calls(reply: Reply) -> list[tuple[str, object]]:
    return [(c.name, _parsed(c.arguments)) for c in reply.tool_calls]


def last_calls(messages: list[dict]) -> list[tuple[str, object]]:
    """The calls of the history's last assistant message, when it made any (else none: an answer, a nudge)."""
    last = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    return [(c["function"]["name"], _parsed(c["function"]["arguments"])) for c in (last or {}).get("tool_calls") or []]


def _parsed(arguments: str | dict | None) -> object:
    """Arguments compared as values: the same call with other spacing in its JSON is the same call."""
    try:
        return json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return arguments
