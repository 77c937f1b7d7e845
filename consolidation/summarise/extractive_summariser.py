"""The default summariser, extractive and deterministic: ``ExtractiveSummariser`` puts a
cluster's members in a fixed order, judges their sentences, ranks the cluster's key phrases,
picks sentences by maximal marginal relevance, gathers the facts they mention and fits it
all into one bounded text (see the package's docstring for what the text reads); also the
order members are put in and how the cluster's speakers are ranked."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC

import numpy as np

from graphmem.config import ConsolidationConfig
from graphmem.consolidation.summarise.facts import find_mentions, gather_facts, time_span
from graphmem.consolidation.summarise.layout import Summary, fit
from graphmem.consolidation.summarise.mmr import MIN_SENTENCES, select
from graphmem.consolidation.summarise.phrases import KeyPhrases
from graphmem.consolidation.summarise.protocol import ClusterMember
from graphmem.consolidation.summarise.sentences import (
    judge_sentences,
    speaker_and_body,
)


class ExtractiveSummariser:
    """The default summariser: see the package's docstring. Deterministic: the output
    depends on the members' contents, vectors, times and sources (not on their order).

    Example:
        >>> from datetime import datetime, timedelta
        >>> t = datetime(2023, 5, 8, 14, 0, tzinfo=UTC)
        >>> texts = ["Caroline: Hey Mel! I went to an LGBTQ support group yesterday.",
        ...          "Melanie: Wow, that's awesome! Thanks for telling me!",
        ...          "Caroline: The support group in Boston has met every Friday since 2021."]
        >>> members = [ClusterMember(x, v, t + timedelta(days=i), x.split(":")[0])
        ...            for i, (x, v) in enumerate(zip(texts, np.eye(3, dtype=np.float32)))]
        >>> print(ExtractiveSummariser(ConsolidationConfig())(members, KeyPhrases(texts)))
        ... # doctest: +NORMALIZE_WHITESPACE
        Caroline and Melanie, 8-10 May 2023, 3 memories about support group, Boston:
        Caroline: I went to an LGBTQ support group yesterday. Caroline: The support group
        in Boston has met every Friday since 2021. (names: LGBTQ; places: Boston;
        dates: 2021, 7 May 2023)
    """

    def __init__(self, config: ConsolidationConfig) -> None:
        self.config = config

    def __call__(self, members: Sequence[ClusterMember], phrases: KeyPhrases) -> str:
        return self.compose(members, phrases).text

    def compose(self, members: Sequence[ClusterMember], phrases: KeyPhrases) -> Summary:
        cfg = self.config
        order = sorted(range(len(members)), key=lambda i: _member_key(members[i]))
        members = [members[i] for i in order]  # the output never depends on the input order
        speakers = _speakers(members)
        # the run's analyser: the same stems as a new one, already memoised for every word
        # of the run's candidates (stemming is most of a cold analyser's time)
        analyzer = phrases.analyzer
        sentences = judge_sentences(members, speakers, analyzer)
        pool = [s for s in sentences if not s.chit_chat and not s.question]
        small_talk = not pool
        if len(pool) < MIN_SENTENCES:  # little but small talk: its most informative
            pool += [s for s in sentences if s.small_talk and not s.question]  # statements
        texts = [s.text for s in sentences if not s.chit_chat] or \
            [speaker_and_body(m.content)[1] for m in members]
        ranked = phrases.ranked(texts) if cfg.key_phrases and not small_talk else []
        times = [m.created_at for m in members if m.created_at is not None]
        span = time_span(times) if times else None
        # what the informative and the pooled sentences mention, found once for both uses
        known = [s.lower() for s in speakers]
        wanted = [s for s in sentences if not s.chit_chat] + [s for s in pool if s.chit_chat]
        found = {(s.member, s.position): find_mentions(s.text, members[s.member].created_at,
                                                       known) for s in wanted}
        picks = select(members, pool, phrases, [p.lower() for p, _ in ranked[:10]], found,
                       analyzer)
        facts = gather_facts(found[s.member, s.position] for s in sentences if not s.chit_chat)
        return fit(cfg, members, speakers, span, [p for p, _ in ranked], picks, facts,
                   small_talk)


def _member_key(m: ClusterMember) -> tuple[str, str, str, bytes]:
    when = m.created_at.astimezone(UTC).isoformat() if m.created_at is not None else ""
    return (when, m.source or "", m.content, np.asarray(m.vector, dtype=np.float32).tobytes())


def _speakers(members: Sequence[ClusterMember]) -> list[str]:
    """Sources (or "Name:" labels), most members first, ties by first appearance (a Counter
    keeps that order and the sort is stable)."""
    counts = Counter(w for w in (m.source or speaker_and_body(m.content)[0] for m in members)
                     if w)
    return sorted(counts, key=lambda s: -counts[s])

