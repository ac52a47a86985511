"""Words for retrieval: stemmed words in space-separated scripts, character bigrams where words run together.

Chinese, Japanese, Thai and similar scripts do not separate words with spaces; the usual remedy in search
engines (Lucene's CJK analyser) is overlapping character bigrams, which needs no dictionary and handles
mixed text such as "用 pandas 汇总 CSV 文件" as well as plain English."""

from __future__ import annotations

import functools
import importlib.util
import re
import unicodedata
from pathlib import Path

import Stemmer


def _bm25s_stopwords() -> dict:
    """bm25s's stopword lists, read from its data module without importing the package: importing bm25s brings
    scipy (a third of a second of start-up), which a run that lists no SOP never needs."""
    package = importlib.util.find_spec("bm25s")
    spec = importlib.util.spec_from_file_location("_ga_bm25s_stopwords", Path(package.origin).with_name("stopwords.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return vars(module)


_LISTS = _bm25s_stopwords()

STEM_CHARS = 6
"""Stems are cut to this length: it joins summary/summarize/summarise and install/installation, which the
Snowball stemmer keeps apart (measured in bench/perf/memory_bench.py)."""
EXTRA_STOPWORDS = frozenset({
    "please", "want", "would", "could", "like", "need", "help", "let", "also", "thanks", "via", "using", "etc",
    "write", "create", "make", "show", "tell", "give", "get", "take", "put", "explain", "recommend", "describe",
    "many", "much", "one", "two", "three", "four", "five", "few", "several", "each", "another", "other",
    "first", "last", "next", "simple", "short", "long", "new", "old", "good", "best", "way", "thing", "things",
    "something", "anything", "everything", "yes", "ok", "okay", "sure",
    "hello", "hi", "hey", "thank", "thx", "bye", "goodbye", "morning", "evening", "lot",
})
"""Words of task language that name no topic: "write a short story" is not about an SOP that writes files, and a
greeting has nothing to look for (so "Hello" never builds the index)."""
STOPWORDS = frozenset(_LISTS["STOPWORDS_EN_PLUS"]) | EXTRA_STOPWORDS
VARIANTS = {
    "yml": "yaml", "jpg": "jpeg", "img": "image", "imgs": "image", "pic": "picture", "pics": "picture",
    "dir": "directory", "dirs": "directory", "repo": "repository", "repos": "repository", "db": "database",
    "env": "environment", "doc": "document", "docs": "document", "md": "markdown", "py": "python",
    "js": "javascript", "k8s": "kubernetes", "pwd": "password", "auth": "authentication", "msg": "message",
    "pkg": "package", "lib": "library", "libs": "library", "app": "application", "apps": "application",
    "info": "information", "stats": "statistics", "mins": "minute", "sec": "second", "secs": "second",
    "hr": "hour", "hrs": "hour", "cfg": "config", "conf": "config",
}
"""Short forms of one word (not synonyms): settings.yml is a YAML file, app.db a database."""
CJK_STOPWORDS = frozenset(w for w in _LISTS["STOPWORDS_CHINESE"] if len(w) <= 2) | {
    "一个", "一下", "怎么", "如何", "什么", "你好", "您好", "谢谢", "好"}
"""Function words; the single characters among them only matter where a character stands alone."""
CJK_BREAKS = frozenset("的了吗呢吧啊呀请帮我你您他她它们把被将这那和与及或着给让么个")
"""Function characters and the common measure word 个 that end a run of Chinese text (they join no content
word a task would use)."""

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_BRITISH = re.compile(r"(?<=..)is(e|es|ed|ing|ation|ations|er|ers)$")
"""summarise → summarize before stemming, so British and American spellings meet."""


def _unspaced(char: str) -> bool:
    """Characters of scripts written without spaces between words."""
    code = ord(char)
    return (0x2E80 <= code <= 0x9FFF or 0xF900 <= code <= 0xFAFF or 0x20000 <= code <= 0x2FFFF  # CJK, kana
            or 0x0E00 <= code <= 0x0EFF or 0x1000 <= code <= 0x109F or 0x1780 <= code <= 0x17FF)  # Thai, Lao...


@functools.lru_cache(maxsize=1)
def _marks() -> dict[int, None]:
    """Combining marks: dropped after NFKD, so résumé meets resume and Thai vowel signs do not split words."""
    ranges = (range(0x0300, 0x3100), range(0xFE00, 0xFE30))
    return {cp: None for r in ranges for cp in r if unicodedata.category(chr(cp)) == "Mn"}


def fold(text: str) -> str:
    return unicodedata.normalize("NFC", unicodedata.normalize("NFKD", text).translate(_marks())).casefold()


@functools.lru_cache(maxsize=1)
def _stemmer() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _stemmer().stemWord(_BRITISH.sub(r"iz\1", word))[:STEM_CHARS]


_HAN = "\u2e80-\u9fff\uf900-\ufaff\U00020000-\U0002ffff"
"""Han characters (CJK ideographs and their extensions)."""
_BREAK = re.compile("[" + "".join(sorted(CJK_BREAKS)) + "]")
_ACRONYM_PLURAL = re.compile(r"^([^aeiouy\d]{3,})s$")
"""PNGs, PDFs, CSVs: the stemmer keeps the s of a word without a vowel."""


def han_pieces(text: str) -> list[str]:
    """The runs of unspaced script in `text`, cut at function characters: where Chinese words can be."""
    runs = [m.group() for m in _WORD.finditer(fold(text))]
    pieces = []
    for word in runs:
        for run in re.findall(f"[{_HAN}]+", word):
            pieces += [p for p in _BREAK.split(run) if p]
    return pieces


def _bigrams(run: str) -> list[str]:
    out: list[str] = []
    for piece in _BREAK.split(run):
        if len(piece) == 1 and piece not in CJK_STOPWORDS:
            out.append(piece)
        out += [piece[i:i + 2] for i in range(len(piece) - 1) if piece[i:i + 2] not in CJK_STOPWORDS]
    return out


def tokenize(text: str) -> list[str]:
    """Retrieval tokens of `text`, in order (repeats kept: BM25 counts them)."""
    tokens: list[str] = []
    for match in _WORD.finditer(fold(text)):
        word = match.group()
        if word.isascii():  # most words: no script to split at
            tokens += _tokens_of(word)
            continue
        start = 0
        for i, char in enumerate(word + " "):  # split a word where it moves into or out of an unspaced script
            if i == len(word) or (i > start and _unspaced(char) != _unspaced(word[start])):
                tokens += _tokens_of(word[start:i])
                start = i
    return tokens


def _tokens_of(part: str) -> list[str]:
    if _unspaced(part[0]):
        return _bigrams(part)
    part = VARIANTS.get(part, part)
    if part.isdigit() or len(part) < 2 or part in STOPWORDS:
        return []
    return [_stem(_ACRONYM_PLURAL.sub(r"\1", part))]


_KEYWORD = re.compile(f"([{_HAN}]+)|((?:(?![{_HAN}])[^\\W_])+)")


def keywords(text: str, limit: int = 8) -> list[str]:
    """The content words of a task as written (not stemmed), for an SOP's `keywords`: how people ask for it.
    Chinese comes as the runs between function characters (每天早上八点定时运行, 脚本)."""
    out: dict[str, None] = {}
    for han, word in _KEYWORD.findall(fold(text)):
        if han:
            out.update((piece, None) for piece in _BREAK.split(han) if len(piece) > 1)
        elif len(word) > 2 and not word.isdigit() and word not in STOPWORDS:
            out[word] = None
    return list(out)[:limit]
