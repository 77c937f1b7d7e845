"""Key phrases: ``KeyPhrases`` learns from a run's candidates which words head and which
modify a noun phrase, and ranks a cluster's noun phrases by TF-IDF against that background
(one phrase per idea); the helpers it ranks with."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence

from graphmem.consolidation.summarise.sentences import (
    is_greeting,
    speaker_and_body,
    split_sentences,
)
from graphmem.consolidation.summarise.words import (
    _DETERMINERS,
    _NOT_HEAD,
    _OBJECT_STARTERS,
    _PERSONAL,
    _PREDICATE_BEFORE,
    _PREPOSITIONS,
    _participle,
    _stop,
    _tokens,
)
from graphmem.rules.text import Analyzer, informative_terms


class KeyPhrases:
    """TF-IDF over all of a run's candidates, fitted once; ``ranked(texts)`` gives the noun
    phrases (1-3 words) that most distinguish a cluster from that background, best first.

    A phrase is a run of words with no stop word, chit-chat or filler word inside, whose
    last word is seen in the background closing a determiner's phrase ("the painting",
    "a LGBTQ support group", "my kids") and whose other words are seen inside one: nouns and
    their modifiers, never "since", "along like" or "expressing". Speaker labels and image
    captions do not count; neither do greetings and small-talk sentences. A phrase's weight
    in a cluster is (1 + ln members holding it) x its smoothed IDF over the background.

    Example:
        >>> kp = KeyPhrases(["the deploy failed", "the deploy was rolled back", "lunch was good"])
        >>> kp.ranked(["the deploy failed", "the deploy was rolled back"])[0][0]
        'deploy'
    """

    def __init__(self, background: Sequence[str]) -> None:
        self.analyzer = Analyzer()
        self.heads: Counter[str] = Counter()  # closing a determiner's phrase alone
        self.tails: Counter[str] = Counter()  # closing one after other words
        self.modifiers: Counter[str] = Counter()  # inside one
        self.predicates: Counter[str] = Counter()  # after "I", "to", "will", "is", "so" ...
        self.notes: Counter[str] = Counter()  # in a text without determiners
        self._stems: dict[str, str] = {}  # word -> its first term (``_stem``)
        bodies = [speaker_and_body(t)[1] for t in background]
        for body in bodies:
            self._learn(body)
        self.documents = len(bodies)
        self.phrase_df: Counter[str] = Counter()
        self.term_df: Counter[str] = Counter()
        for body in bodies:
            self.phrase_df.update({p.lower() for p in self.surface_phrases(body)})
            self.term_df.update(set(self.analyzer.terms(body)))

    def _learn(self, body: str) -> None:
        """Which words close a determiner's phrase (heads) and which stand inside one; which
        follow a subject, "to", a modal, a copula or an intensifier (verbs, adjectives); and
        the words of notes written without determiners ("nightly backup job failed")."""
        toks = _tokens(body)
        words = [t.lower().replace("\u2019", "'") for k, t in toks if k == "w"]
        for a, b in itertools.pairwise(words):
            if a in _PREDICATE_BEFORE:
                self.predicates[b] += 1
        if not any(w in _DETERMINERS or w in _PREPOSITIONS or w in _PERSONAL for w in words):
            self.notes.update(w for w in words if not _stop(w) and not _participle(w)
                              and not w.endswith(("ing", "ly")) and w not in _NOT_HEAD)
        for i, (kind, tok) in enumerate(toks):
            low = tok.lower().replace("\u2019", "'")
            # "Caroline's painting": a possessive; "lot's happened": a contraction
            det = kind == "n" or (kind == "w" and (low in _DETERMINERS or low in _PREPOSITIONS or (
                low.endswith("'s") and not _stop(low[:-2]))))
            if not det:
                continue
            run: list[str] = []
            j = i + 1
            while j < len(toks) and len(run) < 3 and toks[j][0] == "w" and not _stop(toks[j][1]) \
                    and not _participle(toks[j][1]):
                run.append(toks[j][1].lower())
                j += 1
            if not run:
                continue
            self.modifiers.update(run)
            closed = j >= len(toks) or toks[j][0] != "w" or _stop(toks[j][1])
            # a head closes a determiner's phrase: alone ("the painting."), or after other
            # words when no object follows ("the adoption agencies." but not "the author
            # builds the world", "this journey leads me")
            last = run[-1]
            if not closed or last in _NOT_HEAD or (
                    j < len(toks) and toks[j][1].lower() in _OBJECT_STARTERS):
                continue  # "for expressing yourself", "the author builds the world"
            if len(run) == 1:
                self.heads[last] += 1
            elif not last.endswith(("ing", "ly")):  # "the kids dancing", "confidence lately"
                self.tails[last] += 1

    def is_head(self, word: str) -> bool:
        """Seen closing a determiner's phrase, alone ("the group.") or after other words
        ("the arm runners"), or in notes and never where verbs and adjectives go."""
        return self.heads[word] > 0 or self.tails[word] > 0 or (
            self.notes[word] > 0 and not self.predicates[word])

    def is_modifier(self, word: str) -> bool:
        return self.modifiers[word] > 0 or (self.notes[word] > 0 and not self.predicates[word])

    def _surface_runs(self, body: str) -> Iterable[list[str]]:
        """Runs of candidate words (original case), split at stop words and punctuation."""
        run: list[str] = []
        for kind, tok in _tokens(body):
            if kind == "w" and not _stop(tok) and not _participle(tok) and (
                    len(tok) > 2 or tok.isupper()):
                run.append(tok[:-2] if tok.lower().endswith(("'s", "\u2019s")) else tok)
                if tok.lower().endswith(("'s", "\u2019s")):
                    yield run
                    run = []
            else:
                if run:
                    yield run
                run = []
        if run:
            yield run

    def surface_phrases(self, body: str) -> list[str]:
        """The noun phrases of ``body`` in their original case: every phrase ending at a head
        word, with up to two modifier words before it, and its shorter tails."""
        out: list[str] = []
        for run in self._surface_runs(body):
            low = [w.lower() for w in run]
            for j, w in enumerate(low):
                if not self.is_head(w):
                    continue
                k = j
                while k > 0 and j - k < 2 and self.is_modifier(low[k - 1]):
                    k -= 1
                out.extend(" ".join(run[s:j + 1]) for s in range(k, j + 1))
        return out

    def idf(self, key: str, *, term: bool = False) -> float:
        df = (self.term_df if term else self.phrase_df).get(key, 0)
        return math.log((1 + self.documents) / (1 + df)) + 1.0

    def ranked(self, texts: Sequence[str]) -> list[tuple[str, float]]:
        """(phrase as the cluster writes it, weight), best first; one phrase per idea (a
        phrase inside a better one, or holding one, is left out)."""
        holders: Counter[str] = Counter()
        surface: dict[str, Counter[str]] = {}
        for text in texts:
            body = speaker_and_body(text)[1]
            # a sentence's first word is capitalised because it comes first, not as a name
            kept = " ".join(_decapitalise(s) for s in split_sentences(body)
                            if not is_greeting(s)
                            and len(informative_terms(self.analyzer, s)) >= 3)
            found = self.surface_phrases(kept)
            holders.update({p.lower() for p in found})
            for p in found:
                surface.setdefault(p.lower(), Counter())[p] += 1
        weights = {p: (1 + math.log(n)) * self.idf(p) for p, n in holders.items()}
        # a phrase one member of a larger cluster says is that member's, not the cluster's:
        # phrases held by two members or more come first
        shared = 2 if len(texts) >= 4 else 1
        out: list[tuple[str, float]] = []
        out_stems: list[list[str]] = []  # the words of the phrases in out, stemmed
        for p in sorted(weights, key=lambda q: (holders[q] < shared, -weights[q],
                                                -len(q.split()), q)):
            words = [self._stem(w) for w in p.split()]  # "dance", "dances", "dancing": one
            if any(_overlap(words, o) for o in out_stems):
                continue
            shown = sorted(surface[p].items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            out.append((shown, weights[p]))
            out_stems.append([self._stem(w) for w in shown.lower().split()])
        return out

    def _stem(self, word: str) -> str:
        stem = self._stems.get(word)
        if stem is None:
            stem = self._stems[word] = next(iter(self.analyzer.terms(word)), word)
        return stem


def _decapitalise(sentence: str) -> str:
    if len(sentence) > 1 and sentence[0].isupper() and not sentence[1].isupper():
        return sentence[0].lower() + sentence[1:]
    return sentence


def _overlap(a: list[str], b: list[str]) -> bool:
    """One phrase inside the other, or one ending where the other begins ("different
    fantasy" and "fantasy novels")."""
    def inside(short: list[str], long: list[str]) -> bool:
        n = len(short)
        return n <= len(long) and any(long[i:i + n] == short for i in range(len(long) - n + 1))

    return inside(a, b) or inside(b, a) or a[-1] == b[0] or b[-1] == a[0]
