"""Failure escalation, decided by the runtime: a local fix, then a change of approach, then a human.

Every tool result is counted; a success resets the count. With n failures in a row (no success between):

  stage 1  any failure (under a small model's settings its result carries a hint to make one small, targeted fix).
  stage 2  n reaches stage2_after, or a call is repeated with the same arguments after it failed: stop
           retrying, probe the environment, re-read the SOPs, switch approach (the calls tried are listed).
  stage 3  n reaches stage3_after, or stage 2 changed nothing: (stage3_after - stage2_after) more failures
           after it, or a failed call repeated again after it. The human is asked through ask_user (autonomous:
           the run pauses); the answer comes back as a user message and the count starts over.

A program that ran and said no (a non-zero exit: grep's no match, diff's differences, a failing test run) is
information, not a failure, unless the same command says the same again: then it counts as a repeated failure
(stage 2 at once). So a long series of distinct greps or test runs never escalates on that alone.
Malformed calls (dispatcher stage "arguments") and calls cut off by a crash count for nothing here: the Guard
in ga/reply.py handles the first, the second say nothing about the approach. Separately, the same call giving
the same result repeat_nudge times in a row gets a nudge, and repeat_stop times ends the run (NoProgress).
State lives in run.state["escalation"], so it is saved with every result and survives --resume.
"""

from __future__ import annotations

import hashlib
import json
import re

from ga.config import Settings
from ga.errors import AgentStop
from ga.protocols import UI, ToolCall
from ga.runs.folder import Run
from ga.tooling.arguments import summarize
from ga.tooling.encoding import scrub, scrub_text
from ga.tooling.human import WaitingForAnswer, ask
from ga.tooling.spec import ToolContext, ToolResult

NEUTRAL = frozenset({"arguments", "interrupted"})
"""details["stage"] values that are neither a failure nor a success of the approach."""
ANSWERED_BY_HUMAN = frozenset({"ask_user"})
"""Not loop-counted: a human reads every such call and can end a loop themselves."""
TRIED_LINES = 6
"""Failed calls listed in the stage 2 hint and in the question to the human (the newest ones)."""
FAILED_KEYS = 20
_TIMING = re.compile(r"\d+(?:\.\d+)?\s?m?s\b")

HINT_1 = "[Read the error above and make one small, targeted fix.]"
HINT_2 = ("[Escalation stage 2: {why}. Stop retrying. Probe the environment (what exists, what runs, versions), "
          "re-read the relevant SOPs, then switch to a different approach. Tried so far:\n{tried}]")
HINT_2_AGAIN = "[Stage 2, {n} failures in a row: do not retry what failed; switch approach.]"
HINT_3 = "[Escalation stage 3: {why}. The user has been asked for help; wait for the answer.]"
LOOP = ("[Same call, same result {n} times in a row: no progress. Use what you already have, or do something "
        "different.]")
ANSWER = "The user, asked for help because the task was stuck, answers: {answer}"


class NoProgress(AgentStop):
    """The model kept making the same call with the same result."""

    status = "failed"
    exit_code = 1


def call_key(call: ToolCall) -> str:
    """Same tool and same parsed arguments → same key (key order and whitespace do not matter)."""
    args = call.arguments
    if isinstance(args, str):
        try:
            args = json.loads(args or "{}")
        except (json.JSONDecodeError, RecursionError):
            pass
    text = json.dumps(scrub([call.name, args]), sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def gist(content: str, limit: int = 80, *, sentence: bool = True) -> str:
    """The first sentence of an error; after a status line like "[exit code 1 · 0.1 s]", its last output line."""
    lines = [line.strip() for line in content.splitlines() if line.strip()]
    if not lines:
        return "(no message)"
    text = lines[0].split(". ", maxsplit=1)[0] if sentence else lines[0]
    body = [line for line in lines[1:] if not line.startswith(("[", "hint:", "warning:", "note:"))]
    if text.startswith("[") and body:
        text = f"{text} {body[-1]}"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def informative(result: ToolResult) -> bool:
    """A program that ran to its end and exited non-zero (not killed, not refused): what it said is information."""
    code, details = result.details.get("exit_code"), result.details
    return isinstance(code, int) and code != 0 and not details.get("killed") and not details.get("stage")


def tried_line(call: ToolCall, result: ToolResult) -> str:
    return f"{call.name} {summarize(call.arguments, 50)} → {gist(result.content)}"


class Escalation:
    def __init__(self, *, run: Run, settings: Settings, ui: UI, failure_hint: bool = False):
        self.run, self.settings, self.ui = run, settings, ui
        self.failure_hint = failure_hint
        """Stage 1 adds HINT_1 to every failure (ModelSettings.failure_hint: small models only)."""
        self.state: dict = run.state.setdefault("escalation", {})

    def observe(self, call: ToolCall, result: ToolResult, *, read_only: bool = False) -> ToolResult:
        """Count one result; return it with the hint the model should read, if any.

        A success resets the count when it can be the fix: a change, a human's answer, or the same tool that failed
        working now. Looking around (another read-only tool succeeding beside the failing one) does not.
        """
        if self.state.get("asking"):
            if call.name == "ask_user" and not result.is_error:
                self._reset("the user answered the model's own question")
            return result  # while a question to the human is pending, nothing else moves the stage
        if result.details.get("stage") in NEUTRAL or result.details.get("killed") == "interrupted":
            return result  # the user's own Ctrl-C is not a failure of the approach
        if result.is_error and informative(result):
            hint = self._information(call, result)
        elif result.is_error:
            hint = self._failed(call, result)
        else:
            hint = self._succeeded(call, result, read_only)
        if hint:
            result.content = f"{result.content}\n{hint}"
        return result

    def after_turn(self, ctx: ToolContext) -> dict | None:
        """Once a turn's results are recorded: stop a no-progress loop, or ask the human (stage 3).

        Returns the user message carrying the human's answer. In autonomous mode ask_user raises WaitingForAnswer.
        """
        s, limit = self.state, self.settings.repeat_stop
        if limit and s.get("same", 0) >= limit:
            s["same"] = 0  # a resumed run gets a fresh count
            raise NoProgress(f"Stopped a loop with no progress: the same call ({s.get('same_call', '?')}) gave the "
                             f"same result {limit} times in a row.")
        if not s.get("asking"):
            return None
        try:
            answer = ask(s["asking"], [], ctx).details["answer"]
        except EOFError:  # the terminal went away: wait like an autonomous run
            raise WaitingForAnswer(s["asking"], []) from None
        return self.answered(answer)

    def answered(self, answer: str) -> dict | None:
        """The human's answer to a pending stage 3 question, as the user message to record (None: no question)."""
        if not self.state.get("asking"):
            return None
        # the caller records the message before the next save_state: a kill in between asks again, never loses it
        self._reset("the user answered")
        return {"role": "user", "content": ANSWER.format(answer=answer.strip())}

    def _succeeded(self, call: ToolCall, result: ToolResult, read_only: bool) -> str | None:
        s = self.state
        if not read_only or call.name in ANSWERED_BY_HUMAN or call.name == s.get("failed_tool", call.name):
            if s.get("stage"):
                self._change(0, f"{call.name} succeeded")
            for name in ("failures", "stage", "stage2_at", "failed", "tried", "last_error", "failed_tool", "exits"):
                s.pop(name, None)
        if call.name in ANSWERED_BY_HUMAN:
            s["same"], s["same_key"] = 0, ""
            return None
        # timings ("· 0.51 s") differ between identical results: they are not progress
        outcome = _TIMING.sub("", scrub_text(result.content))
        key = call_key(call) + hashlib.sha1(outcome.encode()).hexdigest()[:8]
        s["same"] = s.get("same", 0) + 1 if s.get("same_key") == key else 1
        s["same_key"], s["same_call"] = key, f"{call.name} {summarize(call.arguments, 50)}"
        if s["same"] != self.settings.repeat_nudge:
            return None
        self._event({"type": "guard", "kind": "repeat", "count": s["same"], "call": s["same_call"]},
                    f"no progress: {s['same_call']} gave the same result {s['same']} times in a row")
        return LOOP.format(n=s["same"])

    def _information(self, call: ToolCall, result: ToolResult) -> str | None:
        """A non-zero exit: nothing, unless this very command said this very thing before (then a repeated failure)."""
        s = self.state
        key = call_key(call) + hashlib.sha1(_TIMING.sub("", scrub_text(result.content)).encode()).hexdigest()[:8]
        if key in s.get("exits", []):
            return self._failed(call, result, repeat=True)
        s["exits"] = [*s.get("exits", []), key][-FAILED_KEYS:]
        return None

    def _failed(self, call: ToolCall, result: ToolResult, *, repeat: bool = False) -> str:
        s = self.state
        key = call_key(call)
        repeat = repeat or key in s.get("failed", [])
        s["failed"] = [*s.get("failed", []), key][-FAILED_KEYS:]
        s["tried"] = [*s.get("tried", []), tried_line(call, result)][-TRIED_LINES:]
        s["failures"] = n = s.get("failures", 0) + 1
        s["last_error"] = gist(result.content, 300, sentence=False)
        s["same"], s["failed_tool"] = 0, call.name
        stage, why = self._next_stage(n, repeat, call.name)
        hint = HINT_1 if self.failure_hint else ""
        if stage == s.get("stage", 0):
            return hint if stage == 1 else HINT_2_AGAIN.format(n=n)
        if stage == 3:
            s["asking"] = self._question(n)
        self._change(stage, why, question=s.get("asking"))
        if stage == 1:
            return hint
        if stage == 2:
            s["stage2_at"] = n
            return HINT_2.format(why=why, tried="\n".join(f"- {line}" for line in s["tried"]))
        return HINT_3.format(why=why)

    def _next_stage(self, n: int, repeat: bool, name: str) -> tuple[int, str]:
        s, first, last = self.state, self.settings.stage2_after, self.settings.stage3_after
        current = s.get("stage", 0)
        if last and n >= last:
            return 3, f"{n} failures in a row"
        if last and current >= 2 and repeat:
            return 3, f"{name} repeated again with arguments that already failed"
        since = n - s.get("stage2_at", 0)
        if last and current >= 2 and since >= max(1, last - first):
            return 3, f"{since} more failures since the change of approach"
        if current >= 2:
            return current, ""
        if first and n >= first:
            return 2, f"{n} failures in a row"
        if repeat:
            return 2, f"{name} repeated with the same arguments after it failed"
        return 1, f"{name} failed"

    def _question(self, n: int) -> str:
        task = " ".join(str(self.run.state.get("task", "")).split())
        task = task if len(task) <= 300 else task[:299] + "…"
        tried = "\n".join(f"- {line}" for line in self.state.get("tried", []))
        return (f"I am stuck: {n} failed attempts in a row.\nGoal: {task}\nTried:\n{tried}\n"
                f"Last error: {self.state.get('last_error', '')}\nHow should I proceed?")

    def _reset(self, why: str) -> None:
        self._change(0, why)
        self.state.clear()

    def _change(self, stage: int, why: str, question: str | None = None) -> None:
        previous, self.state["stage"] = self.state.get("stage", 0), stage
        event = {"type": "stage", "stage": stage, "reason": why}
        self.run.append({**event, "question": question} if question else event)
        self.ui.stage(stage, why, previous)

    def _event(self, event: dict, line: str | None) -> None:
        self.run.append(event)
        if line:
            self.ui.notice(line)
