"""The loop: run → step → query → execute. Every step is on disk before the next one starts."""

from __future__ import annotations

import time
from dataclasses import asdict

from ga.answer import doubt
from ga.check import run_check
from ga.config import Settings
from ga.context import agents_md, workspace
from ga.context.history import Context, Step
from ga.errors import AgentStop, ContextOverflow, Interrupted, ServerUnreachable
from ga.escalation import Escalation, gist
from ga.invocation import invocation
from ga.model.settings import ModelSettings
from ga.outcome import Done, Outcome, check_limits, verified
from ga.prompts import first_message, system_prompt
from ga.protocols import UI, Memory, Model, Reply, ToolCall, Usage
from ga.reply import CUT_FINISHES, RUNTIME_NOTES, asks_back, assistant_message, final_answer, tidy, unique_ids
from ga.runs.folder import History, Run, tool_message
from ga.runs.mailbox import Inbox
from ga.tooling.budget import SHOWN_RESULTS
from ga.tooling.deferral import Deferral
from ga.tooling.dispatch import Dispatcher, cap
from ga.tooling.effects import fingerprint, named_outputs
from ga.tooling.human import AWAITED, WaitingForAnswer, answer_result, ask, candidates_of
from ga.tooling.permissions import SideEffect
from ga.tooling.spec import ToolContext, ToolResult, error, ran


class Agent:
    """The loop over one run. Building it reads the run's history and changes nothing; start() does the rest."""

    def __init__(self, *, settings: Settings, model: Model, dispatcher: Dispatcher, run: Run, ui: UI,
                 interactive: bool, answer: str | None = None, memory: Memory | None = None,
                 model_settings: ModelSettings | None = None):
        self.settings, self.model, self.dispatcher, self.run, self.ui = settings, model, dispatcher, run, ui
        self.memory = memory  # SOPs listed, reads and writes observed; None: a run without memory
        self.model_settings = model_settings or ModelSettings()  # the small-model crutches (ga/model/settings.py)
        self.clock = time.monotonic()
        self.ctx = ToolContext(settings=settings, run_dir=run.folder, ui=ui, interactive=interactive,
                               state=run.state.setdefault("tool_state", {}), memory=memory,
                               deadline=self.clock + settings.max_time if settings.max_time else None)
        self.history: History = run.history()  # as the loop was built: open() rebuilds the context from it
        self.results, self.started = self.history.results, self.history.started
        self.usage, self.tool_calls = self.history.usage, self.history.tool_calls
        self.turns = sum(1 for m in self.history.messages if m["role"] == "assistant")
        self.fresh = not self.history.messages
        self.inbox = Inbox(run, self.history.mail)
        self.answer, self.answer_mail = answer, None
        self.deferral = Deferral(dispatcher.deferred(), run.state, on=self.model_settings.defer_tools)
        self.schemas = dispatcher.schemas(self.deferral.loaded)
        self.context: Context | None = None
        self.escalation = Escalation(run=run, settings=settings, ui=ui, model_settings=self.model_settings)
        self.keep_open = False  # the chat goes on after start() returns: the tools stay open (it closes ctx)
        self.keep_unstarted = False  # a run nobody watches (--detach, cron) is kept, ended failed, even unanswered

    def open(self) -> Context:
        """Once, before the first request: the history rebuilt; for a new run, its first message (the task, the
        project's AGENTS.md and the SOPs listed for it), recorded so that a resume sends the same prefix."""
        if self.context is not None:
            return self.context
        history, run = self.history, self.run
        self.answer, self.answer_mail = self.inbox.answer_for(self.answer)  # given, else one waiting in the mailbox
        system = system_prompt(self.memory, run.state.get("sop_listing", ""), deferred=self.deferral.on)
        self.context = Context(system, budget=self.settings.context_tokens, tools=self.schemas,
                               window=self.settings.model_window, state=run.state.setdefault("context", {}),
                               save_output=self.ctx.save_output, summarise=self._summarise, on_step=self._on_step,
                               runtime_notes=RUNTIME_NOTES)
        self.context.extend(history.messages, {i: (r.get("details") or {}).get("full_output")
                                               for i, r in history.results.items()})
        if self.fresh:  # listed once, when the run starts: the first message is recorded, a resume sends it again
            self.see(run.state["task"])
            run.state["workspace_print"] = fingerprint(self.settings.workdir)  # what an answer's claims meet
            run.state["named_outputs"] = named_outputs(run.state["task"], self.settings.workdir)
            listing = self.memory.task_listing(run.state["task"]) if self.memory else ""
            project = agents_md.for_run(self.settings.workdir, self.settings.home, run.state, self.ui)  # and says so
            files = workspace.preview(self.settings.workdir) if self.model_settings.workspace_preview else ""
            self.record({"role": "user", "content": first_message(self.settings, run.state["task"], project, files,
                                                                  listing)})
        return self.context

    def start(self) -> Outcome:
        """Run until the model answers, a limit is hit, or the run pauses for a human."""
        self.open()
        if self.run.state.get("status") == "done":
            self.run.state.pop("check_result", None)  # a done run goes on with a new message: its old check is stale
        self._set_status("running", "")
        if not self.settings.model_window:
            self.context.learn_window(self.model.context_window())
        try:
            self.finish_pending()
            while True:
                check_limits(self.settings, self.run.id, turns=self.turns, tokens=self.usage.total,
                             elapsed=time.monotonic() - self.clock)
                self.inbox.deliver(self.record)  # turn boundary: the human's messages, a stop request
                self.step()
        except AgentStop as stop:
            if isinstance(stop, ServerUnreachable) and self.fresh and not self.turns and not self.keep_unstarted:
                raise  # nothing happened: the caller keeps no run
            outcome = self._outcome(stop)
        except KeyboardInterrupt:
            outcome = self._outcome(Interrupted("Interrupted (Ctrl-C or SIGTERM); the run is saved."))
        finally:
            if not self.keep_open:
                self.ctx.close()
        self._set_status(outcome.status, outcome.answer)
        return outcome

    def step(self) -> None:
        self.execute(self.query())

    def query(self) -> Reply:
        self.ui.turn(self.turns + 1)
        reply = self._complete(self.ctx.state.get("checkpoint", ""))
        if not reply.estimated_usage:
            self.context.observe(reply.usage.prompt_tokens)
        self.turns += 1
        self.usage.add(reply.usage)
        self.run.state.update(turns=self.turns, usage=asdict(self.usage))  # for `runs`, saved with the next step
        self.ui.usage(self.usage)
        return reply

    def _complete(self, checkpoint: str) -> Reply:
        """One model request; refused as too long for the model's context, it is compacted and sent once more."""
        for again in (False, True):
            try:
                return self.model.complete(self.context.request(checkpoint), self.schemas, on_text=self.ui.text,
                                           deadline=self.ctx.deadline)
            except ContextOverflow as err:
                if again:
                    raise ContextOverflow(f"{err} It was refused again after compacting to about "
                                          f"{self.context.tokens(checkpoint):,} tokens. Lower GA_CONTEXT_TOKENS or set "
                                          "GA_MODEL_WINDOW to the model's context, then "
                                          f"{invocation()} --resume {self.run.id}") from None
                self.ui.notice(f"{err} Compacting and retrying once.")
                self.context.overflowed(window=err.window, sent=err.sent, checkpoint=checkpoint)

    def _summarise(self, messages: list[dict]) -> str:
        """The side request (no tools) that writes the hand-off note; "" when the model cannot."""
        try:
            reply = self.model.complete(messages, [], deadline=self.ctx.deadline)
        except AgentStop as err:
            if err.status != "failed":  # a limit or a pause ends the run as usual
                raise
            self.ui.notice(f"The summary request failed ({err}); folding old turns without one.")
            return ""
        self.usage.add(reply.usage)
        self.run.append({"type": "summary", "content": reply.content, "usage": asdict(reply.usage)})
        return "" if reply.tool_calls else reply.content

    def _on_step(self, step: Step) -> None:
        shown = self.ctx.state.get(SHOWN_RESULTS, {})
        self.ctx.state[SHOWN_RESULTS] = {k: v for k, v in shown.items() if k not in step.forgotten}
        self.run.save_state()  # masks are saved before the request that shows them: a resume sends the same prefix
        self.run.append({"type": "context", "before": step.before, "after": step.after, "masked": step.masked,
                         "folded": step.folded, "budget": self.context.budget})
        folded = f", folded {step.folded} messages into a hand-off note" if step.folded else ""
        self.ui.notice(f"context {step.before:,} → {step.after:,} tokens (budget {self.context.budget:,}): "
                       f"masked {step.masked} old tool results{folded}")

    def execute(self, reply: Reply) -> None:
        for event in tidy(reply, self.dispatcher.specs) if self.model_settings.text_calls else []:
            self.run.append(event)
            if event["kind"] == "text_calls":
                self.ui.notice(f"the reply wrote {event['calls']} tool call(s) as text; running them")
        reply.tool_calls, not_run = cap(reply.tool_calls)
        if not_run:
            self.run.append({"type": "notice", "kind": "too_many_calls", "text": not_run})
            self.ui.notice(not_run.split(";")[0])
        unique_ids(reply.tool_calls, self.results, self.turns)
        self.see(reply.content, reply.tool_calls)
        nudge = self.escalation.reply(reply)
        if reply.finish_reason in CUT_FINISHES and reply.tool_calls:
            self.record(assistant_message(reply, drop_arguments=True), reply.usage)
            for call in reply.tool_calls:
                self.on_result(call, error(nudge[1], stage="arguments"))
            return
        if nudge:
            self.record(assistant_message(reply), reply.usage)
            self.run.append({"type": "nudge", "kind": nudge[0]})  # what memory reads, never the wording
            self.record({"role": "user", "content": nudge[1]})
            return
        self.record(assistant_message(reply), reply.usage, reasoning=reply.reasoning)
        if not reply.tool_calls:
            self.answered(reply)
            return
        results = self.dispatcher.dispatch(reply.tool_calls, self.ctx, on_start=self.on_start, on_result=self.on_result,
                                           budget=self.context.results_budget())
        if not_run:
            self.record({"role": "user", "content": not_run})
        self.settle(results)

    def answered(self, reply: Reply) -> None:
        """The model's final answer: done, unless it is none (failed), is doubted (ga/answer.py), only asks back
        (asked as ask_user asks), or the user's --check says not."""
        answer = final_answer(reply.content)
        if nudge := doubt(answer, run=self.run, settings=self.settings, ui=self.ui, model_settings=self.model_settings):
            self.record({"role": "user", "content": nudge})
        elif asks_back(answer):  # the question it is: asked on a terminal, a pause unattended (resumed with an answer)
            said = ask(" ".join(answer.split()), [], self.ctx).details["answer"]
            self.record({"role": "user", "content": f"The user answers: {said}"}, human=True)
        elif not self.settings.check or (checked := run_check(
                self.settings.check, number=self.turns, dispatcher=self.dispatcher, ctx=self.ctx, run=self.run,
                ui=self.ui, escalation=self.escalation)).passed:
            raise Done(answer)
        else:
            self.record(checked.message)
            self.settle()

    def finish_pending(self) -> None:
        """After a crash or pause: complete the last turn's calls that have no recorded result, exactly once."""
        last = next((m for m in reversed(self.context.messages) if m["role"] == "assistant"), None)
        pending = [c for c in (last or {}).get("tool_calls") or [] if c["id"] not in self.results]
        for raw in pending:
            call = ToolCall(id=raw["id"], name=raw["function"]["name"], arguments=raw["function"]["arguments"])
            if call.name == "ask_user" and self.answer is not None:
                self.on_result(call, answer_result(self.answer, candidates_of(call.arguments), mail=self.answer_mail))
                self.answer = None
            elif call.id in self.started and not self._rerunnable(call.name) and call.id != self.ctx.state.get(AWAITED):
                self.on_result(call, error(
                    f"This {call.name} call was running when the run stopped; it may or may not have taken effect. "
                    "Check the current state before repeating it.", stage="interrupted"))
            else:
                self.dispatcher.dispatch([call], self.ctx, on_start=self.on_start, on_result=self.on_result,
                                         budget=self.context.results_budget())
        if self.answer is not None:  # an answer to stage 3's question, else a message of the user's
            said = self.escalation.answered(self.answer) or {"role": "user", "content": f"The user adds: {self.answer}"}
            self.record(said, mail=self.answer_mail, human=True)
            self.answer = None
        self.settle()

    def settle(self, results: list[ToolResult] | None = None) -> None:
        """After a turn (`results`: its calls'): at stage 3 the human is asked (or the run pauses), the answer kept."""
        if note := self.escalation.after_turn(self.ctx, results):
            self.record(note, human=True)

    def see(self, text: str, calls: list[ToolCall] | tuple = ()) -> None:
        """Deferred tools' schemas join the requests once the run needs them (ga/tooling/deferral.py)."""
        if self.deferral.see(text, calls):
            self.schemas = self.dispatcher.schemas(self.deferral.loaded)
            self.context.set_tools(self.schemas)

    def _rerunnable(self, name: str) -> bool:
        return getattr(self.dispatcher.specs.get(name), "side_effect", None) is SideEffect.READ_ONLY

    def record(self, message: dict, usage: Usage | None = None, mail: str | None = None, reasoning: str = "",
               human: bool = False) -> None:
        """A message into the trajectory and the context: the human's own words (an answer, `mail`: the mailbox
        message this very line consumes) typed for memory; a reasoning model's thinking kept, never sent back."""
        event = {"type": "message", "message": message, "from": "human" if mail or human else None,
                 "usage": asdict(usage) if usage is not None else None, "reasoning": reasoning or None, "mail": mail}
        self.run.append({k: v for k, v in event.items() if v})
        self.context.add(message)

    def on_start(self, call: ToolCall, args: dict) -> None:
        self.inbox.stop_if_asked()  # a stop ends the run between calls (parallel groups are read-only: rerunnable)
        if self.memory:  # the workspace kept before its first change, for learning after the run
            for name in self.memory.before(call.name, args, self.ctx.state):
                self.ui.notice(f"using learnt script {name}")
        self.ui.tool_start(call, args)
        self.started.add(call.id)
        self.run.append({"type": "call_start", "id": call.id, "name": call.name})

    def on_result(self, call: ToolCall, result: ToolResult) -> None:
        self.ui.tool_done(call, result)
        result = self.escalation.observe(call, result, read_only=self._rerunnable(call.name))  # with its hint
        if self.memory:  # SOP reads for the ledger; memory writes guarded
            self.memory.observe(call.name, result, self.ctx.state)
        self.run.save_state()  # state first: a kill next leaves "started, no result", never a lost state change
        self.run.append({"type": "result", "id": call.id, "name": call.name, "content": result.content,
                         "is_error": result.is_error, "details": result.details})
        self.results[call.id] = {"content": result.content}
        self.tool_calls += ran(result.details)
        # a final answer right after a failed step is not verified (Outcome.verified)
        self.run.state["last_failed"] = f"{call.name}: {gist(result.content, 120)}" if result.is_error else ""
        self.context.add(tool_message(call.id, result.content), full_output=result.details.get("full_output"))
        self.see(result.content)
        if result.details.get("killed") == "interrupted":
            raise KeyboardInterrupt  # Ctrl-C during a program: it was killed and recorded; now the run stops

    def _outcome(self, stop: AgentStop) -> Outcome:
        question = ({"question": stop.question, "candidates": stop.candidates}
                    if isinstance(stop, WaitingForAnswer) else None)
        answer = str(stop)
        if self.settings.check and stop.status != "done":
            answer += f" The check `{self.settings.check}` never passed."
        return Outcome(run_id=self.run.id, status=stop.status, exit_code=stop.exit_code, answer=answer,
                       usage=self.usage, tool_calls=self.tool_calls, question=question,
                       verified=verified(self.settings.check, self.run.state), model_settings=self.model_settings.name)

    def _set_status(self, status: str, message: str) -> None:
        self.run.state.update(status=status, answer=message if status == "done" else "", message=message,
                              turns=self.turns, usage=asdict(self.usage), tool_calls=self.tool_calls,
                              verified=verified(self.settings.check, self.run.state) if status != "running" else None)
        self.run.save_state()
        self.run.append({"type": "status", "status": status, "message": message})
