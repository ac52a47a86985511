"""Which SOPs fit a task: the words it shares with each SOP, ranked by BM25 over name, description, keywords and
body, and decided by IDF-weighted evidence.

Evidence: the task's words an SOP contains, each weighted by its IDF relative to the largest IDF possible in
this library (about the same scale at 40 SOPs as at 200), a word met only in the body counting BODY_EVIDENCE of
one met in the name, description or keywords (what the SOP says it is for). A Chinese word counts once however
it matches: by itself or by one of its English translations (sop/translate.py), whose joint IDF it then gets.
Each word counts once per SOP, and each field's words once: repeating a word in a description buys nothing.
An SOP is listed when its evidence reaches MIN_EVIDENCE and its BM25 score is within RELATIVE of the best one's.
Figures: bench/perf/memory_bench.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sop import store, translate, words
from sop.ledger import keywords_of
from sop.skill import Skill
from sop.translate import Concept
from sop.words import tokenize

if TYPE_CHECKING:
    import numpy as np

logging.getLogger("bm25s").setLevel(logging.WARNING)  # it announces every index build at DEBUG

LISTED = 3
"""SOPs listed with a task at most."""
MIN_EVIDENCE = 0.85
"""The floor on evidence: more than one rare word met only in a body, about one rare word the SOP says
it is for."""
BODY_EVIDENCE = 0.3
RELATIVE = 0.5
"""Below the best SOP's BM25 score times this, an SOP is not listed."""
NAME_WEIGHT, DESCRIPTION_WEIGHT, KEYWORD_WEIGHT = 3, 2, 2
MAX_KEYWORDS, MAX_KEYWORD = 24, 40
"""Keywords read for retrieval at most, and the characters kept of each (what ga's own ledger keeps)."""


@dataclass(kw_only=True)
class Match:
    index: int
    """Position of the document in the ranked collection."""
    score: float
    """What ranks: BM25."""
    evidence: float
    """The query's words this document holds, weighted by relative IDF and by the field they are in."""
    words: list[str] = field(default_factory=list)
    """The task's words (stems) the document holds."""


def _keywords(skill: Skill) -> list[str]:
    return [k[:MAX_KEYWORD] for k in keywords_of(skill.metadata)[:MAX_KEYWORDS]]


def _once(text: str) -> list[str]:
    return list(dict.fromkeys(tokenize(text)))


def skill_fields(skill: Skill) -> tuple[list[str], list[str]]:
    """(head, body) tokens of an SOP: what it says it is for (each word once per field), and its steps."""
    head = (_once(skill.name.replace("-", " ")) * NAME_WEIGHT + _once(skill.description) * DESCRIPTION_WEIGHT
            + _once(" ".join(_keywords(skill))) * KEYWORD_WEIGHT)
    return head, tokenize(skill.body)


class Ranker:
    """BM25 over a fixed collection of (head, body) documents, with evidence for the relevance floor."""

    def __init__(self, documents: list[tuple[list[str], list[str]]]):
        self.size = len(documents)
        self.heads = [set(head) for head, _ in documents]
        self.sets = [set(head) | set(body) for head, body in documents]
        self.df = Counter(t for s in self.sets for t in s)
        self.top_idf = self._idf(0) if self.size else 1.0
        import bm25s  # with scipy, a third of a second of start-up that a run listing no SOP never needs

        self.bm25 = bm25s.BM25()
        if documents:
            self.bm25.index([head + body for head, body in documents], show_progress=False)

    def idf(self, token: str) -> float:
        return self._idf(self.df.get(token, 0))

    def _idf(self, df: int) -> float:
        return math.log(1 + (self.size - df + 0.5) / (df + 0.5))

    def weight(self, token: str, i: int) -> float:
        """What `token` tells of document i: its relative IDF, less when only the body has it."""
        if token not in self.sets[i]:
            return 0.0
        return self.idf(token) / self.top_idf * (1.0 if token in self.heads[i] else BODY_EVIDENCE)

    def _factors(self, concepts: list[Concept]) -> list[dict[str, float]]:
        """Each translation's factor: its share of the joint IDF of its concept's translations taken as one term."""
        out = []
        for own, translated in concepts:
            known = tuple(t for t in translated if t in self.df and t not in own)
            joint = self._idf(sum(1 for s in self.sets if not s.isdisjoint(known))) if known else 0.0
            out.append({t: joint / self.idf(t) for t in known})
        return out

    def evidence_of(self, concepts: list[Concept], factors: list[dict[str, float]], i: int) -> tuple[float, list[str]]:
        """Document i's evidence for the concepts (their translations' factors given), and the words it holds."""
        total, words = 0.0, []
        for concept, by_translation in zip(concepts, factors, strict=True):
            own = max((self.weight(t, i), t) for t in concept[0])
            translated = max(((self.weight(t, i) * f, t) for t, f in by_translation.items()), default=(0.0, ""))
            best = max(own, translated)
            total += best[0]
            words += [best[1]] if best[0] else []
        return total, words

    def scores(self, concepts: list[Concept], factors: list[dict[str, float]]) -> np.ndarray:
        """BM25 per document, each concept counted by its best alternative."""
        import numpy as np

        total = np.zeros(self.size)
        for concept, by_translation in zip(concepts, factors, strict=True):
            parts = [self.bm25.get_scores([t]) for t in concept[0] if t in self.df]
            parts += [self.bm25.get_scores([t]) * f for t, f in by_translation.items()]
            if parts:
                total += np.max(parts, axis=0)
        return total

    def rank(self, query: str, *, floor: float = MIN_EVIDENCE, limit: int = LISTED) -> list[Match]:
        """The best documents for `query`, best first, each with at least `floor` evidence (0: any match)."""
        concepts = translate.concepts(query)
        if not self.size or not concepts:
            return []
        factors = self._factors(concepts)
        scores = self.scores(concepts, factors)
        found: list[Match] = []
        import numpy as np

        for i in np.argsort(-scores, kind="stable")[: max(limit * 4, 10)]:
            if scores[i] <= 0 or (found and scores[i] < found[0].score * RELATIVE):
                break
            evidence, words = self.evidence_of(concepts, factors, int(i))
            if evidence >= floor:
                found.append(Match(index=int(i), score=float(scores[i]), evidence=evidence, words=words))
        return found[:limit]


_rankers: dict[tuple, Ranker] = {}


def ranker_for(skills: list[Skill], home: Path | None = None) -> Ranker:
    """One Ranker per collection of SOP texts (cached: a run asks more than once)."""
    key = tuple((s.name, s.description, s.metadata.get("keywords", ""), s.body) for s in skills)
    if key not in _rankers:
        _rankers.clear()
        _rankers[key] = Ranker(_fields(skills, home))
    return _rankers[key]


_TOKENIZER = hashlib.sha256(Path(words.__file__).read_bytes()).hexdigest()[:16]
"""Cached tokens are those of this tokeniser: a change to sop/words.py makes them stale."""


def _fields(skills: list[Skill], home: Path | None) -> list[tuple[list[str], list[str]]]:
    """skill_fields of each SOP, kept in GA_HOME/cache by content (tokenising 200 SOPs is most of a cold listing)."""
    if home is None:
        return [skill_fields(s) for s in skills]
    path = home / "cache" / "sop-tokens.json"
    try:
        with store.open_regular(path) as f:  # a FIFO or a link planted there is no cache
            known = json.loads(f.read().decode("utf-8"))
        known = known if isinstance(known, dict) else {}
    except (OSError, ValueError):
        known = {}
    keys = [hashlib.sha256("\0".join((_TOKENIZER, s.name, s.description, ",".join(_keywords(s)), s.body))
                           .encode()).hexdigest()[:32] for s in skills]
    out = []
    for k, skill in zip(keys, skills, strict=True):
        cached = known.get(k)
        valid = isinstance(cached, list) and len(cached) == 2 and all(isinstance(f, list) for f in cached)
        out.append(tuple(cached) if valid else skill_fields(skill))
    if any(k not in known for k in keys):
        with contextlib.suppress(OSError):  # read-only GA_HOME: tokenised again next time
            store.write_text(path, json.dumps(dict(zip(keys, out, strict=True)), ensure_ascii=False))
    return out


def relevant(skills: list[Skill], task: str, *, home: Path | None = None, floor: float | None = None,
             limit: int = LISTED) -> list[tuple[Skill, Match]]:
    """The SOPs a run of `task` lists, best first (none for an unrelated task). `home` keeps SOP tokens in its
    cache; `floor` 0 ranks every SOP that shares a word with the task (the closest ones)."""
    active = [s for s in skills if s.status != "archived"]
    if not active or not translate.concepts(task):  # "Hello": no word to look for; the library is not tokenised
        return []
    found = ranker_for(active, home).rank(task, floor=MIN_EVIDENCE if floor is None else floor, limit=limit)
    return [(active[m.index], m) for m in found]
