"""A final answer doubted once before the run ends on it (ModelSettings.doubt_claims); beside a loop or a failure,
the way out. Both said in the run's own format (ModelSettings.action_format)."""

from __future__ import annotations

from ga.config import Settings
from ga.errors import AgentStop, ToolError
from ga.model.settings import ModelSettings
from ga.protocols import UI, ToolCall
from ga.reply import claimed_change
from ga.runs.folder import Run
from ga.tooling.arguments import parse
from ga.tooling.effects import ASKS, changed_since, unwritten

CLAIMED = ("Nothing was written: this run has changed no file in the workspace, though your answer says \"{word}\". "
           "{act} that makes the change; if no file should change, give your answer again, saying what is true.")
UNWRITTEN = ("Before you finish: the task names a file to write, but {files}. If the task asks for it: {act} that "
             "writes it; otherwise give your final answer again.")
ACT = {"tools": "Call a tool", "bash": "Reply with a ```bash block"}  # by ModelSettings.action_format (checked)
FINISH = {"tools": "reply without a tool call", "bash": "reply without a code block"}
PYTHON = {"tools": 'code_run type="python"', "bash": "python3 - <<'EOF' ... EOF"}
REWRITE = (" For {path}, which your patches did not fit: read it whole with file_read, then send the whole corrected "
           "file with file_write.")
ANOTHER_WAY = " The same command sent again fails the same way: do the step another way, e.g. as a Python script ({})."


class FalseClaim(AgentStop):
    """The answer claimed a change the workspace does not show, twice: the run ends failed."""


def doubt(answer: str, *, run: Run, settings: Settings, ui: UI, model_settings: ModelSettings) -> str | None:
    """The nudge for an answer that claims a change when the run changed no file (the second such answer ends the run
    failed), else for one given while files the task names are missing or empty (it stands the second time, not
    verified). None: the answer stands. With a --check, the user's check says what done is."""
    state, workdir = run.state, settings.workdir
    missing = [] if settings.check else unwritten(state.get("named_outputs") or [], workdir)
    word = claimed_change(answer) if changed_since(state.get("workspace_print"), workdir) is False else ""
    doubts = state.setdefault("doubts", [])
    kind = "claim" if word else "unwritten" if missing and "unwritten" not in doubts else ""
    if kind and model_settings.doubt_claims:
        if kind in doubts:
            raise FalseClaim(f"The model said the work was done (\"{word}\") twice, but this run changed no file in "
                             "the workspace; what it did is kept in the run.")
        doubts[:] = sorted({*doubts, kind, "unwritten"})  # saved with run.state; one doubt covers both facts
        run.append({"type": "nudge", "kind": kind, **({"word": word} if word else {"files": missing})})
        ui.notice(f"the answer says \"{word}\" but this run changed no file: doubted once" if word else
                  f"the answer came but {', '.join(missing)}: doubted once")
        act = ACT[model_settings.action_format]  # said in the run's own format
        return CLAIMED.format(word=word, act=act) if word else UNWRITTEN.format(files=", ".join(missing), act=act)
    if missing:  # the answer stands after its doubt, a file it names still unwritten: not verified
        state["last_failed"] = "the answer, while " + ", ".join(missing)
    return None


def loop_note(run: Run, settings: Settings, model_settings: ModelSettings) -> str:
    """Beside a loop's nudge: the named files still unwritten and how to write them; to a question, how to answer."""
    missing = [] if settings.check else unwritten(run.state.get("named_outputs") or [], settings.workdir)
    form, task = model_settings.action_format, str(run.state.get("task", ""))
    if missing:
        return f"\n[The task names a file to write, but {', '.join(missing)}. {ACT[form]} that writes it.]"
    quiet = task.rstrip().endswith(ASKS) and changed_since(run.state.get("workspace_print"), settings.workdir) is False
    return f"\n[If this result answers the task, {FINISH[form]}: state the answer.]" * quiet


def way_out(call: ToolCall, form: str) -> str:
    """Stage 2's other way: a file the patches did not fit, written whole; a shell command that failed, in Python."""
    try:
        args = parse(call.arguments, call.name)
    except ToolError:
        return ""
    path, script = str(args.get("path") or ""), str(args.get("script") or "")
    if call.name == "code_run" and script and args.get("type") != "python" and not script.lstrip().startswith("python"):
        return ANOTHER_WAY.format(PYTHON[form])
    return REWRITE.format(path=path[:200]) if call.name == "file_patch" and path else ""
