"""The line that ends a run on the terminal: turns, tokens, the cached share, the time, and the cost when the
settings give prices (price_in, price_out, price_cached: dollars per million tokens)."""

from __future__ import annotations

from ga.config import Settings
from ga.protocols import Usage


def cost(usage: Usage, settings: Settings) -> float | None:
    """What the tokens cost at the settings' prices, or None when no price is known."""
    if not (settings.price_in or settings.price_out):
        return None
    cached = min(usage.cached_tokens, usage.prompt_tokens)
    cached_price = settings.price_cached or settings.price_in
    return ((usage.prompt_tokens - cached) * settings.price_in + cached * cached_price
            + usage.completion_tokens * settings.price_out) / 1e6


def duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m {secs:02d}s" if minutes < 60 else f"{minutes // 60}h {minutes % 60:02d}m"


def dollars(amount: float) -> str:
    return f"${amount:.4f}" if amount < 0.01 else f"${amount:.3f}" if amount < 1 else f"${amount:,.2f}"


def summary_line(usage: Usage, *, turns: int, seconds: float, settings: Settings) -> str:
    """`3 turns · 12,345 in (80% cached) / 2,345 out tokens · 14.2 s · $0.0042`"""
    cached = (f" ({usage.cached_tokens * 100 // usage.prompt_tokens}% cached)"
              if usage.cached_tokens and usage.prompt_tokens else "")
    parts = [f"{turns} turn{'s' if turns != 1 else ''}",
             f"{usage.prompt_tokens:,} in{cached} / {usage.completion_tokens:,} out tokens", duration(seconds)]
    if (spent := cost(usage, settings)) is not None:
        parts.append(dollars(spent))
    return " · ".join(parts)
