"""How a run's end is told: the answer or what stopped it, what to type next, and the line of what it took."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ga.invocation import invocation

if TYPE_CHECKING:
    from ga.cli.terminal import Terminal
    from ga.config import Settings
    from ga.outcome import Outcome
    from ga.protocols import Usage
    from ga.runs.folder import Run

STOPPED = "stopped by you (Ctrl-C); what was done is kept and your next line goes on from here"


def carry_out() -> str:
    """How the same run carries a plan out, out of plan mode (a resume keeps plan mode unless told otherwise)."""
    return (f'carry it out with: {invocation()} --continue --mode default "go ahead"  (or --confirm instead of --mode '
            "default, to approve each change)")


def tell(ui: Terminal, run: Run, outcome: Outcome, settings: Settings, *, chat: bool = False) -> None:
    """The answer (not with --json) and whether it is verified; or what stopped the run, and what to type next."""
    status, said = outcome.status, outcome.answer
    if status == "done":
        if not settings.json:
            ui.answer(status, said)
            if settings.mode == "plan" and not chat:
                ui.info(carry_out())
        if outcome.verified is False and settings.mode != "plan":  # a plan's refused write is expected there
            why = (f"the check `{settings.check}` did not pass" if settings.check else "the last step failed "
                   f"({run.state.get('last_failed') or 'a tool call'}) and nothing succeeded after it")
            ui.notice(f"not verified: {why}", error=True)
        return
    ui.close()  # what was under way is over: the spinner goes before the outcome is told
    line = said if said.lower().startswith(status) else f"{status}: {said}"  # not "interrupted: Interrupted..."
    ui.notice(STOPPED if chat and status == "interrupted" else line, error=True)
    if chat and status == "paused":
        ui.hint("your next line answers it")
    elif chat:
        return
    elif status == "paused" and outcome.question is not None:
        ui.hint(f'answer with: {invocation()} answer {run.id} "..."  (or --resume {run.id} --answer "...")')
    elif status == "paused":  # at an approval: only a human at a terminal can give it
        ui.hint(f"resume on a terminal to be asked again: {invocation()} --resume {run.id}")
    elif (status in ("limit", "interrupted", "failed") and f"--resume {run.id}" not in said
          and "Try another model" not in said):  # the same model resumed would fail the same way
        ui.hint(f"resume with: {invocation()} --resume {run.id}")


def summary_line(usage: Usage, *, turns: int, seconds: float, settings: Settings) -> str:
    """`3 turns · 12,345 in (80% cached) / 2,345 out tokens · 14.2 s · $0.0042`: the cost when the settings give
    prices (price_in, price_out, price_cached: dollars per million tokens)."""
    cached = (f" ({usage.cached_tokens * 100 // usage.prompt_tokens}% cached)"
              if usage.cached_tokens and usage.prompt_tokens else "")
    minutes, secs = divmod(int(seconds), 60)
    took = (f"{seconds:.1f} s" if seconds < 60 else f"{minutes}m {secs:02d}s" if minutes < 60
            else f"{minutes // 60}h {minutes % 60:02d}m")
    parts = [f"{turns} turn{'s' if turns != 1 else ''}",
             f"{usage.prompt_tokens:,} in{cached} / {usage.completion_tokens:,} out tokens", took]
    if settings.price_in or settings.price_out:
        held = min(usage.cached_tokens, usage.prompt_tokens)
        spent = ((usage.prompt_tokens - held) * settings.price_in + held * (settings.price_cached or settings.price_in)
                 + usage.completion_tokens * settings.price_out) / 1e6
        parts.append(f"${spent:.4f}" if spent < 0.01 else f"${spent:.3f}" if spent < 1 else f"${spent:,.2f}")
    return " · ".join(parts)
