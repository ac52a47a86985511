"""Which SOPs fit a task: BM25 (bm25s) over name, description, keywords and body, above a relevance floor.

BM25 scores grow with the library (rarer words weigh more in a bigger one), so the floor is not a score: it is
the evidence an SOP holds for the task, the task's words it contains, each weighted by its IDF relative to the
largest IDF possible in this library (about the same scale at 40 SOPs as at 200, and lower in a library of a
few SOPs, where a word only one of them has may still be a common word), a word met only in the body counting
BODY_EVIDENCE of one met in the name, description or keywords (what the SOP says it is for). An unrelated task
shares a generic word or two with some SOP; a related one shares its distinctive words. A Chinese word counts
once however it matches: by itself or by one of its English translations (sop/translate.py), whose joint IDF
it then gets.
"""

from __future__ import annotations

import logging
import math
from collections import Counter
from dataclasses import dataclass

import bm25s
import numpy as np

from sop import translate
from sop.ledger import keywords_of
from sop.skill import Skill
from sop.tokens import tokenize
from sop.translate import Concept

logging.getLogger("bm25s").setLevel(logging.WARNING)  # it announces every index build at DEBUG

LISTED = 3
"""SOPs listed with a task at most."""
MIN_EVIDENCE = 0.85
"""Relevance floor (bench/memory_bench.py, dev half): more than one rare word met only in a body, about one rare
word the SOP says it is for. Measured against an IDF relative to a word only one SOP has instead (1.05), it
listed a seed for 12% of other tasks in a new GA_HOME against 4% here, for two more hits in 74 at 53 SOPs."""
BODY_EVIDENCE = 0.3
RELATIVE = 0.5
"""Below the best SOP's score times this, an SOP is not listed (a weak second is noise)."""
NAME_WEIGHT, DESCRIPTION_WEIGHT, KEYWORD_WEIGHT = 3, 2, 2


@dataclass(kw_only=True)
class Match:
    index: int
    """Position of the document in the ranked collection."""
    score: float
    """BM25 score."""
    evidence: float
    """The query's words this document holds, weighted by relative IDF and by the field they are in."""


def skill_fields(skill: Skill) -> tuple[list[str], list[str]]:
    """(head, body) tokens of an SOP: what it says it is for, and its steps."""
    head = (tokenize(skill.name.replace("-", " ")) * NAME_WEIGHT + tokenize(skill.description) * DESCRIPTION_WEIGHT
            + tokenize(" ".join(keywords_of(skill.metadata))) * KEYWORD_WEIGHT)
    return head, tokenize(skill.body)


class Ranker:
    """BM25 over a fixed collection of (head, body) documents, with evidence for the relevance floor."""

    def __init__(self, documents: list[tuple[list[str], list[str]]]):
        self.size = len(documents)
        self.heads = [set(head) for head, _ in documents]
        self.sets = [set(head) | set(body) for head, body in documents]
        self.df = Counter(t for s in self.sets for t in s)
        self.top_idf = self._idf(0) if self.size else 1.0
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

    def shared_idf(self, tokens: tuple[str, ...]) -> float:
        """The IDF of a set of translations taken as one term (documents holding any of them)."""
        return self._idf(sum(1 for s in self.sets if not s.isdisjoint(tokens)))

    def _by_translation(self, concept: Concept) -> dict[str, float]:
        """Each translation's factor: its share of the translations' joint IDF."""
        own, translated = concept
        known = tuple(t for t in translated if t in self.df and t not in own)
        joint = self.shared_idf(known) if known else 0.0
        return {t: joint / self.idf(t) for t in known}

    def evidence(self, concepts: list[Concept], i: int) -> float:
        total = 0.0
        for concept in concepts:
            own = max(self.weight(t, i) for t in concept[0])
            translated = max((self.weight(t, i) * f for t, f in self._by_translation(concept).items()), default=0)
            total += max(own, translated)
        return total

    def scores(self, concepts: list[Concept]) -> np.ndarray:
        """BM25 per document, each concept counted by its best alternative."""
        total = np.zeros(self.size)
        for concept in concepts:
            parts = [self.bm25.get_scores([t]) for t in concept[0] if t in self.df]
            parts += [self.bm25.get_scores([t]) * f for t, f in self._by_translation(concept).items()]
            if parts:
                total += np.max(parts, axis=0)
        return total

    def rank(self, query: str, *, floor: float = MIN_EVIDENCE, limit: int = LISTED) -> list[Match]:
        """The best documents for `query`, best first, each with at least `floor` evidence (0: any match)."""
        concepts = translate.concepts(query)
        if not self.size or not concepts:
            return []
        scores = self.scores(concepts)
        found: list[Match] = []
        for i in np.argsort(-scores, kind="stable")[: max(limit * 4, 10)]:
            if scores[i] <= 0 or (found and scores[i] < found[0].score * RELATIVE):
                break
            evidence = self.evidence(concepts, int(i))
            if evidence >= floor:
                found.append(Match(index=int(i), score=float(scores[i]), evidence=evidence))
        return found[:limit]


_rankers: dict[tuple, Ranker] = {}


def ranker_for(skills: list[Skill]) -> Ranker:
    """One Ranker per collection of SOP texts (cached: a run asks more than once)."""
    key = tuple((s.name, s.description, s.metadata.get("keywords", ""), s.body) for s in skills)
    if key not in _rankers:
        _rankers.clear()
        _rankers[key] = Ranker([skill_fields(s) for s in skills])
    return _rankers[key]


def relevant(skills: list[Skill], task: str, *, floor: float = MIN_EVIDENCE,
             limit: int = LISTED) -> list[tuple[Skill, Match]]:
    """The SOPs a run of `task` lists, best first (none for an unrelated task)."""
    active = [s for s in skills if s.status != "archived"]
    return [(active[m.index], m) for m in ranker_for(active).rank(task, floor=floor, limit=limit)]


def similarity(a: str, b: str) -> float:
    """Cosine of the two texts' token counts (0..1): how much one SOP says what another says."""
    ca, cb = Counter(tokenize(a)), Counter(tokenize(b))
    dot = sum(v * cb[t] for t, v in ca.items())
    norm = math.sqrt(sum(v * v for v in ca.values())) * math.sqrt(sum(v * v for v in cb.values()))
    return dot / norm if norm else 0.0
