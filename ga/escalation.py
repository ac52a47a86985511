"""One failure counter for the run, decided by the runtime: a local fix, then a change of approach, then a human.

Tool results: a success that can be the fix resets the count. With n failures in a row:
  stage 1  any failure (a small model's settings add a hint to make one small, targeted fix).
  stage 2  n reaches stage2_after, or a call is sent again with arguments that already failed: stop retrying, probe
           the environment, re-read the SOPs, switch approach (the calls tried are listed).
  stage 3  n reaches stage3_after, or stage 2 changed nothing, once a call other than the failing one was tried (a
           model that only repeats one call: at stage3_after + 2), or the same call gave the same result repeat_stop
           times (at repeat_nudge times it is nudged): the human is asked (unattended, the run pauses, exit 3); the
           answer comes back as a user message and the count starts over. The same result again is no failure.
A program that exited non-zero is information, unless the same command says the same again (a repeated failure).
Malformed calls and calls cut off by a crash or Ctrl-C say nothing about the approach. Replies: an empty, cut,
filtered or looping reply, or a turn whose calls were all malformed, is a strike; `strikes` in a row end the run.
Under a small model's settings a reply that does not read as an answer is doubted once. The State lives in
run.state["escalation"], saved with every result, so it survives --resume."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from dataclasses import dataclass, field

from ga.answer import UNWRITTEN, loop_note, way_out
from ga.config import Settings
from ga.model.settings import ModelSettings
from ga.protocols import UI, Reply, ToolCall
from ga.reply import DOUBT, UNUSABLE, UnusableReplies, not_an_answer, unusable
from ga.runs.folder import Run
from ga.tooling.arguments import summarize
from ga.tooling.dispatch import TOO_MANY
from ga.tooling.effects import NOT_RUN
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
_VOLATILE = re.compile(r"\d+(?:\.\d+)?\s?m?s\b|(?<=page content )[0-9a-f]{4}\b")

HINT_1 = "[Read the error above and make one small, targeted fix.]"
HINT_2 = ("[Escalation stage 2: {why}. Stop retrying. Probe the environment (what exists, what runs, versions), "
          "re-read the relevant SOPs, then switch to a different approach.{alternative} Tried so far:\n{tried}]")
HINT_2_AGAIN = "[Stage 2, {n} failures in a row: do not retry what failed; switch approach.]"
HINT_3 = "[Escalation stage 3: {why}. The user has been asked for help; wait for the answer.]"
LOOP = ("[Same call, same result {n} times in a row: no progress. Use what you already have, or do something "
        "different; to wait for something, wait longer between checks.]")
ANSWER = "The user, asked for help because the task was stuck, answers: {answer}"
ECHOES = (HINT_1, HINT_2, HINT_2_AGAIN, HINT_3, LOOP, TOO_MANY, NOT_RUN, UNWRITTEN)


@dataclass(kw_only=True)
class State:
    stage: int = 0
    failures: int = 0
    """Failed calls in a row (no success that can be the fix between)."""
    stage2_at: int = 0
    failed: list[str] = field(default_factory=list)
    """Keys of the newest failed calls: one sent again is a repeat."""
    exits: list[str] = field(default_factory=list)
    """Keys of the newest non-zero exits with what they said: the same again is a repeated failure."""
    tried: list[str] = field(default_factory=list)
    last_error: str = ""
    failed_tool: str = ""
    same: int = 0
    """Successful calls in a row that were the same call with the same result."""
    same_key: str = ""
    same_call: str = ""
    asking: str = ""
    """The stage 3 question, until the human answers it."""
    strikes: int = 0
    """Unusable replies in a row."""
    doubted: bool = False
    failed_last: bool = False
    """Every call of the last turn failed (a one-word answer now is a give-up)."""


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


def _said_key(call: ToolCall, result: ToolResult) -> str:
    # timings ("· 0.51 s") and a page's framing nonce (web_scan) differ between identical results: not progress
    return call_key(call) + hashlib.sha1(_VOLATILE.sub("", scrub_text(result.content)).encode()).hexdigest()[:8]


def gist(content: str, limit: int = 80, *, sentence: bool = True) -> str:
    """The first sentence of an error; after a status line like "[exit code 1 · 0.1 s]", its last output line."""
    if not (lines := [line.strip() for line in content.splitlines() if line.strip()]):
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


class Escalation:
    def __init__(self, *, run: Run, settings: Settings, ui: UI, model_settings: ModelSettings | None = None):
        self.run, self.settings, self.ui = run, settings, ui
        self.model_settings = model_settings or ModelSettings()  # failure_hint, doubt_answers
        known = {f.name for f in dataclasses.fields(State)}
        self.state = State(**{k: v for k, v in (run.state.get("escalation") or {}).items() if k in known})

    def reply(self, reply: Reply) -> tuple[str, str] | None:
        """Before dispatch: (kind, nudge) for a reply that is unusable or, once, doubted; None: use it as it is."""
        s = self.state
        if found := unusable(reply):
            self._strike(found[0])
        elif self.model_settings.doubt_answers and not reply.tool_calls and not s.doubted and (why := not_an_answer(
                reply.content, after_failure=s.failed_last, echoes=ECHOES)):
            s.doubted = True  # one nudge: the same kind of reply next counts as the answer
            found = "doubt", DOUBT.format(why=why)
        self._keep()
        return found

    def observe(self, call: ToolCall, result: ToolResult, *, read_only: bool = False) -> ToolResult:
        """Count one result; return it with the hint the model should read, if any.

        A success resets the count when it can be the fix: a change, a human's answer, or the same tool that failed
        working now. Looking around (another read-only tool succeeding beside the failing one) does not."""
        s, hint = self.state, None
        if s.asking:  # while a question to the human is pending, nothing else moves the stage
            if call.name == "ask_user" and not result.is_error:
                self._reset("the user answered the model's own question")
        elif result.details.get("stage") in NEUTRAL or result.details.get("killed") == "interrupted":
            pass  # the user's own Ctrl-C is not a failure of the approach
        elif result.is_error and informative(result):
            key = _said_key(call, result)
            if key in s.exits:
                hint = self._failed(call, result, repeat=True)
            s.exits = [*s.exits, key][-FAILED_KEYS:]
        elif result.is_error:
            hint = self._failed(call, result)
        else:
            hint = self._succeeded(call, result, read_only)
        self._keep()
        if hint:
            result.content = f"{result.content}\n{hint}"
        return result

    def after_turn(self, ctx: ToolContext, results: list[ToolResult] | None = None) -> dict | None:
        """Once a turn's results are recorded: a turn of malformed calls only is a strike; at stage 3 the human is
        asked, and the user message carrying the answer is returned (unattended, WaitingForAnswer is raised)."""
        s = self.state
        if results is not None:
            s.doubted, s.failed_last = False, bool(results) and all(r.is_error for r in results)
            if results and all(r.details.get("stage") == "arguments" for r in results):
                self._strike("malformed")
            else:
                s.strikes = 0
            self._keep()
        if not s.asking:
            return None
        try:
            answer = ask(s.asking, [], ctx).details["answer"]
        except EOFError:  # the terminal went away: wait like an autonomous run
            raise WaitingForAnswer(s.asking, []) from None
        return self.answered(answer)

    def answered(self, answer: str) -> dict | None:
        """The human's answer to a pending stage 3 question, as the user message to record (None: no question)."""
        if not self.state.asking:
            return None
        # the caller records the message before the next save_state: a kill in between asks again, never loses it
        self._reset("the user answered")
        return {"role": "user", "content": ANSWER.format(answer=answer.strip())}

    def _succeeded(self, call: ToolCall, result: ToolResult, read_only: bool) -> str | None:
        s = self.state
        if not read_only or call.name in ANSWERED_BY_HUMAN or call.name == (s.failed_tool or call.name):
            if s.stage:
                self._change(0, f"{call.name} succeeded")
            self.state = s = State(same=s.same, same_key=s.same_key, same_call=s.same_call, strikes=s.strikes,
                                   doubted=s.doubted, failed_last=s.failed_last)
        if call.name in ANSWERED_BY_HUMAN:
            s.same, s.same_key = 0, ""
            return None
        key = _said_key(call, result)
        s.same = s.same + 1 if s.same_key == key else 1
        s.same_key, s.same_call = key, f"{call.name} {summarize(call.arguments, 50)}"
        if (stop := self.settings.repeat_stop) and s.same >= stop:
            why = f"the same call ({s.same_call}) gave the same result {s.same} times in a row"
            return self._ask(why, f"I am stuck: {why}.\nLast result: {gist(result.content, 300, sentence=False)}")
        if s.same != self.settings.repeat_nudge:
            return None
        self.run.append({"type": "nudge", "kind": "repeat", "count": s.same, "call": s.same_call})
        self.ui.notice(f"no progress: {s.same_call} gave the same result {s.same} times in a row")
        return LOOP.format(n=s.same) + loop_note(self.run, self.settings, self.model_settings)

    def _failed(self, call: ToolCall, result: ToolResult, *, repeat: bool = False) -> str:
        s, key = self.state, call_key(call)
        repeat = repeat or key in s.failed
        s.failed = [*s.failed, key][-FAILED_KEYS:]
        s.tried = [*s.tried, f"{call.name} {summarize(call.arguments, 50)} → {gist(result.content)}"][-TRIED_LINES:]
        s.failures = n = s.failures + 1
        s.last_error = gist(result.content, 300, sentence=False)
        s.same, s.failed_tool = 0, call.name
        stage, why = self._next_stage(n, repeat, call.name)
        hint = HINT_1 if self.model_settings.failure_hint else ""
        if stage == s.stage:
            return hint if stage == 1 else HINT_2_AGAIN.format(n=n)
        if stage == 3:
            return self._ask(why, f"I am stuck: {n} failed attempts in a row.")
        self._change(stage, why)
        if stage == 1:
            return hint
        s.stage2_at = n
        return HINT_2.format(why=why, alternative=way_out(call, self.model_settings.action_format),
                             tried="\n".join(f"- {line}" for line in s.tried))

    def _next_stage(self, n: int, repeat: bool, name: str) -> tuple[int, str]:
        s, first, last = self.state, self.settings.stage2_after, self.settings.stage3_after
        # the human is asked once a different call failed too (the same call sent again tried nothing new), or after
        # two more failures than stage3_after when the model only repeats itself
        since = n - s.stage2_at
        tried_other = s.stage >= 2 and len(set(s.failed[-(since + 1):])) > 1
        if last and n >= last and (tried_other or n >= last + 2 or (s.stage < 2 and len(set(s.failed)) > 1)):
            return 3, f"{n} failures in a row"
        if last and s.stage >= 2 and repeat and tried_other:
            return 3, f"{name} repeated again with arguments that already failed"
        if last and s.stage >= 2 and since >= max(1, last - first) and (tried_other or n >= last + 2):
            return 3, f"{since} more failures since the change of approach"
        if s.stage >= 2:
            return s.stage, ""
        if first and n >= first:
            return 2, f"{n} failures in a row"
        if repeat:
            return 2, f"{name} repeated with the same arguments after it failed"
        return 1, f"{name} failed"

    def _ask(self, why: str, opening: str) -> str:
        """Stage 3: the question the human will be asked after this turn; the hint for the model."""
        s = self.state
        task = " ".join(str(self.run.state.get("task", "")).split())
        tried = "".join(f"- {line}\n" for line in s.tried)
        s.asking = (f"{opening}\nGoal: {task if len(task) <= 300 else task[:299] + '…'}\n"
                    + (f"Tried:\n{tried}Last error: {s.last_error}\n" if tried else "") + "How should I proceed?")
        self._change(3, why, question=s.asking)
        return HINT_3.format(why=why)

    def _strike(self, kind: str) -> None:
        s = self.state
        s.strikes += 1
        if self.settings.strikes and s.strikes >= self.settings.strikes:
            s.strikes = 0  # a resumed run gets fresh strikes
            self._keep()
            said, advice = UNUSABLE[kind]
            raise UnusableReplies(f"The model gave {self.settings.strikes} unusable replies in a row (the last: "
                                  f"{said}); stopping. {advice}")

    def _reset(self, why: str) -> None:
        self._change(0, why)
        self.state = State()
        self._keep()

    def _change(self, stage: int, why: str, question: str | None = None) -> None:
        previous, self.state.stage = self.state.stage, stage
        event = {"type": "stage", "stage": stage, "reason": why}
        self.run.append({**event, "question": question} if question else event)
        self.ui.stage(stage, why, previous)

    def _keep(self) -> None:
        """The state into run.state, saved with the next result."""
        self.run.state["escalation"] = dataclasses.asdict(self.state)
