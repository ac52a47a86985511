"""code_run's execution: the script as a command, the command policy's environment, the sandbox, the runner, and
the result the model reads. Imported when code first runs: a run without code never pays for policy or sandbox."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from ga.tooling import effects
from ga.tooling.boundary import check_env
from ga.tooling.spec import ToolContext, ToolResult
from tools.guard import escape, git_meta, home_files, sandbox, sandbox_ports
from tools.guard.approval import script_cwd
from tools.process import DEFAULT_TIMEOUT, MAX_TIMEOUT, box, environment, hints, learnt, lifetime, runner, written

TAIL_CHARS = 50_000
TAIL_LINES = 2_000
INLINE_LIMIT = 100_000
"""Bash scripts up to this size run as `bash -c SCRIPT` (one argument may hold 128 KiB)."""
SCRIPT_NAME = "<script>"  # how a traceback names the temporary file a script ran from
PLAN_NOTE = "[plan mode: ran in the sandbox with the workspace read-only and no network; nothing was changed]"
RESERVED_CHARS = 600  # room kept in the budget for the status line and the truncation header
REPEATS = "code_run_repeats"
"""The run's state: for each script that succeeded and wrote files, the workspace's fingerprint after it."""
_ERRORS = re.compile(r"^(?:[\w./-]+: )+(?:line \d+: )?.*\berror\b|^Traceback \(most recent call last\)|^\w+Error: |"
                     r"^(?:ba)?sh: line \d+: |No such file or directory$|command not found$", re.M | re.I)  # exit 0


def run(args: dict, ctx: ToolContext) -> ToolResult:
    if said := _repeated(args, ctx):
        return ToolResult(content=said, details={"repeated": True})
    result = _run(args, ctx)
    _remember(args, ctx, result)
    return result


def _key(args: dict, ctx: ToolContext) -> str:
    text = json.dumps([args.get("type", "python"), args["script"], str(script_cwd(args, ctx))])
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def _repeated(args: dict, ctx: ToolContext) -> str:
    """A script that already ran successfully and wrote files, sent again over a workspace nothing changed since: not
    run. Again it would repeat its effect (`echo DONE >> todo.txt`); a model repeating what worked is mostly done."""
    before = ctx.state.get(REPEATS, {}).get(_key(args, ctx))
    if not before or ctx.settings.mode == "plan" or before["fingerprint"] != effects.fingerprint(ctx.settings.workdir):
        return ""
    return effects.NOT_RUN.format(call=before["call"], files=", ".join(before["files"]))


def _remember(args: dict, ctx: ToolContext, result: ToolResult) -> None:
    files = result.details.pop("wrote", None)
    if result.is_error or not files or ctx.settings.mode == "plan" or _ERRORS.search(result.content):
        return  # a script whose output says it failed somewhere did not work: sent again, it runs again
    if (now := effects.fingerprint(ctx.settings.workdir)) is not None:
        ctx.state.setdefault(REPEATS, {})[_key(args, ctx)] = {"fingerprint": now, "files": files,
                                                               "call": ctx.call_id or "earlier"}


def _run(args: dict, ctx: ToolContext) -> ToolResult:
    kind = args.get("type", "python")
    timeout = min(int(args.get("timeout", DEFAULT_TIMEOUT)), MAX_TIMEOUT)
    if ctx.deadline is not None:  # the run's --max-time ends the program too, not just the next turn
        timeout = max(1, min(timeout, math.ceil(ctx.deadline - time.monotonic())))
    cwd = script_cwd(args, ctx)
    marker = ctx.resources.setdefault("processes", lifetime.for_run(ctx.run_dir.name)).marker()
    env = environment.child_env(dict(os.environ), **{lifetime.MARKER: marker})
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(cwd), env.get("PYTHONPATH", "")]))
    log_path = ctx.run_dir / "outputs" / f"{ctx.call_id or marker.rpartition('/')[2]}.log"
    started_ns, note = time.time_ns(), learnt.take(args, ctx)
    with _script_command(args["script"], kind) as (command, files), check_env.watched(ctx.check, env, cwd) as check, \
            learnt.outputs(note, ctx) as outputs:
        result = _execute(command, [*files, *check.shown], args, ctx, cwd=cwd, env=check.env, timeout=timeout,
                          log_path=log_path, writable=[*check.writable, *outputs], confined=note is not None)
        if ctx.check:
            result.details["imported"] = check.imported()
    if note is not None and result.details.get("sandbox"):
        result.content += learnt.said(note)
    for temporary in files:  # the same script failing the same way says the same thing, whatever its temp name
        for path in (str(temporary), f"/tmp/{temporary.name}"):  # the run's box runs it from its own /tmp
            result.content = result.content.replace(path, SCRIPT_NAME)
    if not result.is_error and ctx.settings.mode != "plan":
        root = Path(ctx.settings.workdir)
        if changed := written.written_since(root, started_ns):
            result.details["wrote"] = [str(p.relative_to(root)) for p in changed[:written.SHOWN_FILES]]
            if not result.details.get("chars"):
                said = written.describe(root, changed)
                result.content += f"\nnote: it printed nothing; files it wrote, as they are now:\n{said}"
    return result


def _execute(command: list[str], files: list[Path], args: dict, ctx: ToolContext, *, cwd: Path,
             env: dict[str, str], timeout: int, log_path: Path, writable: list[Path], confined: bool) -> ToolResult:
    """Run the script's command: outside the sandbox, or in it (and outside too when the user lets it)."""
    processes = ctx.resources["processes"]
    capture = runner.OutputCapture(log_path, TAIL_CHARS, ctx.ui.live)
    plan = ctx.settings.mode == "plan"  # the dispatcher let it through: the sandbox holds (see in_plan_mode)
    if not ctx.settings.sandbox and not plan:
        outcome = runner.run(processes.contain(command), cwd=cwd, env=env, timeout=timeout, capture=capture)
        return _result(args, outcome, capture, ctx, timeout=timeout, network=True)
    layout, outcome, disarmed, moved = _sandboxed(command, files, ctx, cwd=cwd, env=env, timeout=timeout,
                                                  capture=capture, writable=writable, confined=confined)
    result = _result(args, outcome, capture, ctx, timeout=timeout, network=layout.network)
    for key, items, said in (("git_disabled", disarmed, "git metadata this command wrote would have run code on the "
                              "host at the user's next git command, so it was disabled"),
                             ("home_moved", moved, "HOME's start-up files stay as they were")):
        if items:
            result.content += f"\nnote: {said}: " + "; ".join(items)
            result.details[key] = items
    why = escape.blocked(capture.tail, layout) if result.is_error and not outcome.killed and not plan else ""
    if not why or not _run_outside(args, ctx, why, result):
        return result
    capture = runner.OutputCapture(log_path, TAIL_CHARS, ctx.ui.live)
    outcome = runner.run(processes.contain(command), cwd=cwd, env=env, timeout=timeout, capture=capture)
    result = _result(args, outcome, capture, ctx, timeout=timeout, network=True, sandboxed=False)
    result.content = f"[the sandbox stopped it ({why}); the user let it run outside the sandbox]\n{result.content}"
    result.details["outside_sandbox"] = why
    return result


def _run_outside(args: dict, ctx: ToolContext, why: str, result: ToolResult) -> bool:
    """The sandbox stopped the command: a human on a terminal may let this one command run outside it (as Codex's
    escalation request); an unattended run says so in its result. True: run it again, outside."""
    if ctx.interactive and not ctx.settings.autonomous:
        scripts = escape.scripts_written(args["script"], script_cwd(args, ctx), [ctx.workspace,
                                         *ctx.settings.allow_paths], escape.run_started(ctx.run_dir))
        also = f"; it runs {len(scripts)} file(s) written during this run, shown below" if scripts else ""
        answer, _ = ctx.ui.approve(f"code_run failed in the sandbox ({why}, going by the program's output{also}): "
                                   "run this one command outside it?",
                                   escape.shown_with_scripts(args["script"], scripts), args["script"])
        if answer == "approve":
            return True
        result.content += f"\nnote: the sandbox stopped this command ({why}); the user chose not to run it outside."
    else:
        result.content += (f"\nnote: the sandbox stopped this command ({why}) and no human is at a terminal to let "
                           "it run outside: do it another way, or tell the user it needs a run with --no-sandbox"
                           + (" or GA_SANDBOX_NET=1." if "network" in why else "."))
    result.details["sandbox_blocked"] = why
    return False


def _sandboxed(command: list[str], files: list[Path], ctx: ToolContext, *, cwd: Path, env: dict[str, str],
               timeout: int, capture: runner.OutputCapture,
               writable: list[Path], confined: bool) -> tuple[sandbox.Layout, runner.Outcome, list[str], list[str]]:
    """Run in the sandbox, git metadata of the workspace read-only; after it, what it wrote there is disarmed.
    `confined` (a learnt script, tools/process/learnt.py): the workspace read-only but for `writable`, offline."""
    processes = ctx.resources["processes"]
    guard = ctx.resources.setdefault("git-guard", git_meta.GitGuard(home=Path.home()))
    roots = [ctx.workspace, *ctx.settings.allow_paths]
    kept = guard.read_only(roots)
    home = home_files.HomeGuard(home=Path.home())
    home.before(roots)
    layout = sandbox.layout_for(ctx.workspace, ctx.settings.home, ctx.settings.allow_paths, kept=kept,
                                read_only=ctx.settings.mode == "plan" or confined, offline=not ctx.network)
    ports = () if layout.network or layout.read_only else sandbox_ports.ports_from()  # GA_SANDBOX_PORTS
    try:
        with ExitStack() as stack:
            if not ctx.check and not writable and not confined:  # the run's box: what it leaves running lives on
                argv = _box(ctx, layout, ports, env).command(command, cwd=cwd, env=env, files=files)
            else:
                bridge = stack.enter_context(sandbox_ports.host_bridge(ports))
                argv = sandbox_ports.inside(command, bridge, ports) if bridge else command
                shown = [*files, bridge] if bridge else files  # the bridge's sockets, after the private /tmp
                argv = sandbox.wrap(argv, layout=layout, cwd=cwd, read_only=shown, writable_files=writable)
            outcome = runner.run(processes.contain(argv, layout.limits.procs), cwd=cwd, env=env, timeout=timeout,
                                 capture=capture)
    finally:  # a hook or config the command left in git's metadata never reaches the host's git
        disarmed, moved = guard.disarm(roots, kept), home.after()
    return layout, outcome, disarmed, moved


def _box(ctx: ToolContext, layout: sandbox.Layout, ports: tuple[int, ...], env: dict[str, str]) -> box.Box:
    """The run's box for this layout; a new one when the layout changed (a repository appeared) or it ended. One it
    replaces is kept until the run ends, with what runs in it."""
    current = ctx.resources.get("sandbox-box")
    if current is None or not current.alive() or (current.layout, current.ports) != (layout, ports):
        if current is not None:
            ctx.resources[f"sandbox-box-{len(ctx.resources)}"] = current
        current = ctx.resources["sandbox-box"] = box.Box(layout, ctx.resources["processes"], env, ports)
    return current


@contextmanager
def _script_command(script: str, kind: str) -> Iterator[tuple[list[str], list[Path]]]:
    """The command that runs the script, and its temporary files: Python runs from a file, so tracebacks show its
    lines; bash inline (`bash -c`: its errors still say `line N`) unless it is too long for one argument."""
    if kind == "bash" and len(script.encode()) < INLINE_LIMIT:
        yield ["bash", "-c", script], []
        return
    fd, name = tempfile.mkstemp(prefix="ga-script-", suffix=".py" if kind == "python" else ".sh")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(script)
        yield [sys.executable if kind == "python" else "bash", name], [Path(name)]
    finally:
        os.unlink(name)


def _result(args: dict, outcome: runner.Outcome, capture: runner.OutputCapture, ctx: ToolContext, *,
            timeout: int, network: bool, sandboxed: bool | None = None) -> ToolResult:
    plan = ctx.settings.mode == "plan"  # plan mode's sandbox: the workspace read-only, no network
    sandboxed = (ctx.settings.sandbox or plan) if sandboxed is None else sandboxed
    notes = _run_notes(outcome, capture, sandboxed, timeout) + hints.hints(
        capture.tail, outcome.exit_code if not outcome.killed else None, script=args["script"],
        kind=args.get("type", "python"), sandbox=sandboxed, network=network, read_only=plan and sandboxed,
        cwd=script_cwd(args, ctx).resolve(), workspace=ctx.workspace.resolve())
    budget = max(1_000, min(TAIL_CHARS, ctx.output_budget) - RESERVED_CHARS - len("\n".join(notes)))
    tail, lines = tail_lines(capture.tail, whole=capture.tail_is_whole, max_chars=budget, max_lines=TAIL_LINES)
    details = {"exit_code": outcome.exit_code, "elapsed": round(outcome.elapsed, 3), "killed": outcome.killed,
               "lines": capture.total_lines, "chars": capture.chars, "sandbox": sandboxed,
               "network": network if sandboxed else True, "survivors": outcome.survivors,
               "read_only": plan and sandboxed}
    parts = [_status(outcome, timeout), *([PLAN_NOTE] if plan else [])]
    if len(tail) < capture.chars:  # truncated: the whole output is saved
        details.update(full_output=str(capture.save()), log_dropped_chars=capture.dropped)
        kept = f"; it keeps the head and the tail, {capture.dropped:,} chars between dropped" if capture.dropped else ""
        parts.append(f"[output truncated: showing the last {lines:,} of {capture.total_lines:,} lines "
                     f"({len(tail):,} of {capture.chars:,} chars); full output: {capture.log_path} — "
                     f"read it with file_read{kept}]")
    parts += [tail.rstrip("\n") if capture.chars else "(no output)", *notes]
    return ToolResult(content="\n".join(parts), details=details,
                      is_error=bool(outcome.killed) or outcome.exit_code != 0)


def _status(outcome: runner.Outcome, timeout: int) -> str:
    took = f"{outcome.elapsed:.2f} s"
    if not outcome.killed:
        return f"[exit code {outcome.exit_code} · {took}]"
    how = (f"killed after {took}: the {timeout} s timeout was reached" if outcome.killed == "timeout"
           else f"interrupted by the user (Ctrl-C) after {took}")
    return f"[{how}; the process and all its children were killed (exit code {outcome.exit_code})]"


def _run_notes(outcome: runner.Outcome, capture: runner.OutputCapture, sandboxed: bool, timeout: int) -> list[str]:
    notes = []
    if outcome.killed == "timeout":
        notes.append(f"hint: if it needs longer, raise timeout (max {MAX_TIMEOUT}), or start it in the background "
                     "with its output sent to a file (`nohup cmd > out.log 2>&1 &`) and check on it later.")
    if outcome.survivors:
        notes.append(f"warning: processes {outcome.survivors} survived the kill.")
    if outcome.pipe_left_open:
        notes.append("note: background processes started by the script are still running and hold its output; "
                     "send their output to a file (`cmd > out.log 2>&1 &`) so code_run returns at once.")
    if sandboxed and capture.tail_is_whole and (hint := escape.failure_hint(capture.tail)):
        notes.append(f"hint: {hint}")
    return notes


def tail_lines(text: str, *, whole: bool, max_chars: int, max_lines: int) -> tuple[str, int]:
    """The last complete lines of `text` within max_chars and max_lines, and how many lines that is. `whole`: `text`
    starts at the start of the output. A single line longer than max_chars is the one thing cut: its end is kept."""
    start = max(0, len(text) - max_chars)
    cut = text[start:]
    first_complete = (start == 0 and whole) or (start > 0 and text[start - 1] == "\n")
    if not first_complete and "\n" in cut[:-1]:
        cut = cut[cut.index("\n") + 1:]
    ends_open = not cut.endswith("\n")
    lines = cut.split("\n")
    if not ends_open:
        lines.pop()
    lines = lines[-max_lines:]
    return "\n".join(lines) + ("" if ends_open else "\n"), len(lines)
