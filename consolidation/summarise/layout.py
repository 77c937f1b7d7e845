"""The summary's text within ``max_summary_chars`` (``fit``): the head (people, time span,
member count, key phrases; at most 40% of it), the chosen sentences with their speakers, in
time order, and the facts' trailer (at most 30%), each giving way in a fixed order; and the
parts an extractive summary is made of (``Summary``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphmem.config import ConsolidationConfig
from graphmem.consolidation.summarise.facts import Facts
from graphmem.consolidation.summarise.mmr import MAX_SENTENCES, MIN_SENTENCES
from graphmem.consolidation.summarise.protocol import ClusterMember
from graphmem.consolidation.summarise.sentences import Sentence


@dataclass
class Summary:
    """The parts of an extractive summary; ``text`` is what is stored.

    Example:
        >>> from datetime import UTC, datetime
        >>> import numpy as np
        >>> from graphmem.consolidation.summarise import ExtractiveSummariser, KeyPhrases
        >>> t = datetime(2023, 5, 8, 14, 0, tzinfo=UTC)
        >>> texts = ["Caroline: Hey Mel! I went to an LGBTQ support group yesterday.",
        ...          "Melanie: Wow, that's awesome! Thanks for telling me!",
        ...          "Caroline: The support group meets in Boston every Friday since 2021."]
        >>> members = [ClusterMember(x, v, t, x.split(":")[0])
        ...            for x, v in zip(texts, np.eye(3, dtype=np.float32))]
        >>> s = ExtractiveSummariser(ConsolidationConfig()).compose(members, KeyPhrases(texts))
        >>> s.people, s.span, s.count, [x.text for x in s.sentences][0]
        (['Caroline', 'Melanie'], '8 May 2023', 3, 'I went to an LGBTQ support group yesterday.')
        >>> s.facts.places, s.facts.dates
        (['Boston'], ['2021', '7 May 2023'])
    """

    people: list[str]
    span: str | None
    count: int
    phrases: list[str]
    sentences: list[Sentence]
    facts: Facts
    text: str


def fit(config: ConsolidationConfig, members: Sequence[ClusterMember], speakers: list[str],
        span: str | None, ranked: list[str], picks: list[Sentence], facts: Facts,
        small_talk: bool = False) -> Summary:
    """The text within ``max_summary_chars``: the head (people, span, count, key
    phrases; at most 40% of it), the facts (at most 30%; four of each kind), and 2-5
    sentences in what is left (the facts give way to a second sentence)."""
    limit = config.max_summary_chars
    lead = ", ".join(x for x in (_people(speakers), span) if x)
    count = f"{len(members)} memor{'y' if len(members) == 1 else 'ies'}"
    if small_talk:
        count += " of small talk"
    lead = f"{lead}, {count}" if lead else count
    chosen_phrases = ranked[: config.key_phrases]
    while chosen_phrases and len(_head(lead, chosen_phrases)) > 0.4 * limit:
        chosen_phrases.pop()
    head = _head(lead, chosen_phrases)
    if len(head) > limit // 2:
        head = _shorten(head, limit // 2 - 1).rstrip("…:") + "…:"
    shown = Facts(*(list(getattr(facts, k)[:4]) for k in _FACT_KINDS))
    while _trailer(shown) and len(_trailer(shown)) > 0.3 * limit:
        _drop_one(shown)
    while True:
        room = limit - len(head) - (len(_trailer(shown)) + 1 if _trailer(shown) else 0)
        chosen: list[Sentence] = []
        used = 0
        for s in picks:
            piece = len(_line(s)) + 1
            if len(chosen) < MAX_SENTENCES and used + piece <= room:
                chosen.append(s)
                used += piece
        if len(chosen) >= min(MIN_SENTENCES, len(picks)) or not _trailer(shown):
            break
        _drop_one(shown)
    if not chosen and picks:  # one sentence too long for the room: its beginning
        best = picks[0]
        cut = _shorten(best.text, room - 1 - len(_line(best)) + len(best.text))
        chosen = [Sentence(best.member, best.position, best.speaker, cut, best.question,
                           best.chit_chat)]
    chosen.sort(key=lambda s: (s.member, s.position))  # in time order
    body = " ".join(_line(s) for s in chosen)
    text = f"{head} {body}" if body else head.rstrip(":")
    if _trailer(shown):
        text = f"{text} {_trailer(shown)}"
    if len(text) > limit:  # defensive: never longer than the configured bound
        text = _shorten(text, limit)
    return Summary(speakers, span, len(members), chosen_phrases, chosen, shown, text)


def _people(speakers: Sequence[str]) -> str:
    if not speakers:
        return ""
    if len(speakers) > 4:
        return f"{', '.join(speakers[:3])} and {len(speakers) - 3} others"
    if len(speakers) == 1:
        return speakers[0]
    return f"{', '.join(speakers[:-1])} and {speakers[-1]}"


def _head(lead: str, phrases: Sequence[str]) -> str:
    return f"{lead} about {', '.join(phrases)}:" if phrases else f"{lead}:"


def _line(s: Sentence) -> str:
    return f"{s.speaker}: {s.text}" if s.speaker else s.text


_FACT_KINDS = ("names", "places", "dates", "numbers")


def _drop_one(f: Facts) -> None:
    """The last item of the longest list (names before places ... on ties)."""
    longest = max(_FACT_KINDS, key=lambda k: len(getattr(f, k)))
    getattr(f, longest).pop()


def _trailer(f: Facts) -> str:
    parts = [f"{k}: {', '.join(getattr(f, k))}" for k in _FACT_KINDS if getattr(f, k)]
    return f"({'; '.join(parts)})" if parts else ""


def _shorten(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    cut = text[: max(chars - 1, 0)]
    space = cut.rfind(" ")
    if space > chars // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"

