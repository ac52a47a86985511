"""Fitting a scanned page to its token budget: the least important regions shrink to one line first, then long
lists in the main content fold, then the main content is cut; whatever was cut is saved whole in the run folder."""

from __future__ import annotations

import secrets

from ga.tooling import tokens
from ga.tooling.spec import ToolContext

SUMMARY_ONLY = {"share", "sharing", "social", "byline-share"}
approx_tokens = tokens.estimate_cached
"""o200k tokens of a line, estimated: the one estimator (ga/tooling/tokens.py), cached for lines counted often."""


def short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


# -- fitting regions to the budget ----------------------------------------------------------------------------
def _header(region: dict, text_only: bool) -> str:
    name = region["kind"] + ("" if text_only else f" #{region['ref']}")
    label = f" {region['label']!r}" if region.get("label") and region["kind"] != "main" else ""
    flag = {"dialog": " (modal: it covers the page; answer or close it first)",
            "overlay": " (fixed on top of the page)"}.get(region["kind"], "")
    if region.get("covered") and region["kind"] != "dialog":
        flag = " (behind the dialog)"
    return f"=== {name}{label}{flag} ==="


def _summary(region: dict, text_only: bool) -> str:
    words = max(1, region.get("chars", 0) // 6)
    refs = len(region.get("refs", []))
    how = "" if text_only else f": $ga({region['ref']}).innerText"
    return f"=== {region['kind']} #{region['ref']}: ~{words} words, {refs} links/controls, not shown{how} ==="


def _lines(region: dict, folded: dict[tuple, int], text_only: bool) -> list[str]:
    out = [_header(region, text_only)]
    for i, part in enumerate(region["parts"]):
        if isinstance(part, str):
            out.append(part)
            continue
        rest = part["rest"]
        keep = folded.get((id(region), i), len(rest))
        out.extend(rest[:keep])
        if keep < len(rest):
            where = f"; all {part['total']}: {part['selector']}" if part["selector"] else ""
            out.append(f"(… {len(rest) - keep} more similar items hidden{where})")
    return out


def split_regions(regions: list[dict], text_only: bool) -> tuple[list[dict], list[dict]]:
    """Regions shown in full (dialogs, overlays, main) and the rest, which shrinks first."""
    main_chars = sum(r.get("chars", 0) for r in regions if r["kind"] == "main")
    # text_only shows the rest of the page's text only when the main content looks too thin to be all of it
    keep = 4 if text_only and main_chars < 2000 else 2
    return [r for r in regions if r["importance"] <= keep], [r for r in regions if r["importance"] > keep]


def compose(regions: list[dict], budget: int, text_only: bool) -> tuple[list[str], list[str], dict | None]:
    """Lines that fit the budget, what was cut (for the marker), and the region truncated last (if any)."""
    primary, secondary = split_regions(regions, text_only)
    # share buttons are never what an agent came for: one summary line, whatever the room
    shown = {id(r): "full" for r in primary} | {
        id(r): "summary" if text_only or r["kind"] in SUMMARY_ONLY else "full" for r in secondary}
    folded: dict[tuple, int] = {}
    cuts: list[str] = []

    def render() -> list[str]:
        lines: list[str] = []
        for r in primary + secondary:
            if shown[id(r)] == "full":
                lines += _lines(r, folded, text_only)
            elif not text_only:
                lines.append(_summary(r, text_only))
        return lines

    def size(lines: list[str]) -> int:
        return sum(approx_tokens(line) + 1 for line in lines)

    lines = render()
    for r in sorted(secondary, key=lambda r: -r["importance"]):
        if size(lines) <= budget:
            return lines, cuts, None
        if shown[id(r)] == "full":
            shown[id(r)] = "summary"
            cuts.append(f"{r['kind']} #{r['ref']}")
            lines = render()
    folds = [(r, i, p) for r in primary for i, p in enumerate(r["parts"]) if isinstance(p, dict)]
    for r, i, part in sorted(folds, key=lambda f: -sum(map(approx_tokens, f[2]["rest"]))):
        excess = size(lines) - budget + 30
        if excess <= 30:
            return lines, cuts, None
        keep = len(part["rest"])  # drop items from the end of the list until the page fits
        while keep > 0 and excess > 0:
            keep -= 1
            excess -= approx_tokens(part["rest"][keep]) + 1
        folded[(id(r), i)] = keep
        cuts.append("long lists folded")
        lines = render()
    if size(lines) <= budget:
        return lines, cuts, None
    kept, used = [], 0
    for line in lines:
        cost = approx_tokens(line) + 1
        if used + cost > budget:
            room = budget - used - 10
            if room > 50:  # a long line (a <pre>, a JSON or text document): keep what fits of it
                chars = len(line) * room // cost
                kept.append(line[:chars] + f"… [line cut at {chars} of {len(line)} chars]")
            break
        used += cost
        kept.append(line)
    partial = len(kept) and kept[-1] != lines[len(kept) - 1]
    return kept, cuts, {"dropped": len(lines) - len(kept) + bool(partial), "tokens": size(lines) - size(kept),
                        "partial": bool(partial)}


def format_scan(scan: dict, budget: int, text_only: bool, ctx: ToolContext | None) -> tuple[str, dict]:
    regions = sorted(scan["regions"], key=lambda r: 0 if r["kind"] in ("dialog", "overlay") else 1)
    lines, cuts, truncated = compose(regions, budget, text_only)
    full_path = None
    if (cuts or truncated) and ctx is not None:
        primary, secondary = split_regions(regions, text_only)  # the order compose shows them in
        everything = [line for r in primary + secondary for line in _lines(r, {}, text_only)]
        full_path = ctx.save_output(f"web_scan-{ctx.call_id or secrets.token_hex(3)}.txt", "\n".join(everything))
    if truncated:
        start = _resume_at(lines[:len(lines) - truncated["partial"]], everything) if full_path else 0
        where = f"; the whole page: {full_path} (read it with file_read, start={start})" if full_path else ""
        lines.append(f"[… cut here to fit ~{budget} tokens: {truncated['dropped']} more lines "
                     f"(~{truncated['tokens']} tokens){where}]")
        kind = scan.get("type") or "text/html"
        if kind != "text/html":
            size = f"{scan.get('textChars', 0) / 1000:.0f}K chars"
            lines.append(f"[the document is {kind}, {size} of text: read more with web_execute_js "
                         "`document.body.innerText.slice(a, b)`]")
    elif cuts:
        shrunk = ", ".join(dict.fromkeys(cuts))
        lines.append(f"[shrunk to fit ~{budget} tokens: {shrunk}; the whole page: {full_path}]")
    if text_only:
        hidden = [r["kind"] for r in split_regions(regions, True)[1]]
        if hidden:
            lines.append(f"(not shown in text_only: {', '.join(dict.fromkeys(hidden))})")
    details = {"regions": [{k: r.get(k) for k in ("kind", "ref", "refs", "folded", "chars")} for r in regions],
               "cut": cuts, "truncated": truncated, "full_output": str(full_path) if full_path else None,
               "scan_ms": scan.get("stats", {}).get("ms")}
    return "\n".join(lines), details


def _resume_at(shown: list[str], everything: list[str]) -> int:
    """The line number (from 1) in the saved page of the first line not shown in full: shown lines are matched
    in order (fold markers and summaries are not in the saved page, so they match nothing)."""
    at = 0
    for line in shown:
        j = at
        while j < len(everything) and everything[j] != line:
            j += 1
        if j < len(everything):
            at = j + 1
    return at + 1
