"""The token estimator against o200k_base, and fitting text into a budget at line and character boundaries."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.harness.meter import count as count_tokens
from ga.tooling import tokens

SAMPLES = Path(__file__).resolve().parents[2] / "fixtures" / "tokens"
KINDS = sorted(p for p in SAMPLES.iterdir() if p.name != "README.md")


@pytest.mark.parametrize("path", KINDS, ids=[p.stem for p in KINDS])
def test_each_kind_of_text_is_estimated_within_15_percent_of_o200k(path):
    text = path.read_text(encoding="utf-8")
    exact = count_tokens(text)
    assert abs(tokens.estimate(text) / exact - 1) <= 0.15, (tokens.estimate(text), exact)


def test_the_mixed_sample_is_estimated_within_15_percent_and_chars_over_4_is_not():
    text = "\n".join(p.read_text(encoding="utf-8") for p in KINDS)
    exact = count_tokens(text)
    assert abs(tokens.estimate(text) / exact - 1) <= 0.15
    chinese = (SAMPLES / "chinese.txt").read_text(encoding="utf-8")
    assert len(chinese) / 4 < 0.6 * count_tokens(chinese)  # what the old estimate got wrong


def test_estimates_scale_to_long_text():
    assert tokens.estimate("") == 0
    assert 180_000 < tokens.estimate("word " * 200_000) <= 220_000


def test_shares_cut_the_largest_first_and_hold_the_budget():
    assert tokens.shares([10, 20, 30], 100) == [10, 20, 30]
    assert tokens.shares([10, 500, 40, 900], 400) == [10, 175, 40, 175]
    assert sum(tokens.shares([1000] * 50, 12_500)) <= 12_500


@given(st.lists(st.integers(0, 10_000), max_size=60), st.integers(0, 50_000))
def test_shares_never_exceed_the_budget_or_a_result(sizes, budget):
    got = tokens.shares(sizes, budget)
    assert sum(got) <= max(budget, sum(sizes) if sum(sizes) <= budget else budget)
    assert all(0 <= g <= s for g, s in zip(got, sizes, strict=True))
    levels = {g for s, g in zip(sizes, got, strict=True) if g < s}
    assert len(levels) <= 1  # every cut result is cut to the same level...
    if levels:  # ...and nothing left whole is larger than that level: the largest were cut first
        assert all(s <= min(levels) for s, g in zip(sizes, got, strict=True) if g == s)


CHARS = st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs", "Mn"))
PIECE = st.text(CHARS, max_size=40) | st.sampled_from(["\n", "\r\n", "    ", "日本語", "é", "😀", "\t", "def f(x):\n"])
TEXT = st.lists(PIECE, max_size=200).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.integers(0, 400))
def test_clip_keeps_whole_lines_within_the_budget(text, budget):
    head, tail = tokens.clip(text, budget)
    if tokens.estimate(text) <= budget:
        assert (head, tail) == (text, "")
        return
    assert text.startswith(head) and text.endswith(tail) and len(head) + len(tail) < len(text)
    assert tokens.estimate(head) + tokens.estimate(tail) <= budget
    # UTF-8 boundaries: the pieces are exact slices, so their bytes are the text's bytes
    middle = text[len(head):len(text) - len(tail)]
    assert (head + middle + tail).encode("utf-8") == text.encode("utf-8")
    if tail:
        assert text[len(text) - len(tail) - 1] == "\n"  # the tail starts on a line
    first_line = text.split("\n", 1)[0]
    if head and "\n" in text and tokens.estimate(first_line + "\n") <= budget * 2 // 3:
        assert head.endswith("\n")  # the head ends on a line


def test_clip_cuts_one_huge_line_at_a_character_boundary():
    text = "语" * 10_000
    head, tail = tokens.clip(text, 100)
    assert tail == "" and 0 < len(head) < 200 and text.startswith(head)
    assert tokens.estimate(head) <= 100


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x2FFF), max_size=300))
def test_text_without_cjk_is_split_as_the_full_pattern_splits_it(text):
    # the pattern without the CJK classes (cheap to compile) stands in for the full one below U+3000 only
    assert tokens._NO_CJK.findall(text) == tokens._with_cjk().findall(text)
