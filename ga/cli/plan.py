"""Plan mode as the terminal tells it: what code_run may do in it (said in the run's header), and how to carry the
plan out (said when the plan is given)."""

from __future__ import annotations

from ga.invocation import invocation


def plan_header() -> str:
    """Whether code can look in this plan-mode run: it runs only in the sandbox, the workspace read-only, offline."""
    from tools import sandbox_problem

    if reason := sandbox_problem():
        return f"plan mode: code_run is refused, since its sandbox cannot hold here ({reason}); the file tools can read"
    return "plan mode: code_run runs in the sandbox with the workspace read-only and no network; nothing is changed"


def carry_out() -> str:
    """The same run carries the plan out, out of plan mode (a resume keeps plan mode unless told otherwise)."""
    return (f'carry it out with: {invocation()} --continue --mode default "go ahead"  (or --confirm instead of --mode '
            "default, to approve each change)")
