"""The conversation the model sees: history kept within a token budget, compacted in steps so the prefix caches.

Between two steps, consecutive requests share a byte-identical prefix: messages are only appended, and the working
checkpoint rides on the newest message (it is never stored in the history, so nothing can drop it). A step happens
when a request would pass the budget: the oldest tool results become one-line stubs (what they said, where the whole
is kept) down to a low-water mark, while the task, the user's messages and the newest turns stay verbatim. Only when
masking cannot get under the budget are the oldest turns folded into a structured hand-off (ga/context/compaction.py).
Whole turns only, so a tool call and its result are never parted. Masks, the hand-off and what the server taught
us (its window, its token scale) live in the run's state: a resumed run sends the very same prefix."""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path

from ga.context import compaction
from ga.tooling import tokens

log = logging.getLogger(__name__)

LOW_WATER = {"small": 0.5, "large": 0.4}
"""A step that masking the old turns leaves above this share of the budget masks the newest turns too (but one).
Per kind of step (state["steps"], GA_CONTEXT_STEPS): "large" ones, for a local server that re-reads everything
after a change, go deeper so that the next one comes later (bench/perf/context_bench.py --steps large)."""
FOLD_ABOVE = 0.75
"""Old turns are folded into a hand-off only when masking alone leaves the request above this share of the budget
(stubs and recent turns filling it): otherwise steps would come every turn or two."""
KEEP_TURNS = 3
"""The newest turns keep their results verbatim (unless the budget allows only the newest one)."""
RESULTS_FLOOR, RESULTS_CEILING = 1_500, 12_500
"""Bounds of the budget one turn's results share (tokens; the ceiling is about 50,000 characters)."""
STUB_TOKENS = 70
CHECKPOINT_NOTE = "\n\n[Working checkpoint — your notes, kept across compaction]\n"


def window_cap(window: int) -> int:
    """The most a request may take of a model's window: room is left for the reply and for estimate error."""
    return window - max(1_024, window // 8)


@dataclass(kw_only=True)
class _Entry:
    message: dict
    """As recorded in the trajectory."""
    shown: dict
    """What the model sees: the message, or its masked form."""
    tokens: int
    turn: int
    """0 for what comes before the first reply (the task); each assistant message starts the next."""
    full_output: str | None = None
    """For a tool result: where its tool kept the whole output, if it cut it."""
    masked: bool = False


@dataclass(kw_only=True)
class Step:
    """What one compaction step did (for the trajectory, the terminal and the tools' own records)."""

    before: int
    after: int = 0
    masked: int = 0
    folded: int = 0
    forgotten: set[str] = field(default_factory=set)
    """Call ids whose results the model no longer sees in full."""


class Context:
    def __init__(self, system: str, *, budget: int, tools: list[dict] | None = None, window: int = 0,
                 state: dict | None = None, save_output: Callable[[str, str], Path] | None = None,
                 summarise: Callable[[list[dict]], str] | None = None,
                 on_step: Callable[[Step], None] | None = None, runtime_notes: Collection[str] = ()):
        self.system = {"role": "system", "content": system}
        self._budget, self._window = budget, window
        self.state = state if state is not None else {}
        self.save_output, self.summarise, self.on_step = save_output, summarise, on_step
        self.runtime_notes = runtime_notes
        """What the loop itself sends as the user (nudges): never carried into a hand-off as the user's words."""
        self.set_tools(tools)
        self.entries: list[_Entry] = []
        self.last_estimate = 0
        """Unscaled estimate of the last request built: the server's count of it calibrates the scale."""

    def set_tools(self, tools: list[dict] | None) -> None:
        """The schemas every request carries (deferred tools join later: ga/tooling/deferral.py)."""
        self._fixed = tokens.message_tokens(self.system) + (tokens.request_tokens([], tools) if tools else 0)

    # -- the budget ---------------------------------------------------------------------------------------
    @property
    def window(self) -> int:
        """The model's window: GA_MODEL_WINDOW, else what the server reported or its errors said."""
        return self._window or self.state.get("window", 0)

    @property
    def budget(self) -> int:
        limits = [self._budget, self.state.get("cap") or self._budget]
        if self.window:
            limits.append(window_cap(self.window))
        return max(1_000, min(limits))

    @property
    def scale(self) -> float:
        """Server tokens per estimated token, learned from the usage the server reports."""
        return self.state.get("scale", 1.0)

    def learn_window(self, window: int | None) -> None:
        if window and window != self.state.get("window"):
            self.state["window"] = window
            log.info("the model's window: %d tokens; the history budget is %d", window, self.budget)

    def observe(self, prompt_tokens: int) -> None:
        """The server counted the last request as `prompt_tokens`: count like it from now on."""
        if self.last_estimate > 200 and prompt_tokens > 0:
            self.state["scale"] = round(min(4.0, max(0.5, prompt_tokens / self.last_estimate)), 3)

    def overflowed(self, *, window: int | None, sent: int | None, checkpoint: str = "") -> Step:
        """The server refused the last request as too long: learn what its error said, then compact harder."""
        self.learn_window(window)
        if sent and self.last_estimate:
            self.state["scale"] = max(self.scale, round(sent / self.last_estimate, 3))
        if not window and not sent:  # nothing to go by: aim well below what was refused
            self.state["cap"] = int(self.tokens(checkpoint) * 0.7)
        return self.step(checkpoint)

    # -- history ------------------------------------------------------------------------------------------
    def add(self, message: dict, *, full_output: str | None = None) -> None:
        turn = (self.entries[-1].turn if self.entries else 0) + (message["role"] == "assistant")
        index = len(self.entries)
        shown = self.state.get("masked", {}).get(str(index))
        if shown is not None and _ids(shown) != _ids(message):
            shown = None  # a state that does not fit this history (edited by hand?): show the message itself
        entry = _Entry(message=message, shown=shown or message, turn=turn, full_output=full_output,
                       masked=shown is not None, tokens=0)
        entry.tokens = tokens.message_tokens(entry.shown)
        self.entries.append(entry)

    def extend(self, messages: list[dict], full_outputs: dict[str, str | None] | None = None) -> None:
        for m in messages:
            self.add(m, full_output=(full_outputs or {}).get(m.get("tool_call_id", "")))

    @property
    def messages(self) -> list[dict]:
        """Every message of the run, as recorded (not as shown)."""
        return [e.message for e in self.entries]

    @property
    def _summary(self) -> dict:
        """The hand-off: upto (entries folded), text, users (their messages carried), turns, message, tokens."""
        return self.state.get("summary", {})

    def _visible(self) -> list[_Entry]:
        folded = self._summary.get("upto", 0)
        return [e for e in self.entries[:folded] if e.turn == 0] + self.entries[folded:]

    def tokens(self, checkpoint: str = "") -> int:
        """The next request's size in the server's tokens (estimated, then scaled)."""
        return round(self._raw(checkpoint) * self.scale)

    def _raw(self, checkpoint: str) -> int:
        note = tokens.estimate(CHECKPOINT_NOTE + checkpoint) if checkpoint else 0
        return self._fixed + self._summary.get("tokens", 0) + note + sum(e.tokens for e in self._visible())

    # -- requests -----------------------------------------------------------------------------------------
    def request(self, checkpoint: str = "") -> list[dict]:
        """The messages for the next request; a compaction step first if they would pass the budget."""
        if self.tokens(checkpoint) > self.budget:
            self.step(checkpoint)
        visible = self._visible()
        preamble = [e.shown for e in visible if e.turn == 0]
        hand_off = [self._summary["message"]] if self._summary else []
        messages = [self.system, *preamble, *hand_off, *(e.shown for e in visible if e.turn)]
        self.last_estimate = self._raw(checkpoint)
        if checkpoint and len(messages) > 1:
            last = dict(messages[-1])
            if last["role"] in ("user", "tool") and isinstance(last.get("content"), str):
                last["content"] += CHECKPOINT_NOTE + checkpoint
                messages[-1] = last
            else:
                messages.append({"role": "user", "content": (CHECKPOINT_NOTE + checkpoint).strip()})
        return messages

    def results_budget(self) -> int:
        """Tokens the results of the next turn may take together: half the room the context would have after its
        next masking step, within a floor and a ceiling."""
        newest = self.entries[-1].turn if self.entries else 0
        kept = self._fixed + self._summary.get("tokens", 0)
        for e in self._visible():
            maskable = e.message["role"] == "tool" and not e.masked and e.turn <= newest - KEEP_TURNS
            kept += min(e.tokens, STUB_TOKENS) if maskable else e.tokens
        room = round((self.budget / self.scale) - kept)
        return max(min(RESULTS_FLOOR, self.budget // 4), min(RESULTS_CEILING, room // 2))

    # -- compaction -----------------------------------------------------------------------------------------
    def step(self, checkpoint: str = "") -> Step:
        """Mask every turn but the newest few (so the next step is as far away as it can be), then, if that leaves
        more than the low-water mark, all but the newest; fold old turns into a hand-off only when masking alone
        stays far from it; mask the newest turn only if nothing else fits."""
        step = Step(before=self.tokens(checkpoint))
        low = int(self.budget * LOW_WATER[self.state.get("steps") or "small"])
        self._mask_down(checkpoint, 0, KEEP_TURNS, step)
        self._mask_down(checkpoint, low, 1, step)
        if self.tokens(checkpoint) > self.budget * FOLD_ABOVE:
            self._fold(checkpoint, low, step)
        self._mask_down(checkpoint, self.budget, 0, step)
        step.after = self.tokens(checkpoint)
        if self.on_step:
            self.on_step(step)
        return step

    def _mask_down(self, checkpoint: str, target: int, keep: int, step: Step) -> None:
        """Mask turns oldest first, all but the newest `keep`, until the request is within `target`."""
        newest = self.entries[-1].turn if self.entries else 0
        folded = self._summary.get("upto", 0)  # from the oldest turn not folded into the hand-off
        for turn in range(self.entries[folded].turn if 0 < folded < len(self.entries) else 1, newest - keep + 1):
            if self.tokens(checkpoint) <= target:
                return
            self._mask_turn(turn, step)

    def _mask_turn(self, turn: int, step: Step) -> None:
        entries = [(i, e) for i, e in enumerate(self.entries) if e.turn == turn and not e.masked]
        calls = {c["id"]: c["function"] for e in self.entries if e.turn == turn
                 for c in e.message.get("tool_calls") or []}
        for i, e in entries:
            if e.message["role"] == "tool" and e.tokens > compaction.STUB_MIN_TOKENS:
                call = calls.get(e.message.get("tool_call_id"), {})
                text = compaction.stub(call, e.message["content"], self._kept_at(e))
                self._show(i, {**e.message, "content": text})
                step.masked += 1
                step.forgotten.add(e.message.get("tool_call_id", ""))
            elif e.message["role"] == "assistant" and (short := compaction.short_assistant(e.message)):
                self._show(i, short)

    def _kept_at(self, e: _Entry) -> str:
        if e.full_output:
            return f"file_read {e.full_output}"
        if self.save_output is None:
            return "the run's trajectory has it"
        try:
            path = self.save_output(f"{e.message.get('tool_call_id') or 'result'}.txt", e.message["content"])
        except OSError as err:  # a full disk: the trajectory still has it
            return f"the run's trajectory has it (saving it failed: {err.strerror or err})"
        return f"file_read {path}"

    def _show(self, i: int, shown: dict) -> None:
        e = self.entries[i]
        e.shown, e.masked, e.tokens = shown, True, tokens.message_tokens(shown)
        self.state.setdefault("masked", {})[str(i)] = shown

    def _fold(self, checkpoint: str, low: int, step: Step) -> None:
        """Fold the oldest turns (all but the newest) into one hand-off note, as far as needed to reach `low`."""
        summary = self._summary
        start, newest = summary.get("upto", 0), self.entries[-1].turn
        excess, upto = self.tokens(checkpoint) - low + compaction.SUMMARY_TOKENS, start
        for i in range(start, len(self.entries)):
            e = self.entries[i]
            if e.turn >= newest or (excess <= 0 and e.message["role"] == "assistant"):
                upto = i
                break
            excess -= 0 if e.turn == 0 or e.message["role"] == "user" else round(e.tokens * self.scale)
        folded = [e for e in self.entries[start:upto] if e.turn]
        if not folded or not any(e.message["role"] == "assistant" for e in folded):
            return
        text = self._summary_text(summary.get("text", ""), folded)
        users = compaction.carried([e.message for e in folded], summary.get("users", []), self.runtime_notes)
        turns = summary.get("turns", 0) + len({e.turn for e in folded})
        message = compaction.hand_off(text, turns, users)
        self.state["summary"] = {"upto": upto, "text": text, "users": users, "turns": turns, "message": message,
                                 "tokens": tokens.message_tokens(message)}
        for i in range(start, upto):
            self.state.get("masked", {}).pop(str(i), None)  # folded away: their masks are no longer needed
        step.folded += len(folded)
        step.forgotten |= {e.message.get("tool_call_id", "") for e in folded if e.message["role"] == "tool"}

    def _summary_text(self, previous: str, folded: list[_Entry]) -> str:
        task = next((e.message.get("content") or "" for e in self.entries if e.message["role"] == "user"), "")
        budget = int(self.budget / self.scale)  # the side request is sized in estimated tokens, like the rest
        request = compaction.summary_request(str(task), previous, [e.shown for e in folded], budget)
        text = self.summarise(request) if self.summarise else ""
        if text.strip():
            return text
        return compaction.fallback_summary(previous, [e.message for e in folded], "the model gave no summary")


def _ids(m: dict) -> list:
    """A message's role and call ids: a saved masked form belongs to the message with the same."""
    return [m.get("role"), m.get("tool_call_id"), *(c.get("id") for c in m.get("tool_calls") or [])]
