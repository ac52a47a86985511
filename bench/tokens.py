"""o200k_base token counts for the benchmarks (bpe-openai refuses very long strings: count in chunks)."""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def _encoding():  # loaded on first use: its tables are large, and not every figure needs them
    import bpe_openai

    return bpe_openai.get_encoding("o200k_base")


def count_tokens(text: str, chunk: int = 20_000) -> int:
    encoding = _encoding()
    total, i = 0, 0
    while i < len(text):
        j = min(len(text), i + chunk)
        if j < len(text):  # cut at a space so no token straddles two chunks
            k = text.rfind(" ", i + chunk // 2, j)
            j = k if k > 0 else j
        total += len(encoding.encode(text[i:j], disallowed_special=()))
        i = j
    return total
