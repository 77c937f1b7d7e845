"""Sentences of a member as the summariser reads them: the speaker label and image caption
taken off (``speaker_and_body``), the turn split into sentences (``split_sentences``), an
opening greeting cut off (``strip_opening``), greetings and reactions recognised
(``is_greeting``); and each sentence judged a question, chit-chat or small talk
(``Sentence``, ``judge_sentences``), so that none of those is chosen for a summary."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphmem.consolidation.summarise.words import _base, _stop, _tokens
from graphmem.rules.text import Analyzer, is_chit_chat, normalise_content

if TYPE_CHECKING:
    from graphmem.consolidation.summarise.protocol import ClusterMember


_GREETING = re.compile(
    r"^\W*(hey|hi|hiya|hello|heya|yo|thanks|thank you|thx|wow|whoa|congrats|congratulations|"
    r"bye|goodbye|see you|see ya|take care|ok|okay|yeah|yep|yes|oh|aw+|omg|haha\w*|lol|"
    r"cool|nice|great|awesome|amazing|sounds|glad|good to|great to|nice to|so glad|"
    r"that'?s|that is|it'?s so|what a|how (cool|nice|great|awesome|amazing|fun|sweet)|"
    r"you'?re so|you are so|good luck|best of luck|sure|absolutely|totally|definitely|"
    r"love (it|that|this|the)|i love (it|that|this)|me too|same here|agreed|exactly)\b",
    re.IGNORECASE)

_CAPTION = re.compile(r"\s*\[image:[^\]]*\]", re.IGNORECASE)
_LABEL = re.compile(r"^([^\W\d_][\w.'-]*(?: [^\W\d_][\w.'-]*){0,2}):\s")
_SENTENCE_END = re.compile(r"(?<=[.!?\u2026])[\"'\u201d\u2019)\]]*\s+")
_ABBREV = re.compile(r"\b(mr|mrs|ms|dr|st|vs|etc|e\.g|i\.e|jr|sr|no)\.$", re.IGNORECASE)


def split_sentences(text: str) -> list[str]:
    """Sentences of a turn (after ``.``, ``!``, ``?`` and a space; not after "Dr." and the
    like)."""
    out: list[str] = []
    for part in _SENTENCE_END.split(normalise_content(text)):
        if out and _ABBREV.search(out[-1]):
            out[-1] += " " + part
        elif part.strip():
            out.append(part.strip())
    return out


def speaker_and_body(content: str) -> tuple[str | None, str]:
    """("Caroline", "text") for "Caroline: text [image: ...]": the label, and the text with
    neither the label nor an image caption."""
    body = _CAPTION.sub("", content)
    m = _LABEL.match(body)
    if m is None:
        return None, body.strip()
    return m.group(1), body[m.end():].strip()


_OPENING = re.compile(
    r"^\W*(?:(?i:hey|hi|hello|wow|whoa|oh|aw+|yeah|yes|yep|ok|okay|well|btw|by the way|"
    r"thanks|thank you|congrats|congratulations|haha|lol|omg)\b(?:,?\s+[A-Z][a-z']+)?"
    r"\s*[,!\u2013\u2014-]+\s*)+"
    r"(?=[A-Z](?![\w']*,)|(?!(?i:for|to|on|with|about)\b)[a-z])")


def strip_opening(sentence: str) -> str:
    """The sentence without an opening greeting or interjection ("Hey Maria, I've been
    busy with the petition" -> "I've been busy with the petition"); a thanks stays one
    ("Thanks, Caroline, for the tip")."""
    m = _OPENING.match(sentence)
    if m is None or m.end() >= len(sentence):
        return sentence
    rest = sentence[m.end():]
    return rest[0].upper() + rest[1:]


def is_greeting(sentence: str) -> bool:
    """Opens like a greeting, an acknowledgement or a reaction ("Hey Mel!", "Thanks!",
    "Wow, that's awesome!")."""
    return _GREETING.match(sentence) is not None


@dataclass(frozen=True)
class Sentence:
    """One sentence of a member, judged (see ``judge_sentences``).

    Example:
        >>> s = Sentence(0, 1, "Caroline", "I went to a support group.", False, False)
        >>> s.speaker, s.question, s.chit_chat, s.small_talk
        ('Caroline', False, False, False)
    """

    member: int  # index into the cluster's members
    position: int  # index of the sentence in its member
    speaker: str | None
    text: str
    question: bool
    chit_chat: bool
    small_talk: bool = False



def judge_sentences(members: Sequence[ClusterMember], speakers: Sequence[str],
                    analyzer: Analyzer) -> list[Sentence]:
    """Every member's sentences, each judged: a question, chit-chat (opens like a
    greeting or a reaction, or has fewer than three content words: no stop, chit-chat,
    filler or common-verb word, no speaker's name), or small talk (chit-chat that even
    ``is_chit_chat`` would call informative: a last resort).

    >>> import numpy as np
    >>> from graphmem.consolidation.summarise.protocol import ClusterMember
    >>> m = ClusterMember("Caroline: Hey Mel! I went to an LGBTQ support group yesterday. "
    ...                   "Are you ok?", np.ones(3), None, "Caroline")
    >>> for s in judge_sentences([m], ["Caroline"], Analyzer()):
    ...     print(s.text, s.question, s.chit_chat)
    Hey Mel! False True
    I went to an LGBTQ support group yesterday. False False
    Are you ok? True True
    """
    known = [s.lower() for s in speakers]
    out = []
    for i, m in enumerate(members):
        label, body = speaker_and_body(m.content)
        speaker = m.source or label
        for k, s in enumerate(split_sentences(body)):
            s = strip_opening(s)
            content = [w for kind, w in _tokens(s) if kind == "w" and not _stop(w)
                       and not any(_base(w) == n or (len(w) >= 3 and n.startswith(
                           _base(w))) for n in known)]
            greeting = is_greeting(s)
            analysed = is_chit_chat(analyzer, s)  # the runner's measure, per sentence
            chat = m.chit_chat or analysed or len(content) < 3 or (
                greeting and len(content) < 5)
            small = chat and not greeting and not analysed
            out.append(Sentence(i, k, speaker, s, s.rstrip("\"')").endswith("?"), chat,
                                small))
    return out


def small_talk(members: Sequence[ClusterMember], analyzer: Analyzer) -> list[bool]:
    """Per member: every sentence of it is a greeting or a reaction, or has fewer than three
    informative terms (``is_chit_chat``), so a summary loses nothing without it (ADR 0059).
    A member that shows an image, or has no sentence, is not small talk.

    >>> import numpy as np
    >>> from graphmem.consolidation.summarise.protocol import ClusterMember
    >>> hey = ClusterMember("Gina: Hey Jon! Good to see you. What's up? Anything new?",
    ...                     np.ones(3), None, "Gina")
    >>> job = ClusterMember("Jon: Hey Gina! Lost my job as a banker yesterday.", np.ones(3),
    ...                     None, "Jon")
    >>> small_talk([hey, job], Analyzer())
    [True, False]
    """
    out = []
    for m in members:
        sentences = [strip_opening(x) for x in split_sentences(speaker_and_body(m.content)[1])]
        out.append(bool(sentences) and not _CAPTION.search(m.content) and all(
            is_greeting(x) or is_chit_chat(analyzer, x) for x in sentences))
    return out
