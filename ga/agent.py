"""The loop: run → step → query → execute. Every step is on disk before the next one starts."""

from __future__ import annotations

import platform
import time
from dataclasses import asdict, dataclass, field

from ga.config import Settings
from ga.context import Context
from ga.dispatch import Dispatcher, ToolContext, ToolResult, error
from ga.errors import AgentStop, Interrupted, LimitReached
from ga.escalation import Escalation
from ga.human import answer_result, candidates_of
from ga.permissions import SideEffect
from ga.prompts import render
from ga.protocols import UI, Model, Reply, ToolCall, Usage
from ga.runs import Run, tool_message
from ga.turns import Guard, assistant_message, unique_ids
from memory import index, learn


class Done(AgentStop):
    status = "done"
    exit_code = 0


@dataclass(kw_only=True)
class Outcome:
    run_id: str
    status: str
    exit_code: int
    answer: str = ""
    usage: Usage = field(default_factory=Usage)
    tool_calls: int = 0

    def as_json(self) -> dict:
        return {"run_id": self.run_id, "status": self.status, "answer": self.answer,
                "usage": asdict(self.usage), "tool_calls": self.tool_calls}


def system_prompt(settings: Settings) -> str:
    prompt = render("system.md", workdir=settings.workdir, platform=f"{platform.system()} {platform.machine()}",
                    date=time.strftime("%Y-%m-%d"))
    return "\n\n".join(filter(None, [prompt, memory_index(settings)]))


def memory_index(settings: Settings) -> str:
    """The L1 memory index: changes only when memory does, so it may sit in the stable system prompt."""
    return index.system_section(settings.home, settings.skills_path)


def opening_message(settings: Settings, task: str) -> str:
    """The run's first user message: the task, then the SOPs and facts memory holds for it (none if unrelated)."""
    return "\n\n".join(filter(None, [task, index.task_listing(settings.home, task, settings.skills_path)]))


class Agent:
    def __init__(self, *, settings: Settings, model: Model, dispatcher: Dispatcher, run: Run, ui: UI,
                 interactive: bool, answer: str | None = None):
        self.settings, self.model, self.dispatcher, self.run, self.ui = settings, model, dispatcher, run, ui
        self.answer = answer
        self.ctx = ToolContext(settings=settings, run_dir=run.folder, ui=ui, interactive=interactive,
                               state=run.state.setdefault("tool_state", {}))
        history = run.history()
        self.results, self.started = history.results, history.started
        self.usage, self.tool_calls = history.usage, history.tool_calls
        self.turns = sum(1 for m in history.messages if m["role"] == "assistant")
        self.context = Context(system_prompt(settings), settings.context_tokens)
        self.context.extend(history.messages)
        self.guard = Guard(run.state.setdefault("guard", {}), settings.strikes)
        self.escalation = Escalation(run=run, settings=settings, ui=ui)
        self.schemas = dispatcher.schemas()
        self.clock = time.monotonic()
        if settings.max_time:
            self.ctx.deadline = self.clock + settings.max_time
        if not history.messages:
            self.record({"role": "user", "content": opening_message(settings, run.state["task"])})

    def start(self) -> Outcome:
        """Run until the model answers, a limit is hit, or the run pauses for a human."""
        self._set_status("running", "")
        try:
            self.finish_pending()
            while True:
                self.check_limits()
                self.step()
        except AgentStop as stop:
            outcome = self._outcome(stop)
        except KeyboardInterrupt:
            outcome = self._outcome(Interrupted("Interrupted; the run is saved and can be resumed."))
        finally:
            self.ctx.close()
        self._set_status(outcome.status, outcome.answer)
        return outcome

    def step(self) -> None:
        self.execute(self.query())

    def query(self) -> Reply:
        messages = self.context.request(self.ctx.state.get("checkpoint", ""))
        reply = self.model.complete(messages, self.schemas, on_text=getattr(self.ui, "text", None))
        self.turns += 1
        self.usage.add(reply.usage)
        if hasattr(self.ui, "usage"):
            self.ui.usage(self.usage)
        return reply

    def execute(self, reply: Reply) -> None:
        unique_ids(reply.tool_calls, self.results, self.turns)
        nudge = self.guard.check(reply)
        if reply.finish_reason == "length" and reply.tool_calls:
            self.record(assistant_message(reply, drop_arguments=True), reply.usage)
            for call in reply.tool_calls:
                self.on_result(call, error(nudge, stage="arguments"))
            return
        if nudge:
            self.record(assistant_message(reply), reply.usage)
            self.record({"role": "user", "content": nudge})
            return
        self.record(assistant_message(reply), reply.usage)
        if not reply.tool_calls:
            raise Done(reply.content)
        results = self.dispatcher.dispatch(reply.tool_calls, self.ctx, on_start=self.on_start, on_result=self.on_result)
        self.guard.after_calls(results)
        self.settle()

    def finish_pending(self) -> None:
        """After a crash or pause: complete the last turn's calls that have no recorded result, exactly once."""
        last = next((m for m in reversed(self.context.messages) if m["role"] == "assistant"), None)
        pending = [c for c in (last or {}).get("tool_calls") or [] if c["id"] not in self.results]
        for raw in pending:
            call = ToolCall(id=raw["id"], name=raw["function"]["name"], arguments=raw["function"]["arguments"])
            if call.name == "ask_user" and self.answer is not None:
                self.on_result(call, answer_result(self.answer, candidates_of(call.arguments)))
                self.answer = None
            elif call.id in self.started and not self._rerunnable(call.name):
                self.on_result(call, error(
                    f"This {call.name} call was running when the run stopped; it may or may not have taken effect. "
                    "Check the current state before repeating it.", stage="interrupted"))
            else:
                self.dispatcher.dispatch([call], self.ctx, on_start=self.on_start, on_result=self.on_result)
        if self.answer is not None:
            added = {"role": "user", "content": f"The user adds: {self.answer}"}
            self.record(self.escalation.answered(self.answer) or added)
            self.answer = None
        self.settle()

    def settle(self) -> None:
        """After a turn's results: a no-progress loop is stopped; at stage 3 the human is asked (or the run pauses)."""
        if note := self.escalation.after_turn(self.ctx):
            self.record(note)

    def _rerunnable(self, name: str) -> bool:
        spec = self.dispatcher.specs.get(name)
        return spec is not None and spec.side_effect is SideEffect.READ_ONLY

    def check_limits(self) -> None:
        s, resume = self.settings, f"python run.py --resume {self.run.id}"
        if s.max_turns and self.turns >= s.max_turns:
            raise LimitReached(f"Reached the turn limit ({s.max_turns}). Continue with {resume} --max-turns N.")
        if s.max_tokens and self.usage.total >= s.max_tokens:
            raise LimitReached(f"Reached the token limit ({self.usage.total} ≥ {s.max_tokens}). "
                               f"Continue with {resume} --max-tokens N.")
        if s.max_time and time.monotonic() - self.clock >= s.max_time:
            raise LimitReached(f"Reached the time limit ({s.max_time:g} s). Continue with {resume}.")

    def record(self, message: dict, usage: Usage | None = None) -> None:
        event = {"type": "message", "message": message}
        if usage is not None:
            event["usage"] = asdict(usage)
        self.run.append(event)
        self.context.add(message)

    def on_start(self, call: ToolCall, args: dict) -> None:
        self.started.add(call.id)
        self.run.append({"type": "call_start", "id": call.id, "name": call.name})

    def on_result(self, call: ToolCall, result: ToolResult) -> None:
        if hasattr(self.ui, "tool_done"):
            self.ui.tool_done(call, result)
        # adds the stage hint; its notice follows the tool line
        result = self.escalation.observe(call, result, read_only=self._rerunnable(call.name))
        learn.observe(call.name, result, self.ctx, self.run.id)  # SOP reads for the ledger; memory writes guarded
        # state first: a kill between the two leaves the call "started, no result", never a lost state change
        self.run.save_state()
        self.run.append({"type": "result", "id": call.id, "name": call.name, "content": result.content,
                         "is_error": result.is_error, "details": result.details})
        self.results[call.id] = {"content": result.content}
        self.tool_calls += 1
        self.context.add(tool_message(call.id, result.content))
        if result.details.get("killed") == "interrupted":
            raise KeyboardInterrupt  # Ctrl-C during a program: it was killed and recorded; now the run stops

    def _outcome(self, stop: AgentStop) -> Outcome:
        return Outcome(run_id=self.run.id, status=stop.status, exit_code=stop.exit_code, answer=str(stop),
                       usage=self.usage, tool_calls=self.tool_calls)

    def _set_status(self, status: str, message: str) -> None:
        self.run.state.update(status=status, answer=message if status == "done" else "", message=message)
        self.run.save_state()
        self.run.append({"type": "status", "status": status, "message": message})
