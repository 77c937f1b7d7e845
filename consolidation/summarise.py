"""Summaries of a cluster, behind one small protocol (``Summariser``): extractive and
deterministic by default, an OpenAI-compatible endpoint only when configured (never in the
default path or in tests).

The extractive summary reads, for a maintainer who sees it once::

    Caroline and Melanie, 8-12 May 2023, 17 memories about adoption agencies, LGBTQ support
    group: Caroline: I went to a LGBTQ support group yesterday and it was so powerful.
    Melanie: ... (names: Oscar; places: Sweden; dates: 7 May 2023; numbers: 3 kids)

- who (the members' speakers / sources), when (the members' event-time span), how many;
- key phrases: noun phrases ranked by TF-IDF against the run's background (``KeyPhrases``);
- 2-5 member sentences chosen by maximal marginal relevance over the members' sentences
  (relevance: half the member's cosine to the cluster centroid, half the sentence's TF-IDF
  cosine to the cluster's distinctive words, +-0.05 for a stated event or fact / a reaction;
  redundancy: the highest similarity to a sentence already chosen), shown in time order;
  greetings, thanks, praise, small talk and questions are never chosen (an opening "Hey
  Mel," is cut off the sentence it opens);
- names, places, dates and numbers the cluster's informative sentences mention
  (capitalised words not at a sentence start, place prepositions, month names / years /
  relative dates resolved against the member's event time, digits with their unit).

``_ENGLISH`` copies scikit-learn's stop-word list so importing this module does not import
scikit-learn.

No model, no network, no randomness: the same members give the same text.
"""

from __future__ import annotations

import itertools
import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Protocol

import numpy as np

from graphmem.config import ConsolidationConfig
from graphmem.errors import ConfigError
from graphmem.rules.text import (
    CHIT_CHAT_STEMS,
    CHIT_CHAT_WORDS,
    MONTHS,
    STOP_WORDS,
    Analyzer,
    is_chit_chat,
    normalise_content,
)

log = logging.getLogger(__name__)

# -- words ------------------------------------------------------------------------------------
#: scikit-learn's English list (a copy: "since", "along", "ever", "something", "others" ...)
_ENGLISH = frozenset(
    """a about above across after afterwards again against all almost alone along already
    also although always am among amongst amoungst amount an and another any anyhow anyone
    anything anyway anywhere are around as at back be became because become becomes becoming
    been before beforehand behind being below beside besides between beyond bill both bottom
    but by call can cannot cant co con could couldnt cry de describe detail do done down due
    during each eg eight either eleven else elsewhere empty enough etc even ever every everyone
    everything everywhere except few fifteen fifty fill find fire first five for former
    formerly forty found four from front full further get give go had has hasnt have he hence
    her here hereafter hereby herein hereupon hers herself him himself his how however hundred
    i ie if in inc indeed interest into is it its itself keep last latter latterly least less
    ltd made many may me meanwhile might mill mine more moreover most mostly move much must my
    myself name namely neither never nevertheless next nine no nobody none noone nor not
    nothing now nowhere of off often on once one only onto or other others otherwise our ours
    ourselves out over own part per perhaps please put rather re same see seem seemed seeming
    seems serious several she should show side since sincere six sixty so some somehow someone
    something sometime sometimes somewhere still such system take ten than that the their them
    themselves then thence there thereafter thereby therefore therein thereupon these they
    thick thin third this those though three through throughout thru thus to together too top
    toward towards twelve twenty two un under until up upon us very via was we well were what
    whatever when whence whenever where whereafter whereas whereby wherein whereupon wherever
    whether which while whither who whoever whole whom whose why will with within without
    would yet you your yours yourself yourselves""".split())

#: small talk that is not in ``CHIT_CHAT_WORDS``: fillers, time-of-week words, feelings about
#: the conversation itself ("busy week", "had a blast", "so stoked")
FILLER_WORDS = frozenset(
    """busy week weeks day days time times today tonight yesterday tomorrow morning evening
    night weekend weekends lot lots bit thing things stuff way ways kind sort gonna wanna
    gotta kinda sorta ya yall guys guy folks pretty stoked excited excite proud lucky blast
    vibe vibes cute sweet feel feels felt glad mean means meant bunch tons ton whoa aw aww
    awww yay woo yup sorry hope hoping wish wishes hug hugs xoxo dear buddy pal friend
    anytime chat chatting talk talking catch catching update updates news btw gosh
    wonder wondering guess maybe tho though mind pic pics photo photos picture pictures
    ago ones people moment moments everyone someone course fact general touch matter""".split())

#: the commonest verbs in their forms: after a noun they end a phrase ("painting looks like")
COMMON_VERBS = frozenset(
    """like likes liked liking look looks looked looking make makes made making help helps
    helped helping take takes took taken taking want wants wanted wanting need needs needed
    think thinks thought thinking know knows knew known say says said saying tell tells told
    try tries tried trying come comes came coming give gives gave given keep keeps kept let
    lets use uses used using start starts started starting finish finished show shows showed
    shown bring brings brought seem seems seemed get gets got getting go goes went gone going
    do does did done doing have has had having put puts set sets turn turns turned call
    called ask asks asked work worked working play played playing run ran leave left feel
    mean find found become became remind reminds reminded check checked love loves loved
    enjoy enjoyed enjoying hear heard see saw seen seeing watch watched happen happens
    happened forward broke broken fell fallen grew grown knew wrote written drew drawn ate
    eaten drove driven flew flown rode ridden spoke spoken threw thrown wore worn won lost
    sold paid sent spent built bought caught taught fought held met twice thrice""".split())

#: adjectives seen after "a" / "the" that never head a key phrase on their own
_NOT_HEAD = frozenset(
    """new old big small little huge tiny best better worst worse bad real true different
    special favorite favourite entire certain main second perfect hard tough long short high
    low young full free open close sad important beautiful wonderful awesome amazing
    incredible quick slow easy difficult ready able possible sure whole such safe loving
    caring inspiring exciting interesting rewarding relaxing calming touching""".split())

#: not a key phrase word, not an informative word
PHRASE_STOP = STOP_WORDS | _ENGLISH | CHIT_CHAT_WORDS | FILLER_WORDS | COMMON_VERBS \
    | frozenset(MONTHS) | frozenset("""monday tuesday wednesday thursday friday saturday
    sunday""".split())  # dates are facts, not topics

_DETERMINERS = frozenset(
    """a an the my your his her our their this these those its some any each every no another
    several many few two three four five six seven eight nine ten twelve""".split())
#: after these a verb or an adjective comes, not a noun: "I lost", "to go", "was tough"
_PREDICATE_BEFORE = frozenset(
    """i we you they he she it i'm we're you're they're he's she's it's that's to will would
    can could should must might shall 'll don't didn't doesn't won't can't isn't wasn't
    aren't weren't is was are were be been am so very really too pretty quite feel felt
    feels seem seems seemed look looks looked get got getting""".split())
#: a text with none of these, nor determiners or prepositions, is a note, not a sentence
_PERSONAL = frozenset("""i i'm i've i'd i'll me my we we're we've our us you you're your he
    he's his him she she's her they they're their them it it's its that's""".split())
#: after these a noun (or a gerund) comes too: "help folks with adoption."
_PREPOSITIONS = frozenset("of for with about in on at from into by through".split())
#: a word after which these come is more likely a verb than a noun ("builds the world")
_OBJECT_STARTERS = frozenset(
    "the a an my your his her our their me us him them it its this that these those to up "
    "out you myself yourself himself herself itself ourselves yourselves themselves".split())
_NUMBER_WORDS = ("two three four five six seven eight nine ten eleven twelve twenty thirty "
                 "forty fifty hundred").split()
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTH_NAMES = "|".join(m.capitalize() for m in MONTHS)
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
_TOKEN = re.compile(r"(?P<w>[^\W\d_](?:[^\W\d_]|['\u2019-](?=[^\W\d_]))*)"
                    r"|(?P<n>[$€£]?\d+(?:[.,:]\d+)*%?(?:st|nd|rd|th|k|K)?)"
                    r"|(?P<p>[^\s\w])")


def _base(word: str) -> str:
    """Lowercase, straight apostrophes, no possessive "'s"."""
    w = word.lower().replace("\u2019", "'")
    return w[:-2] if w.endswith("'s") else w


def _stop(word: str) -> bool:
    w = word.lower().replace("\u2019", "'")
    return w in PHRASE_STOP or _base(w) in PHRASE_STOP or ("'" in w and not w.endswith("'s"))


def _participle(word: str) -> bool:
    """"named", "called", "signed": a verb form, never inside a noun phrase ("a cat named
    Bailey" is no phrase); short words ("red", "bed") are not."""
    return len(word) > 4 and word.lower().endswith("ed")


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


# -- key phrases ------------------------------------------------------------------------------
def _tokens(text: str) -> list[tuple[str, str]]:
    """(kind, token): kind w (word), n (number), p (punctuation)."""
    return [(m.lastgroup or "p", m.group()) for m in _TOKEN.finditer(text)]


class KeyPhrases:
    """TF-IDF over all of a run's candidates, fitted once; ``top(texts, n)`` gives the noun
    phrases (1-3 words) that most distinguish a cluster from that background.

    A phrase is a run of words with no stop word, chit-chat or filler word inside, whose
    last word is seen in the background closing a determiner's phrase ("the painting",
    "a LGBTQ support group", "my kids") and whose other words are seen inside one: nouns and
    their modifiers, never "since", "along like" or "expressing". Speaker labels and image
    captions do not count; neither do greetings and small-talk sentences. A phrase's weight
    in a cluster is (1 + ln members holding it) x its smoothed IDF over the background.

    Example:
        >>> kp = KeyPhrases(["the deploy failed", "the deploy was rolled back", "lunch was good"])
        >>> "deploy" in kp.top(["the deploy failed", "the deploy was rolled back"], 2)
        True
    """

    def __init__(self, background: Sequence[str]) -> None:
        self.analyzer = Analyzer()
        self.heads: Counter[str] = Counter()  # closing a determiner's phrase alone
        self.tails: Counter[str] = Counter()  # closing one after other words
        self.modifiers: Counter[str] = Counter()  # inside one
        self.predicates: Counter[str] = Counter()  # after "I", "to", "will", "is", "so" ...
        self.notes: Counter[str] = Counter()  # in a text without determiners
        bodies = [speaker_and_body(t)[1] for t in background]
        for body in bodies:
            self._learn(body)
        self.documents = len(bodies)
        self.phrase_df: Counter[str] = Counter()
        self.term_df: Counter[str] = Counter()
        for body in bodies:
            self.phrase_df.update(set(self.phrases(body)))
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

    def phrases(self, body: str) -> list[str]:
        return [p.lower() for p in self.surface_phrases(body)]

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
                            if not is_greeting(s) and not self._chit_chat(s))
            found = self.surface_phrases(kept)
            holders.update({p.lower() for p in found})
            for p in found:
                surface.setdefault(p.lower(), Counter())[p] += 1
        weights = {p: (1 + math.log(n)) * self.idf(p) for p, n in holders.items()}
        # a phrase one member of a larger cluster says is that member's, not the cluster's:
        # phrases held by two members or more come first
        shared = 2 if len(texts) >= 4 else 1
        out: list[tuple[str, float]] = []
        for p in sorted(weights, key=lambda q: (holders[q] < shared, -weights[q],
                                                -len(q.split()), q)):
            words = [self._stem(w) for w in p.split()]  # "dance", "dances", "dancing": one
            if any(_overlap(words, [self._stem(w) for w in o.lower().split()]) for o, _ in out):
                continue
            shown = sorted(surface[p].items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
            out.append((shown, weights[p]))
        return out

    def top(self, texts: Sequence[str], n: int) -> list[str]:
        if n <= 0 or not texts:
            return []
        return [p for p, _ in self.ranked(texts)[:n]]

    def _stem(self, word: str) -> str:
        return next(iter(self.analyzer.terms(word)), word)

    def _chit_chat(self, sentence: str) -> bool:
        terms = [t for t in self.analyzer.terms(sentence)
                 if t not in CHIT_CHAT_STEMS and not t.isdigit()]
        return len(terms) < 3


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


# -- the protocol -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ClusterMember:
    """One memory of a cluster as a summariser sees it (the runner builds them).

    Example:
        >>> m = ClusterMember("Caroline: I went to a support group.", np.ones(384) / 384 ** 0.5,
        ...                   datetime(2023, 5, 8, tzinfo=UTC), "Caroline")
        >>> m.source, m.chit_chat
        ('Caroline', False)
    """

    content: str
    vector: np.ndarray  # unit embedding (float32, 384)
    #: event time (tz-aware); None when the caller does not know it (no time span then)
    created_at: datetime | None
    source: str | None = None  # speaker / agent
    chit_chat: bool = False  # is_chit_chat(analyzer, content), computed by the runner


class Summariser(Protocol):
    """What consolidation calls to write a cluster's summary: the members (and the run's
    key phrases, fitted once on all its candidates) in, the summary's text out. An operator's
    LLM summariser is one more implementation (``OpenAISummariser``).

    Example:
        >>> def first_member(members, phrases):  # any callable of this shape will do
        ...     return members[0].content
        >>> summariser: Summariser = first_member
        >>> isinstance(make_summariser(ConsolidationConfig()), ExtractiveSummariser)
        True
    """

    def __call__(self, members: Sequence[ClusterMember], phrases: KeyPhrases) -> str: ...


def make_summariser(config: ConsolidationConfig) -> Summariser:
    """The extractive summariser, or the OpenAI-compatible one when config.summariser ==
    "openai"."""
    if config.summariser == "openai":
        return OpenAISummariser(config)
    return ExtractiveSummariser(config)


# -- facts: names, places, dates, numbers -----------------------------------------------------
_PLACE_BEFORE = frozenset("in at from near visited visiting visit around across".split())
_MOTION = frozenset("went go going goes moved move moving trip travel traveled travelled "
                    "flew fly flying drove drive driving headed heading back road".split())
_NOT_NAME = frozenset(
    """i i'm i've i'd i'll im ive ok okay mom dad mum god lol omg haha hey hi hello thanks wow
    yes yeah oh yay aww mon tue tues wed thu thur thurs fri sat sun""".split()) \
    | frozenset(_WEEKDAYS) | frozenset(MONTHS)
_DATE_ABSOLUTE = re.compile(
    rf"\b(?:(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH_NAMES})(?:,?\s+((?:19|20)\d\d))?"
    rf"|({_MONTH_NAMES})\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?:,?\s+((?:19|20)\d\d))?"
    rf"|(?:(?<=\bin )|(?<=\bof )|(?<=\blast )|(?<=\bnext )|(?<=\bthis )|(?<=\bsince )"
    rf"|(?<=\buntil ))({_MONTH_NAMES})(?:,?\s+((?:19|20)\d\d))?"
    rf"|(?!May\b)({_MONTH_NAMES})(?:,?\s+((?:19|20)\d\d))?"
    rf"|(?<![\d$.,])((?:19|20)\d\d)(?![\d%]))\b")
_DATE_RELATIVE = re.compile(
    r"\b(yesterday|last (?:week|weekend|month|year|summer|winter|spring|fall|autumn)"
    r"|next (?:month|year)|(\d+|two|three|four|five|six|seven|eight|nine|ten|a) "
    r"(years?|months?) ago)\b", re.IGNORECASE)
_NUMBER = re.compile(
    r"(?<![\w$€£.,:/])([$€£]?\d+(?:[.,]\d+)?%?(?:k|K)?)(?![\w:/]|[.,]\d)(?:\s+([a-zA-Z]+))?"
    rf"|\b({'|'.join(_NUMBER_WORDS)})\s+((?:[a-z]+\s+)?[a-z]+s)\b", re.IGNORECASE)
_WORD_NUMBER = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten".split())} | {"a": 1}


def _day(d: datetime) -> str:
    return f"{d.day} {MONTHS[d.month - 1].capitalize()} {d.year}"


def time_span(times: Sequence[datetime]) -> str:
    """'8 May 2023', '8-12 May 2023', '30 April - 3 May 2023', '28 December 2022 - 3 January
    2023' (UTC dates)."""
    first, last = (t.astimezone(UTC) for t in (min(times), max(times)))
    if first.date() == last.date():
        return _day(first)
    month = MONTHS[last.month - 1].capitalize()
    if (first.year, first.month) == (last.year, last.month):
        return f"{first.day}-{last.day} {month} {last.year}"
    if first.year == last.year:
        return f"{first.day} {MONTHS[first.month - 1].capitalize()} - {last.day} {month} " \
               f"{last.year}"
    return f"{_day(first)} - {_day(last)}"


def _relative(expr: str, when: datetime | None) -> str | None:
    """A relative date resolved against the event time ("yesterday" on 8 May 2023: "7 May
    2023"); None without one."""
    if when is None:
        return None
    w = when.astimezone(UTC)
    e = expr.lower()
    if e == "yesterday":
        return _day(w - timedelta(days=1))
    if e in ("last year", "next year"):
        return str(w.year + (1 if e.startswith("next") else -1))
    if e in ("last month", "next month"):
        m = w.month + (1 if e.startswith("next") else -1)
        y = w.year + (m - 1) // 12
        return f"{MONTHS[(m - 1) % 12].capitalize()} {y}"
    if e in ("last week", "last weekend"):
        return f"the {e.split()[1]} before {_day(w)}"
    if e.startswith("last "):  # last summer ...
        return f"{e.split()[1]} {w.year if e.split()[1] != 'winter' else w.year - 1}"
    ago = re.match(r"(\w+) (years?|months?) ago", e)
    if ago:
        n = int(ago.group(1)) if ago.group(1).isdigit() else _WORD_NUMBER.get(ago.group(1), 0)
        if not n:
            return None
        if ago.group(2).startswith("year"):
            return str(w.year - n)
        k = w.year * 12 + w.month - 1 - n
        return f"{MONTHS[k % 12].capitalize()} {k // 12}"
    return None


@dataclass
class Facts:
    """Names, places, dates and numbers a cluster mentions (see ``extract_facts``).

    Example:
        >>> extract_facts([("We moved to Sweden 4 years ago with Oscar.",
        ...                 datetime(2023, 5, 8, tzinfo=UTC))], ["Caroline"])
        Facts(names=['Oscar'], places=['Sweden'], dates=['2019'], numbers=[])
    """

    names: list[str]
    places: list[str]
    dates: list[str]
    numbers: list[str]


def extract_facts(sentences: Sequence[tuple[str, datetime | None]],
                  speakers: Sequence[str]) -> Facts:
    """Names (capitalised words not at a sentence start, runs of them joined), places (a name
    after "in", "at", "from", "went to" ...), dates (day and month, month and year, years,
    relative dates resolved against the event time) and numbers (with the word that follows,
    "3 kids") in ``sentences``, most mentioned first (ties: first seen). Speakers and their
    short forms ("Mel" for Melanie) are not names."""
    names: Counter[str] = Counter()
    place_votes: Counter[str] = Counter()
    first: dict[str, int] = {}
    dates: list[tuple[tuple[int, int, int], str]] = []
    numbers: list[str] = []
    known = [s.lower() for s in speakers]
    for sentence, when in sentences:
        date_spans: list[tuple[int, int]] = []
        for m in _DATE_ABSOLUTE.finditer(sentence):
            g = m.groups()
            if g[0]:
                text = f"{int(g[0])} {g[1]}" + (f" {g[2]}" if g[2] else "")
            elif g[3]:
                text = f"{int(g[4])} {g[3]}" + (f" {g[5]}" if g[5] else "")
            elif g[6]:
                text = g[6] + (f" {g[7]}" if g[7] else "")
            elif g[8]:
                if m.start() == 0:
                    continue  # a month name opening a sentence: likely "May I ..."
                text = g[8] + (f" {g[9]}" if g[9] else "")
            else:
                text = g[10]
            date_spans.append(m.span())
            dates.append((_date_key(text, when), text))
        for m in _DATE_RELATIVE.finditer(sentence):
            resolved = _relative(m.group(1), when)
            if resolved:
                dates.append((_date_key(resolved, when), resolved))
            date_spans.append(m.span())
        for m in _NUMBER.finditer(sentence):
            if any(a <= m.start() < b for a, b in date_spans):
                continue
            if m.group(1):
                unit = m.group(2) or ""
                if unit and not _stop(unit):
                    numbers.append(f"{m.group(1)} {unit}")  # "3 kids"
                elif m.group(1)[0] in "$€£" or m.group(1)[-1] in "%kK":
                    numbers.append(m.group(1))  # "$300", "5K"; a bare "3" says nothing
            else:
                numbers.append(f"{m.group(3).lower()} {m.group(4)}")
        toks = [(k, t, mm.start()) for mm in _TOKEN.finditer(sentence)
                for k, t in [(mm.lastgroup or "p", mm.group())]]
        i = 0
        while i < len(toks):
            kind, tok, _ = toks[i]
            at_start = i == 0
            if kind != "w" or not tok[:1].isupper() or at_start or _base(tok) in _NOT_NAME \
                    or any(a <= toks[i][2] < b for a, b in date_spans):
                i += 1
                continue
            j, run = i, []
            while j < len(toks) and toks[j][0] == "w" and toks[j][1][:1].isupper() \
                    and _base(toks[j][1]) not in _NOT_NAME:
                run.append(toks[j][1][:-2] if toks[j][1].lower().endswith(("'s", "\u2019s"))
                           else toks[j][1])
                j += 1
                if run[-1] != toks[j - 1][1]:  # a possessive closes the name ...
                    if j < len(toks) and toks[j][0] == "w" and toks[j][1][:1].isupper():
                        run[-1] = toks[j - 1][1]  # ... unless a title goes on: "Charlotte's Web"
                        continue
                    break
            name = " ".join(run)
            low = name.lower()
            prev = toks[i - 1][1].lower() if i > 0 else ""
            prev2 = toks[i - 2][1].lower() if i > 1 else ""
            is_speaker = any(low == s or (len(low) >= 3 and s.startswith(low))
                             or s == low.split()[0] for s in known)
            if not is_speaker and (len(name) > 2 or name.isupper()) and \
                    not (len(run) == 1 and _stop(name)):
                names[name] += 1
                first.setdefault(name, len(first))
                if prev in _PLACE_BEFORE or (prev == "to" and prev2 in _MOTION):
                    place_votes[name] += 1
            i = max(j, i + 1)
    ordered = sorted(names, key=lambda n: (-names[n], first[n]))
    places = [n for n in ordered if place_votes[n] * 2 >= names[n]]
    return Facts(names=[n for n in ordered if n not in places], places=places,
                 dates=list(dict.fromkeys(t for _, t in sorted(dates, key=lambda d: d[0]))),
                 numbers=list(dict.fromkeys(numbers)))


_SEASONS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def _date_key(text: str, when: datetime | None) -> tuple[int, int, int]:
    """(year, month, day) to put dates in time order (0 where unknown; the event's year
    for "20 June"); unreadable ones last."""
    year = when.year if when is not None else 9999
    m = re.fullmatch(r"the (week|weekend) before (\d+) (\w+) (\d{4})", text)
    if m:
        d = datetime(int(m.group(4)), MONTHS.index(m.group(3).lower()) + 1, int(m.group(2)))
        d -= timedelta(days=7)
        return (d.year, d.month, d.day)
    words = text.lower().split()
    y = next((int(w) for w in words if w.isdigit() and len(w) == 4), year)
    day = next((int(w) for w in words if w.isdigit() and len(w) <= 2), 0)
    month = next((MONTHS.index(w) + 1 for w in words if w in MONTHS),
                 next((_SEASONS[w] for w in words if w in _SEASONS), 0))
    return (y, month, day)


# -- the extractive summariser ----------------------------------------------------------------
@dataclass(frozen=True)
class Sentence:
    """One sentence of a member, judged (see ``ExtractiveSummariser.sentences``).

    Example:
        >>> s = Sentence(0, 1, "Caroline", "I went to a support group.", False, False)
        >>> _line(s)
        'Caroline: I went to a support group.'
    """

    member: int  # index into the cluster's members
    position: int  # index of the sentence in its member
    speaker: str | None
    text: str
    question: bool
    chit_chat: bool
    small_talk: bool = False


@dataclass
class Summary:
    """The parts of an extractive summary; ``text`` is what is stored.

    Example:
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


class ExtractiveSummariser:
    """The default summariser: see the module's docstring. Deterministic: the output
    depends on the members' contents, vectors, times and sources (not on their order).

    Example:
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
        self.analyzer = Analyzer()

    def __call__(self, members: Sequence[ClusterMember], phrases: KeyPhrases) -> str:
        return self.compose(members, phrases).text

    # -- parts --------------------------------------------------------------------------------
    def sentences(self, members: Sequence[ClusterMember], speakers: Sequence[str]
                  ) -> list[Sentence]:
        """Every member's sentences, each judged: a question, chit-chat (opens like a
        greeting or a reaction, or has fewer than three content words: no stop, chit-chat,
        filler or common-verb word, no speaker's name), or small talk (chit-chat that even
        ``is_chit_chat`` would call informative: a last resort)."""
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
                analysed = is_chit_chat(self.analyzer, s)  # the runner's measure, per sentence
                chat = m.chit_chat or analysed or len(content) < 3 or (
                    greeting and len(content) < 5)
                small = chat and not greeting and not analysed
                out.append(Sentence(i, k, speaker, s, s.rstrip("\"')").endswith("?"), chat,
                                    small))
        return out

    def compose(self, members: Sequence[ClusterMember], phrases: KeyPhrases) -> Summary:
        cfg = self.config
        order = sorted(range(len(members)), key=lambda i: _member_key(members[i]))
        members = [members[i] for i in order]  # the output never depends on the input order
        speakers = _speakers(members)
        sentences = self.sentences(members, speakers)
        pool = [s for s in sentences if not s.chit_chat and not s.question]
        small_talk = not pool
        if len(pool) < MIN_SENTENCES:  # little but small talk: its most informative
            pool += [s for s in sentences if s.small_talk and not s.question]  # statements
        texts = [s.text for s in sentences if not s.chit_chat] or \
            [speaker_and_body(m.content)[1] for m in members]
        ranked = phrases.ranked(texts) if cfg.key_phrases and not small_talk else []
        times = [m.created_at for m in members if m.created_at is not None]
        span = time_span(times) if times else None
        picks = self._mmr(members, pool, phrases, [p.lower() for p, _ in ranked[:10]],
                          speakers)
        facts = extract_facts([(s.text, members[s.member].created_at) for s in
                               sentences if not s.chit_chat], speakers)
        return self._fit(members, speakers, span, [p for p, _ in ranked], picks, facts,
                         small_talk)

    def _mmr(self, members: Sequence[ClusterMember], pool: Sequence[Sentence],
             phrases: KeyPhrases, key: Sequence[str], speakers: Sequence[str]
             ) -> list[Sentence]:
        """Sentences in order of maximal marginal relevance (at most ``MAX_SENTENCES`` x 3,
        so the budget can skip long ones)."""
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
        tfidf = [self._tfidf(s.text, phrases) for s in pool]
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
            f = extract_facts([(s.text, members[s.member].created_at)], speakers)
            if f.names or f.places or f.dates or f.numbers:
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
        while left and len(chosen) < MAX_SENTENCES * 3:
            def gain(i: int) -> float:
                overlap = max((0.5 * float(member_sims[pool[i].member, pool[j].member])
                               + 0.5 * _cosine(tfidf[i], tfidf[j]) for j in chosen),
                              default=0.0)
                return LAMBDA * relevance[i] - (1 - LAMBDA) * overlap

            best = max(left, key=lambda i: (round(gain(i), 9), -i))
            left.remove(best)
            key = pool[best].text.lower()
            if key in seen or any(_cosine(tfidf[best], tfidf[j]) > 0.85 for j in chosen):
                continue  # the same sentence again, or nearly ("report 0 1", "report 0 2")
            seen.add(key)
            chosen.append(best)
        return [pool[i] for i in chosen]

    def _tfidf(self, text: str, phrases: KeyPhrases) -> dict[str, float]:
        counts = Counter(t for t in self.analyzer.terms(text)
                         if t not in CHIT_CHAT_STEMS and not t.isdigit())
        return _normalised({t: (1 + math.log(n)) * phrases.idf(t, term=True)
                            for t, n in counts.items()})

    def _fit(self, members: Sequence[ClusterMember], speakers: list[str], span: str | None,
             ranked: list[str], picks: list[Sentence], facts: Facts, small_talk: bool = False
             ) -> Summary:
        """The text within ``max_summary_chars``: the head (people, span, count, key
        phrases; at most 40% of it), the facts (at most 30%; four of each kind), and 2-5
        sentences in what is left (the facts give way to a second sentence)."""
        limit = self.config.max_summary_chars
        lead = ", ".join(x for x in (_people(speakers), span) if x)
        count = f"{len(members)} memor{'y' if len(members) == 1 else 'ies'}"
        if small_talk:
            count += " of small talk"
        lead = f"{lead}, {count}" if lead else count
        chosen_phrases = ranked[: self.config.key_phrases]
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


def _member_key(m: ClusterMember) -> tuple[str, str, str, bytes]:
    when = m.created_at.astimezone(UTC).isoformat() if m.created_at is not None else ""
    return (when, m.source or "", m.content, np.asarray(m.vector, dtype=np.float32).tobytes())


def _speakers(members: Sequence[ClusterMember]) -> list[str]:
    """Sources (or "Name:" labels), most members first, ties by first appearance."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for i, m in enumerate(members):
        who = m.source or speaker_and_body(m.content)[0]
        if who:
            counts[who] += 1
            first.setdefault(who, i)
    return sorted(counts, key=lambda s: (-counts[s], first[s]))


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
    parts = [f"{label}: {', '.join(items)}" for label, items in
             (("names", f.names), ("places", f.places), ("dates", f.dates),
              ("numbers", f.numbers)) if items]
    return f"({'; '.join(parts)})" if parts else ""


def _shorten(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    cut = text[: max(chars - 1, 0)]
    space = cut.rfind(" ")
    if space > chars // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:") + "…"


def _normalised(vec: dict[str, float]) -> dict[str, float]:
    norm = math.sqrt(sum(w * w for w in vec.values()))
    return {t: w / norm for t, w in vec.items()} if norm else {}


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if len(a) > len(b):
        a, b = b, a
    return sum(w * b.get(t, 0.0) for t, w in a.items())


# -- the optional LLM summariser --------------------------------------------------------------
class OpenAISummariser:
    """One chat completion on an OpenAI-compatible endpoint per cluster (only when
    configured: ``summariser = "openai"``, ``openai_base_url``, ``openai_model``).

    Example:
        >>> cfg = ConsolidationConfig(summariser="openai")
        >>> isinstance(make_summariser(cfg), OpenAISummariser)  # built, never called here
        True
    """

    def __init__(self, config: ConsolidationConfig) -> None:
        self.config = config

    def __call__(self, members: Sequence[ClusterMember], phrases: KeyPhrases) -> str:
        return openai_summary([m.content for m in members], self.config)


def openai_summary(texts: Sequence[str], config: ConsolidationConfig) -> str:
    """One chat completion on an OpenAI-compatible endpoint (only when configured)."""
    if not (config.openai_base_url and config.openai_model):
        raise ConfigError("the openai summariser needs openai_base_url and openai_model")
    import httpx

    key = config.openai_api_key.get_secret_value() if config.openai_api_key else ""
    prompt = ("Summarise these related memories of an AI agent in at most "
              f"{config.max_summary_chars} characters, keeping names, numbers and dates:\n- "
              + "\n- ".join(texts))
    response = httpx.post(f"{config.openai_base_url.rstrip('/')}/chat/completions",
                          headers={"Authorization": f"Bearer {key}"}, timeout=60,
                          json={"model": config.openai_model,
                                "messages": [{"role": "user", "content": prompt}]})
    response.raise_for_status()
    text = str(response.json()["choices"][0]["message"]["content"]).strip()
    return text[: config.max_summary_chars]


# -- the old entry points (until the callers pass ClusterMembers) -----------------------------
def _members(texts: Sequence[str], vectors: np.ndarray,
             chit_chat: Sequence[bool] | None) -> list[ClusterMember]:
    flags = list(chit_chat) if chit_chat is not None else [False] * len(texts)
    return [ClusterMember(t, np.asarray(v), None, None, c)
            for t, v, c in zip(texts, vectors, flags, strict=True)]


def extractive(texts: Sequence[str], vectors: np.ndarray, phrases: KeyPhrases,
               config: ConsolidationConfig, chit_chat: Sequence[bool] | None = None) -> str:
    """The extractive summary of members known only by text and vector (no time span;
    speakers from "Name: " labels)."""
    return ExtractiveSummariser(config)(_members(texts, vectors, chit_chat), phrases)


def summarise(texts: Sequence[str], vectors: np.ndarray, phrases: KeyPhrases,
              config: ConsolidationConfig, chit_chat: Sequence[bool] | None = None) -> str:
    """``make_summariser(config)`` on members known only by text and vector; callers that
    know the members' times and sources should build ``ClusterMember``s instead."""
    return make_summariser(config)(_members(texts, vectors, chit_chat), phrases)
