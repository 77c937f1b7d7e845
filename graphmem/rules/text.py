"""Keyword analysis: lowercase word tokens, English stop words out, Snowball stems, dates in.

The same analyser builds the indexed keyword fields and the query terms, so every backend's
full-text index only ever sees pre-analysed, space-separated stems (ADR 0002).
"""

from __future__ import annotations

import hashlib
import re
import threading
import unicodedata
from datetime import datetime

import snowballstemmer

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SPACE = re.compile(r"\s+")

# English stop words as the word tokenizer sees them ("don't" -> "don", "t")
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are aren as at be because been
    before being below between both but by can cannot could couldn did didn do does doesn
    doing don down during each few for from further had hadn has hasn have haven having he
    her here hers herself him himself his how i if in into is isn it its itself let me more
    most mustn my myself no nor not of off on once only or other ought our ours ourselves out
    over own same shan she should shouldn so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was wasn
    we were weren what when where which while who whom why with won would wouldn you your
    yours yourself yourselves s t d ll m re ve just also get got yes yeah oh really""".split()
)

#: words that carry no fact in a conversation (acknowledgements, interjections, praise): a
#: memory made of little else is chit-chat, never a summary's lead or a key phrase
CHIT_CHAT_WORDS = frozenset(
    """thanks thank wow great awesome cool nice haha hahaha lol hey hi hello bye ok okay sure
    amazing glad love lovely good fantastic wonderful totally agree sounds congrats
    congratulations omg yep nope hmm well right absolutely definitely cheers see later soon
    care take appreciate sharing share happy hear incredible super fun""".split()
)
_SPEAKER = re.compile(r"^[^\W\d_][\w .'-]{0,40}:\s")

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")


_THREAD = threading.local()


def _stemmer(language: str) -> snowballstemmer.stemmer:
    """This thread's stemmer: a Snowball stemmer keeps the word it works on in itself, so
    threads sharing one stem into each other's words."""
    mine: dict[str, snowballstemmer.stemmer] = _THREAD.__dict__.setdefault("stemmers", {})
    if language not in mine:
        mine[language] = snowballstemmer.stemmer(language)
    return mine[language]


class Analyzer:
    """Turns text into keyword terms. Thread-safe for reading; stems are memoised.

    Example:
        >>> a = Analyzer()
        >>> a.terms("The deploys failed twice")
        ['deploy', 'fail', 'twice']
    """

    def __init__(self, language: str = "english") -> None:
        self.language = language
        self._cache: dict[str, str] = {}

    def _stem(self, word: str) -> str:
        stem = self._cache.get(word)
        if stem is None:
            stem = _stemmer(self.language).stemWord(word)
            if len(self._cache) < 200_000:
                self._cache[word] = stem
        return stem

    def terms(self, text: str) -> list[str]:
        words = _WORD.findall(unicodedata.normalize("NFKC", text).lower())
        return [self._stem(w) for w in words if w not in STOP_WORDS]

    def query_terms(self, text: str) -> list[str]:
        """Distinct terms of a query, in first-seen order."""
        return list(dict.fromkeys(self.terms(text)))

    def index_text(self, text: str, when: datetime | None = None) -> str:
        """The keyword field for ``text``: its terms plus, optionally, its date's terms."""
        terms = self.terms(text)
        if when is not None:
            terms.extend(date_terms(when))
        return " ".join(terms)


def date_terms(when: datetime) -> list[str]:
    """Day, month name and year: '8 May 2023' -> ['8', 'may', '2023']."""
    return [str(when.day), MONTHS[when.month - 1], str(when.year)]


def normalise_content(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFC", text)).strip()


def content_hash(text: str) -> str:
    """Exact-duplicate key: sha256 of the whitespace-normalised content."""
    return hashlib.sha256(normalise_content(text).encode("utf-8")).hexdigest()


def token_estimate(text: str) -> int:
    """Rough LLM token count (about 4 characters a token), at least 1."""
    return max(1, (len(text) + 3) // 4)


def preview(text: str, chars: int) -> str:
    flat = normalise_content(text)
    if len(flat) <= chars:
        return flat
    cut = flat[: chars - 1]
    space = cut.rfind(" ")
    if space > chars // 2:
        cut = cut[:space]
    return cut + "…"


def strip_speaker(text: str) -> str:
    """``text`` without a leading speaker label ("Caroline: ...")."""
    return _SPEAKER.sub("", text, count=1)


def informative_terms(analyzer: Analyzer, text: str) -> list[str]:
    """The terms of ``text`` that carry content: no stop words (the retrieval list), no
    chit-chat words, no numbers."""
    return [t for t in analyzer.terms(text) if t not in CHIT_CHAT_STEMS and not t.isdigit()]


def is_chit_chat(analyzer: Analyzer, text: str) -> bool:
    """True for "Thanks!", "Wow, great!" and the like: fewer than three informative terms
    after a leading speaker label ("Caroline: ...")."""
    return len(informative_terms(analyzer, strip_speaker(text))) < 3


CHIT_CHAT_STEMS = frozenset(_stemmer("english").stemWord(w) for w in CHIT_CHAT_WORDS) \
    | CHIT_CHAT_WORDS
