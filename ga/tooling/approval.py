"""Confirm mode: a change is shown to the human (a diff, the command as written) before it runs; they approve,
reject with a reason the model reads, or edit it, and an edit is shown again for approval."""

from __future__ import annotations

import json
import logging

from ga.errors import PermissionDenied, ToolError
from ga.tooling import arguments
from ga.tooling.human import AWAITED, ApprovalPaused
from ga.tooling.spec import ToolContext, ToolSpec

log = logging.getLogger(__name__)

MAX_EDITS = 5
"""Edits of one call at an approval before it counts as rejected."""
APPROVED = "approved"
"""Tool state: what the human approved for the rest of the run ({"all": bool, "tools": [names]}); a resume keeps it."""


def confirm(spec: ToolSpec, args: dict, ctx: ToolContext) -> dict:
    """Show the change (a diff, the command as written) and ask; an edit is shown again for approval."""
    ctx.state.pop(AWAITED, None)  # asked again now (a call left at its approval with Ctrl-D)
    approved = ctx.state.get(APPROVED) or {}
    if approved.get("all") or spec.name in approved.get("tools", []):
        return args
    if not ctx.interactive:
        raise PermissionDenied(
            f"Refused {spec.name}: the run is in confirm mode (rule: confirm-mode) and no human is at a terminal "
            "to approve it. Give your proposed change as the final answer instead.")
    title = f"{spec.name} ({spec.side_effect.value})"
    for _ in range(MAX_EDITS + 1):
        shown = spec.preview(args, ctx) if spec.preview else plain_view(args, spec.editable)
        field = spec.editable
        editable = str(args.get(field, "")) if field else json.dumps(args, ensure_ascii=False, indent=1)
        decision, text = ctx.ui.approve(title, shown, editable, remember=spec.name)
        log.info("confirm mode: the user chose %s for %s", decision, spec.name)
        if decision == "approve":
            _remember(ctx, spec.name, text)
            return args
        if decision == "pause":
            ctx.state[AWAITED] = ctx.call_id
            raise ApprovalPaused(f"Paused at the approval of a {spec.name} call (input ended); nothing was run. "
                                 "Resumed on a terminal, the run asks again.")
        if decision == "reject":
            reason = f" Their reason: {' '.join(text.split())}" if text.strip() else ""
            raise PermissionDenied(f"The user rejected this {spec.name} call (rule: confirm-mode).{reason} "
                                   "Take that into account: ask them, or do it another way.",
                                   shown="rejected" + (f": {' '.join(text.split())}" if text.strip() else ""))
        try:  # an edit the human got wrong is said to the human, never sent to the model
            edited = {**args, field: text} if field else arguments.repair(arguments.parse(text, spec.name),
                                                                          spec.parameters)
            arguments.validate(spec.name, edited, spec.parameters, spec.validator)
        except ToolError as e:
            ctx.ui.notice(f"That edit cannot be used: {e}")
            continue
        args = edited
    raise PermissionDenied(f"The {spec.name} call was edited {MAX_EDITS} times without being approved; "
                           "nothing was run. Ask the user what they want.")


def _remember(ctx: ToolContext, tool: str, scope: str) -> None:
    """"tool": this tool's calls, "run": every change, approved for the rest of the run."""
    if scope not in ("tool", "run"):
        return
    approved = ctx.state.setdefault(APPROVED, {"all": False, "tools": []})
    if scope == "run":
        approved["all"] = True
    elif tool not in approved["tools"]:
        approved["tools"].append(tool)


def plain_view(args: dict, editable: str | None = None) -> str:
    """The arguments for a human: `name: value` lines; text with newlines (and the editable one) as written."""
    lines = []
    for name, value in args.items():
        if name != editable and not (isinstance(value, str) and "\n" in value):
            lines.append(f"{name}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}")
    blocks = [f"{name}:\n{value}" for name, value in args.items()
              if name != editable and isinstance(value, str) and "\n" in value]
    if editable in args:
        blocks.append(str(args[editable]))
    return "\n\n".join(filter(None, ["\n".join(lines), *blocks]))
