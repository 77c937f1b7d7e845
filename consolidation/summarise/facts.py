"""Facts a cluster's sentences mention: names (capitalised words not at a sentence start),
places (a name after "in", "at", "went to" ...), dates (day and month, month and year, years,
relative dates resolved against the member's event time) and numbers with their unit
(``find_mentions``, ``gather_facts``, ``Facts``); and the members' time span as a summary writes it
(``time_span``)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from graphmem.consolidation.summarise.words import (
    _MONTH_NAMES,
    _NUMBER_WORDS,
    _TOKEN,
    _WEEKDAYS,
    _base,
    _stop,
)
from graphmem.rules.text import MONTHS

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
    """Names, places, dates and numbers a cluster mentions (see ``find_mentions``).

    Example:
        >>> gather_facts([find_mentions("We moved to Sweden 4 years ago with Oscar.",
        ...                             datetime(2023, 5, 8, tzinfo=UTC), ["caroline"])])
        Facts(names=['Oscar'], places=['Sweden'], dates=['2019'], numbers=[])
    """

    names: list[str]
    places: list[str]
    dates: list[str]
    numbers: list[str]


@dataclass(frozen=True)
class Mentions:
    """What one sentence mentions, in the order it says it: names (each with whether a place
    word comes before it: "in", "at", "went to" ...), dates (with a key to put them in time
    order) and numbers. ``gather_facts`` counts them over a cluster's sentences.

    Example:
        >>> m = find_mentions("We moved to Sweden with Oscar in 2019.", None, ["caroline"])
        >>> m.names, m.dates, bool(m)
        ([('Sweden', True), ('Oscar', False)], [((2019, 0, 0), '2019')], True)
    """

    names: list[tuple[str, bool]]
    dates: list[tuple[tuple[int, int, int], str]]
    numbers: list[str]

    def __bool__(self) -> bool:
        return bool(self.names or self.dates or self.numbers)


def find_mentions(sentence: str, when: datetime | None, known: Sequence[str]) -> Mentions:
    """Names (capitalised words not at a sentence start, runs of them joined; each with
    whether a place word comes before it: "in", "at", "from", "went to" ...), dates (day and
    month, month and year, years, relative dates resolved against the event time ``when``)
    and numbers (with the word that follows, "3 kids") of one sentence. ``known``: the
    speakers, lowercase; they and their short forms ("mel" for melanie) are not names."""
    names: list[tuple[str, bool]] = []
    dates: list[tuple[tuple[int, int, int], str]] = []
    numbers: list[str] = []
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
            names.append((name, prev in _PLACE_BEFORE or (prev == "to" and prev2 in _MOTION)))
        i = max(j, i + 1)
    return Mentions(names, dates, numbers)


def gather_facts(found: Iterable[Mentions]) -> Facts:
    """Facts of the sentences that mention ``found``: names by how many times they are
    mentioned (ties: first seen), a name mentioned after a place word at least half the
    times a place, dates in time order, numbers as first seen; no repeats."""
    names: Counter[str] = Counter()  # in first-seen order, kept by the stable sort below
    place_votes: Counter[str] = Counter()
    dates: list[tuple[tuple[int, int, int], str]] = []
    numbers: list[str] = []
    for m in found:
        for name, place in m.names:
            names[name] += 1
            if place:
                place_votes[name] += 1
        dates.extend(m.dates)
        numbers.extend(m.numbers)
    ordered = sorted(names, key=lambda n: -names[n])
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

