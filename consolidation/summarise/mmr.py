"""Which member sentences a summary shows, by maximal marginal relevance (``select``): each
sentence's relevance is half its member's cosine to the cluster's centroid and half its
TF-IDF cosine to the cluster's distinctive words, nudged up for a stated event or fact and
down for a reaction or a remark to the listener; pick by pick, relevance is weighed against
the highest similarity to a sentence already chosen, and repeats are skipped. Also the
sparse TF-IDF vectors it compares and how many sentences a summary shows."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from graphmem.consolidation.summarise.facts import Mentions
from graphmem.consolidation.summarise.phrases import KeyPhrases
from graphmem.consolidation.summarise.protocol import ClusterMember
from graphmem.consolidation.summarise.sentences import Sentence
from graphmem.rules.text import Analyzer, informative_terms

#: MMR: relevance weight (1 - LAMBDA weighs redundancy with what is already chosen)
LAMBDA = 0.6
#: relevance: this much the member's cosine to the centroid, the rest the sentence's TF-IDF
#: cosine to the cluster's (the cluster's distinctive words)
W_CENTRALITY = 0.5
MAX_SENTENCES = 5
MIN_SENTENCES = 2
_FIRST_PERSON = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|we|we're|we've|our|us)\b",
                           re.IGNORECASE)
_EVENT = re.compile(
    r"\b(i|we|i've|we've|i'm|we're|my \w+)\s+(just |recently |finally |also |even )?"
    r"(\w+ed|went|got|saw|made|took|had|ran|bought|met|found|began|won|lost|gave|wrote|"
    r"drew|built|became|came|left|flew|drove|sold|moved|going to|gonna|will|plan\w*|"
    r"signed|joined|adopted|started|finished)\b", re.IGNORECASE)
_EVALUATION = re.compile(r"\b(so|such|super|pretty|totally)\s+(a\s+)?\w+", re.IGNORECASE)
_SECOND_PERSON = re.compile(r"\b(you|your|you're|you've|yours)\b", re.IGNORECASE)
_SECOND_PERSON_OPENING = re.compile(
    r"^\W*(you|your|you're|you've|you'll|it'?s|that'?s|this is|what|how|so|such)\b",
    re.IGNORECASE)


def select(members: Sequence[ClusterMember], pool: Sequence[Sentence], phrases: KeyPhrases,
           key: Sequence[str], found: Mapping[tuple[int, int], Mentions], analyzer: Analyzer
           ) -> list[Sentence]:
    """Sentences in order of maximal marginal relevance (at most ``MAX_SENTENCES`` x 3,
    so the budget can skip long ones). ``found``: what each sentence of ``pool`` mentions,
    by (member, position)."""
    if not pool:
        return []
    vecs = np.stack([np.asarray(m.vector, dtype=np.float64) for m in members])
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    vecs = vecs / np.where(norms > 0, norms, 1.0)
    chatty = {s.member for s in pool}
    centroid = vecs[sorted(chatty)].mean(axis=0)
    centroid /= np.linalg.norm(centroid) or 1.0
    centrality = vecs @ centroid
    member_sims = vecs @ vecs.T
    tfidf = [_tfidf(s.text, phrases, analyzer) for s in pool]
    # the cluster's TF-IDF: (1 + ln members saying a term) x the term's IDF over the run,
    # so its distinctive words weigh, not its most frequent ones
    holders: Counter[str] = Counter()
    for m in {s.member for s in pool}:
        holders.update({t for s, vec in zip(pool, tfidf, strict=True) if s.member == m
                        for t in vec})
    profile = _normalised({t: (1 + math.log(n)) * phrases.idf(t, term=True)
                           for t, n in holders.items()})
    relevance = []
    for s, vec in zip(pool, tfidf, strict=True):
        rel = W_CENTRALITY * float(centrality[s.member]) \
            + (1 - W_CENTRALITY) * _cosine(vec, profile)
        if _FIRST_PERSON.search(s.text):
            rel += 0.05  # what someone did or has, not a reaction to it
        if _SECOND_PERSON.search(s.text):
            rel -= 0.05
        if _SECOND_PERSON_OPENING.match(s.text):
            rel -= 0.1
        if _EVENT.search(s.text):
            rel += 0.05  # something happened, is planned, was made
        if _EVALUATION.search(s.text) or s.text.endswith("!"):
            rel -= 0.05  # "so special", "such a blast", an exclamation
        if found[s.member, s.position]:  # a name, a place, a date or a number
            rel += 0.05
        low = s.text.lower()
        rel += 0.05 * min(2, sum(1 for p in key if p in low))
        words = len(s.text.split())
        if words < 6:
            rel -= 0.05
        relevance.append(rel)
    chosen: list[int] = []
    left = list(range(len(pool)))
    seen: set[str] = set()
    # redundancy: each sentence's highest similarity to one already chosen (None before the
    # first), brought up to date as each is chosen, in the order they are (the same max as
    # over all of them each round); and the TF-IDF cosines (sentence, chosen one) behind it
    overlap: list[float | None] = [None] * len(pool)
    cosines: dict[tuple[int, int], float] = {}

    def gain(i: int) -> float:
        o = overlap[i]
        return LAMBDA * relevance[i] - (1 - LAMBDA) * (0.0 if o is None else o)

    while left and len(chosen) < MAX_SENTENCES * 3:
        best = max(left, key=lambda i: (round(gain(i), 9), -i))
        left.remove(best)
        text = pool[best].text.lower()
        if text in seen or any(cosines[best, j] > 0.85 for j in chosen):
            continue  # the same sentence again, or nearly ("report 0 1", "report 0 2")
        seen.add(text)
        chosen.append(best)
        for i in left:
            c = cosines[i, best] = _cosine(tfidf[i], tfidf[best])
            sim = 0.5 * float(member_sims[pool[i].member, pool[best].member]) + 0.5 * c
            o = overlap[i]
            overlap[i] = sim if o is None else max(o, sim)
    return [pool[i] for i in chosen]


def _tfidf(text: str, phrases: KeyPhrases, analyzer: Analyzer) -> dict[str, float]:
    """A sentence's TF-IDF: (1 + ln count) x the term's IDF over the run, unit length; no
    chit-chat terms, no numbers."""
    counts = Counter(informative_terms(analyzer, text))
    return _normalised({t: (1 + math.log(n)) * phrases.idf(t, term=True)
                        for t, n in counts.items()})


def _normalised(vec: dict[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(w * w for w in vec.values()))
    return {t: w / norm for t, w in vec.items()} if norm else {}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())

