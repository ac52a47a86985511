"""`ga` alone on a terminal: a chat over one run, as Claude Code, aider and `llm chat` have.

The first line is the run's task; each next line continues it. Ctrl-C stops the message under way (calls it left
unfinished are recorded as stopped, never run again) or clears the line being typed; Ctrl-D, /exit or SIGTERM end
the chat, the run resumable. Tools live as long as the chat; limits count per message; what the run taught is learned
once, at the end. The line history is kept in GA_HOME/chat_history (0600, redacted)."""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ga.cli.compose import build_agent, check_start, learn_from, notify_end, open_run, prepare, serving
from ga.cli.next_steps import carry_out, summary_line, tell
from ga.cli.terminal import Terminal
from ga.config import Settings
from ga.errors import ServerUnreachable
from ga.invocation import invocation
from ga.protocols import ToolCall, Usage
from ga.runs.liveness import Heartbeat
from ga.runs.mailbox import clear_outbox, write_outbox
from ga.tooling.redact import redact
from ga.tooling.spec import error

if TYPE_CHECKING:
    from ga.agent import Agent
    from ga.outcome import Outcome
    from ga.runs.folder import Run

PROMPT = "› "
BANNER = ("ga chat: type a task; each next line goes on with the same run. Ctrl-C stops a reply, Ctrl-D ends the "
          "chat, /help lists the rest")
HISTORY_FILE = "chat_history"
HISTORY_LINES = 1000
ENDS = ("/exit", "/quit", "exit", "quit")
HELP = """commands of the chat:
  /help          this list
  /exit, /quit   end the chat (so do exit, quit and Ctrl-D); the run stays resumable: {again}
  Ctrl-C         stop the reply under way, or clear the line being typed
Any other line goes to the model as your next message in the same run; a line that starts with a space is never a
command (` /etc/hosts: what is in it?`)."""
_COMMAND = re.compile(r"/[A-Za-z][\w-]*")
"""`/word` at the start of a line (a path such as /etc/hosts has a second slash and is a message)."""
TICK = 0.2


class Prompt:
    """The input line, with readline's editing and history where Python has readline."""

    def __init__(self, home: Path):
        self.path = home / HISTORY_FILE
        self.ended = False  # set by SIGTERM: the chat ends at the next prompt, or at once if it waits at one
        try:
            import readline
        except ImportError:  # a Python built without it: plain lines
            self.readline = None
            return
        self.readline = readline
        readline.set_history_length(HISTORY_LINES)
        try:
            readline.read_history_file(self.path)
        except OSError:
            pass  # none yet

    def read(self) -> str | None:
        """The next message; None at Ctrl-D or /exit. Ctrl-C drops the line being typed."""
        while not self.ended:
            try:
                typed = _ticking(input, PROMPT)
            except EOFError:
                print(file=sys.stderr)  # the prompt's line ends before what follows
                return None
            except KeyboardInterrupt:
                print("^C  (Ctrl-D ends the chat)" if not self.ended else "", file=sys.stderr)
                continue
            line = typed.strip()
            if line in ENDS:
                return None
            word = line.split(maxsplit=1)[0] if line else ""
            if not typed.startswith(" ") and _COMMAND.fullmatch(word):
                self._command(word)
            elif line:
                self._save()
                return line
        return None

    def _command(self, word: str) -> None:
        """`/help`, or what to do about a `/word` the chat does not know (it is not sent to the model)."""
        if word == "/help":
            print(HELP.format(again=f"{invocation()} --continue"), file=sys.stderr)
        else:
            print(f"unknown command {word} (not sent): /help lists the chat's commands; to send the line as a "
                  "message, start it with a space", file=sys.stderr)

    def terminate(self, signum: int, frame: object) -> None:
        """SIGTERM: as Ctrl-C for the message under way (the run is saved), then the chat ends."""
        self.ended = True
        raise KeyboardInterrupt

    def _save(self) -> None:
        """After each line, private (0600) and redacted: the arrow keys bring back the line as kept."""
        if self.readline is None:
            return
        readline = self.readline
        for n in range(1, readline.get_current_history_length() + 1):  # also what an older ga kept
            line = readline.get_history_item(n)
            if line and (clean := redact(line)) != line:
                readline.replace_history_item(n - 1, clean)
        try:
            self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
            readline.write_history_file(self.path)
        except OSError:
            pass  # a history that cannot be kept must not end the chat


def _ticking(read, *args):
    """`read(*args)` woken every TICK by SIGALRM: readline hears a signal only when its wait for a key is
    interrupted, so a Ctrl-C or SIGTERM that lands just before that wait is raised within TICK, not at the next key."""
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: None)
    signal.setitimer(signal.ITIMER_REAL, TICK, TICK)
    try:
        return read(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def chat(settings: Settings, *, resume: str | None, given: frozenset[str], quiet: bool, raw: bool = False) -> int:
    """The chat; its exit code is 0 (the user ended it), or 2 when it cannot start."""
    check_start(settings)
    ui, prompt = Terminal(quiet=quiet, raw=raw), Prompt(settings.home)
    ui.info(BANNER)
    task = None if resume else prompt.read()
    if task is None and not resume:
        return 0  # ended before the first message: no run was made
    run, settings = open_run(settings, task, resume, set(given))
    try:
        outcome = _converse(run, settings, ui, prompt, go=bool(task) or run.state.get("status") != "done",
                            resumed=bool(resume))
    except ServerUnreachable:
        if not resume and not run.state.get("turns"):
            run.discard()  # the run never started: leave no folder behind to list or resume
        raise
    finally:
        ui.close()
        run.unlock()
    if outcome is not None:
        notify_end(run, outcome)
    ui.info(f"run {run.id} is {run.state.get('status')}; open it again with: {invocation()} --continue  (or --resume "
            f"{run.id})")
    return 0


def _converse(run: Run, settings: Settings, ui: Terminal, prompt: Prompt, *, go: bool,
              resumed: bool) -> Outcome | None:
    """Messages until the user ends the chat; then the tools close and what the run taught is learned, once."""
    prepare(run, settings, resumed=resumed)
    outcome = None
    with serving(settings, run, ui.notice) as served:
        agent = build_agent(run, served, Heartbeat(ui, run.folder), answer=None)
        agent.keep_open = True  # the browser and background programs last as long as the chat
        if not go:  # a finished run opened again: its answer, then the prompt
            ui.answer("done", str(run.state.get("answer", "")))
        base = dataclasses.replace(served)
        previous = signal.signal(signal.SIGTERM, prompt.terminate)
        try:
            line = None if go else prompt.read()
            while go or line is not None:
                try:
                    outcome = _message(agent, ui, line, base)
                except KeyboardInterrupt:  # between the agent's steps (its own Ctrl-C is an outcome): the run is saved
                    ui.close()
                    ui.notice("interrupted", error=True)
                go, line = False, prompt.read()
        finally:
            signal.signal(signal.SIGTERM, previous)
            agent.ctx.close()
        if outcome is not None:
            if served.mode == "plan" and outcome.status == "done":
                ui.info(carry_out())
            learn_from(ui, run, outcome, served)  # while a --local model serves: learning may need it
    return outcome


def _message(agent: Agent, ui: Terminal, text: str | None, base: Settings) -> Outcome:
    """One message (None: the run as it stands), its answer told, and one line of what it took."""
    turns, spent, began = agent.turns, dataclasses.replace(agent.usage), time.monotonic()
    _limits(agent, base)
    agent.answer = text
    clear_outbox(agent.run)
    outcome = agent.start()  # Ctrl-C in it ends the message, interrupted and saved; the chat goes on
    if outcome.status == "interrupted":
        _drop_pending(agent)
    write_outbox(agent.run, outcome.as_json(), outcome.question)
    tell(ui, agent.run, outcome, agent.settings, chat=True)
    if not ui.quiet:
        used = Usage(**{f.name: getattr(agent.usage, f.name) - getattr(spent, f.name)
                        for f in dataclasses.fields(Usage)})
        ui.info(summary_line(used, turns=agent.turns - turns, seconds=time.monotonic() - began,
                             settings=agent.settings))
    return outcome


def _drop_pending(agent: Agent) -> None:
    """Ctrl-C cancels the turn: the calls it left without a result are recorded as stopped, where a resume would
    run them (the user's next line is not a go-ahead for what they stopped). A stop is no failed step."""
    last = next((m for m in reversed(agent.context.messages) if m["role"] == "assistant"), None)
    for raw in (last or {}).get("tool_calls") or []:
        if raw["id"] not in agent.results:
            call = ToolCall(id=raw["id"], name=raw["function"]["name"], arguments=raw["function"]["arguments"])
            when = ("before it finished; it may or may not have taken effect" if call.id in agent.started else
                    "before it ran")
            agent.on_result(call, error(f"The user stopped this {call.name} call (Ctrl-C) {when}. Do not repeat it "
                                        "unless asked.", stage="interrupted"))  # neutral: no failed step
    agent.run.state["last_failed"] = ""
    agent.run.save_state()


def _limits(agent: Agent, base: Settings) -> None:
    """--max-turns, --max-tokens and --max-time count per message, not for the whole chat."""
    s = agent.settings
    s.max_turns = base.max_turns + agent.turns if base.max_turns else 0
    s.max_tokens = base.max_tokens + agent.usage.total if base.max_tokens else 0
    agent.clock = time.monotonic()
    agent.ctx.deadline = agent.clock + base.max_time if base.max_time else None
