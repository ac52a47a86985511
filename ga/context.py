"""The conversation the model sees: history within a token budget, with the working checkpoint always last.

The checkpoint is never stored in the history: it is attached to the newest message of each request,
so no compaction can drop it and the cached prompt prefix stays stable.
"""

from __future__ import annotations

import json

KEEP_RECENT_RESULTS = 6
"""The newest tool results are never elided."""


def estimate_tokens(message: dict) -> int:
    # ~4 chars a token: cheap and close enough for budgeting; the server's own counts land in usage.
    return len(json.dumps(message, ensure_ascii=False)) // 4 + 4


class Context:
    def __init__(self, system: str, budget_tokens: int):
        self.system = {"role": "system", "content": system}
        self.budget = budget_tokens
        self.messages: list[dict] = []
        self._sizes: list[int] = []
        self.dropped = 0

    def add(self, message: dict) -> None:
        self.messages.append(message)
        self._sizes.append(estimate_tokens(message))

    def extend(self, messages: list[dict]) -> None:
        for m in messages:
            self.add(m)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.system) + sum(self._sizes)

    def request(self, checkpoint: str = "") -> list[dict]:
        """The messages for the next request."""
        if self.budget and self.tokens > self.budget:
            self.compact()
        messages = [self.system, *self.messages]
        if checkpoint and len(messages) > 1:
            last = dict(messages[-1])
            note = f"\n\n[Working checkpoint — your notes, kept across compaction]\n{checkpoint}"
            if last["role"] in ("user", "tool") and isinstance(last.get("content"), str):
                last["content"] += note
                messages[-1] = last
            else:
                messages.append({"role": "user", "content": note.strip()})
        return messages

    def compact(self) -> None:
        """Elide old tool results first, then drop the oldest whole turns (never the task itself)."""
        tool_indexes = [i for i, m in enumerate(self.messages) if m["role"] == "tool"]
        for i in tool_indexes[:-KEEP_RECENT_RESULTS]:
            if self.tokens <= self.budget * 0.7:
                return
            m = self.messages[i]
            if not m["content"].startswith("[elided"):
                self._replace(i, {**m, "content": f"[elided old result: {len(m['content'])} chars]"})
        while self.tokens > self.budget * 0.7 and self._drop_oldest_turn():
            pass

    def _replace(self, i: int, message: dict) -> None:
        self.messages[i] = message
        self._sizes[i] = estimate_tokens(message)

    def _drop_oldest_turn(self) -> bool:
        # messages[0] is the task; a turn is an assistant message with the results and notes after it.
        start = next((i for i, m in enumerate(self.messages) if i > 0 and m["role"] == "assistant"), None)
        if start is None:
            return False
        end = start + 1
        while end < len(self.messages) and self.messages[end]["role"] in ("tool", "user"):
            end += 1
        if end >= len(self.messages) - 1:
            return False  # keep the newest turn whole
        self.dropped += 1
        del self.messages[start:end]
        del self._sizes[start:end]
        note = f"[{self.dropped} earlier turn(s) dropped to fit the context; rely on the working checkpoint]"
        if self.dropped > 1:  # the note from the first drop sits right after the task
            self._replace(1, {"role": "user", "content": note})
        else:
            self.messages.insert(1, {"role": "user", "content": note})
            self._sizes.insert(1, estimate_tokens(self.messages[1]))
        return True
