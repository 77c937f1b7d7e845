"""Times named in a text, as windows of whole UTC days (ADR 0060).

A precompiled pre-check lets a text without a time word through in microseconds; a small
grammar finds the expressions and their period (a day, a week, part of a month, a season...)
and does the calendar arithmetic; ``dateparser`` reads the day dates the grammar found
("Sept. 14, 2023", "the 3rd of March", "07/04/2023"). Relative expressions are read against a
reference day: the query's ``now`` or the memory's ``written_at``. Conventions:

- weeks run Monday to Sunday; "last week" is the previous calendar week, "last weekend" its
  Saturday and Sunday; "N weeks ago" is the 7 days centred on the day N weeks back;
- "N months/years ago" is that calendar month/year; "a few days ago" and "the other day" are
  2-6 days back; "the past N days" runs from N days back to the end of the reference day;
- a date or month without a year is the latest one that starts on or before the reference day
  ("last July" the latest before the current month); "last Tuesday" is strictly before it,
  "on Tuesday" on or before it, "next Tuesday" strictly after it;
- seasons are northern meteorological (winter 2023 is December 2023 to February 2024);
  early/mid/late split a month into days 1-10, 11-20 and 21 on, a year into thirds;
- a year counts after a preposition ("in 2021", "of 2021", "since 2015", "Q3 2023") or as
  "2021's", never alone ("the 2021 model", "room 2021", "v2.3.2024" name no time); a month
  name alone counts after a preposition or modifier ("in May", "last March", "early June"),
  never as a verb or a name ("May I ask", "June said"), and lowercase "may" only with a date;
- vague words ("recently", "soon", "later", "now") and habits ("on Fridays") name no time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import Any

_DAY = timedelta(days=1)
_MON = (r"(?:january|february|march|april|may|june|july|august|september|october|november|"
        r"december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\b\.?")
_DAYN = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:19\d\d|20\d\d|2100)"
_WDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_NUM = (r"(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
        r"a\s+couple\s+of|a\s+couple|a\s+few|few|several)")
_UNIT = r"(?P<unit>day|week|month|year)s?"
_DATE = (rf"(?:{_WDAY},?\s+(?:the\s+)?)?(?:{_MON}\s+{_DAYN}(?:,?\s+{_YEAR})?"
         rf"|(?:the\s+)?{_DAYN}\s+(?:of\s+)?{_MON},?(?:\s+{_YEAR})?"
         rf"|{_YEAR}[-/]\d\d?[-/]\d\d?(?:T[\d:.]+Z?)?|\d\d?/\d\d?/{_YEAR}|\d\d?\.\d\d?\.{_YEAR})\b")
_PREP = (r"in|during|since|of|until|till|by|before|after|through|throughout|around|from|"
         r"between|over|for|and|to")

_SPOT = re.compile(r"\d|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|monday|tuesday|"
                   r"wednesday|thursday|friday|saturday|sunday|today|tonight|yesterday|tomorrow|"
                   r"night|morning|afternoon|evening|weeks?|weekend|months?|years?|days?|spring|"
                   r"summer|autumn|fall|winter)", re.ASCII)
_I = re.I | re.ASCII
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(k, re.compile(p, _I)) for k, p in [
    ("around", rf"\bthe\s+(?P<unit>day|week|weekend)\s+(?P<rel>before|after|of)\s+(?P<d>{_DATE})"),
    ("nth_week", rf"\b(?:the\s+)?(?P<nth>first|1st|second|2nd|third|3rd|fourth|4th|last|final)"
                 rf"\s+week\s+(?:of|in)\s+(?P<mon>{_MON})(?:,?\s+(?:of\s+)?(?P<yr>{_YEAR}))?"),
    ("part", r"\b(?P<part>early|mid|late|the\s+(?:beginning|start|middle|end)\s+of)[\s-]+"
             rf"(?:(?P<mon>{_MON})(?:,?\s+(?:of\s+)?(?P<yr>{_YEAR}))?|(?P<yonly>{_YEAR})\b)"),
    ("half", rf"\b(?:the\s+)?(?P<h>first|second|1st|2nd)\s+half\s+of\s+(?P<yr>{_YEAR})\b"),
    ("quarter", rf"\bq(?P<q>[1-4])(?:\s+of)?\s+(?P<yr>{_YEAR})\b"),
    ("season", r"\b(?:(?P<mod>last|this|next|in\s+the|in|during\s+the|during|over\s+the)\s+)?"
               rf"(?P<s>spring|summer|autumn|fall|winter)\b(?:\s+(?:of\s+)?(?P<yr>{_YEAR})\b)?"),
    ("day", rf"\b(?P<d>{_DATE})"),
    ("month_year", rf"\b(?P<mon>{_MON}),?\s+(?:of\s+)?(?P<yr>{_YEAR})\b"),
    ("month", rf"\b(?P<mod>{_PREP}|last|this|next)\s+(?:the\s+month\s+of\s+)?(?P<mon>{_MON})"
              rf"(?!,?\s+(?:of\s+)?\d)(?=\s*(?:(?:and|to|until|till|through|-)\s*{_MON}\s*(?P<yr>{_YEAR})\b)?)"),
    ("year_range", rf"\b(?:between|from)\s+(?P<a>{_YEAR})\s*(?:and|to|until|through|-)\s*"
                   rf"(?P<b>{_YEAR})\b"),
    ("year", rf"\b(?:(?P<mod>in|during|since|of|until|till|by|before|after|through|throughout|"
             rf"around|from|for|year|circa)\s+(?P<yr>{_YEAR})|(?P<yr2>{_YEAR})['\u2019]s)\b(?![.\-/]\d)"),
    ("rel_day", r"\b(?P<w>the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|today|"
                r"tonight|yesterday|tomorrow|last\s+night|this\s+(?:morning|afternoon|evening))\b"),
    ("past_n", rf"\b(?:in\s+|over\s+|during\s+)?the\s+(?:past|last|previous)\s+(?P<n>{_NUM})\s+"
               rf"{_UNIT}\b"),
    ("rolling", r"\b(?:in|over|during)\s+the\s+past\s+(?P<unit>week|month|year)\b"),
    ("before_last", r"\bthe\s+(?P<unit>week|weekend|month|year)\s+before\s+last\b"),
    ("rel_unit", r"\b(?P<mod>last|this|next|past|previous|coming)\s+(?P<unit>weekend|week|month|"
                 r"year)\b"),
    ("ago", rf"\b(?P<n>{_NUM})\s+{_UNIT}\s+(?P<dir>ago|earlier|later|from\s+now)\b"),
    ("in_n", r"\bin\s+(?P<n>\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten)\s+"
             rf"{_UNIT}\b"),
    ("other_day", r"\bthe\s+other\s+day\b"),
    ("weekday", rf"\b(?:(?P<mod>last|this|next|on|past|previous|coming)\s+)?(?P<wd>{_WDAY})"
                r"(?P<tail>['\u2019]s|\s+(?:morning|afternoon|evening|night))?\b(?!s)"
                rf"(?!,?\s+(?:the\s+)?\d|,?\s+{_MON})"),  # "Tuesday, 12 March" is a date
]]
_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
          "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
          "a couple of": 2, "a couple": 2}
_MONTHS = {m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                       "sep", "oct", "nov", "dec"), 1)}
_WEEKDAYS = {d: i for i, d in enumerate(("mon", "tue", "wed", "thu", "fri", "sat", "sun"))}
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}
_NTH = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3}
_Window = tuple[date, date]


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """A window of time named in a text: ``start`` inclusive, ``end`` exclusive, both UTC.

    Example:
        >>> now = datetime(2023, 8, 28, 15, tzinfo=UTC)
        >>> span = query_span("what did we decide last week?", now)
        >>> span.label(), span.text
        ('2023-08-21 to 2023-08-27', 'last week')
    """

    start: datetime
    end: datetime
    text: str

    def label(self) -> str:
        """A human label: a day, a month, a year, or a range of days."""
        s, last = self.start.date(), (self.end - _DAY).date()
        if s == last:
            return s.isoformat()
        if s.day == 1 and self.end.date() == _month(s.year, s.month + 1):
            return s.strftime("%B %Y")
        if (s.month, s.day) == (1, 1) and self.end.date() == date(s.year + 1, 1, 1):
            return str(s.year)
        return f"{s.isoformat()} to {last.isoformat()}"


def query_span(text: str, now: datetime) -> TimeSpan | None:
    """The time a question names, relative expressions read against ``now``.

    None when the text names no time; several expressions give the window that holds them all.

    Example:
        >>> now = datetime(2023, 8, 28, 15, tzinfo=UTC)
        >>> query_span("between May and July 2023", now).label()
        '2023-05-01 to 2023-07-31'
        >>> query_span("May I ask what we decided?", now) is None
        True
    """
    found = _scan(text, now)
    if not found:
        return None
    a, b = found[0][0], found[-1][1]
    return _span(min(w[0] for *_, w in found), max(w[1] for *_, w in found), text[a:b])


def mentioned_spans(text: str, written_at: datetime, limit: int = 4) -> list[TimeSpan]:
    """Times a memory's content mentions, relative ones read against when it was written.

    Ordered by position in the text, at most ``limit``, repeated windows once.

    Example:
        >>> at = datetime(2023, 8, 28, 9, tzinfo=UTC)
        >>> [s.label() for s in mentioned_spans("Yesterday I got back from Rio", at)]
        ['2023-08-27']
    """
    out: list[TimeSpan] = []
    for a, b, (s, e) in _scan(text, written_at):
        span = _span(s, e, text[a:b])
        if len(out) < limit and all((o.start, o.end) != (span.start, span.end) for o in out):
            out.append(span)
    return out


def mentioned_times(text: str, written_at: datetime, limit: int = 4
                    ) -> tuple[tuple[datetime, datetime], ...]:
    """The windows of :func:`mentioned_spans` as ``(start, end)`` pairs, as a memory keeps them.

    Example:
        >>> at = datetime(2024, 3, 4, 9, tzinfo=UTC)
        >>> [(s.date().isoformat(), e.date().isoformat())
        ...  for s, e in mentioned_times("Shipped last Friday, fixed on 2024-03-02", at)]
        [('2024-03-01', '2024-03-02'), ('2024-03-02', '2024-03-03')]
    """
    return tuple((s.start, s.end) for s in mentioned_spans(text, written_at, limit))


def _span(s: date, e: date, text: str) -> TimeSpan:
    return TimeSpan(datetime.combine(s, time(), UTC), datetime.combine(e, time(), UTC), text)


def _month(y: int, m: int) -> date:
    return date(y + (m - 1) // 12, (m - 1) % 12 + 1, 1)


def _scan(text: str, ref: datetime) -> list[tuple[int, int, _Window]]:
    """Non-overlapping (start, end, window) matches, the earliest and then the longest first."""
    if not text or not _SPOT.search(text.lower()):
        return []
    d = (ref.replace(tzinfo=UTC) if ref.tzinfo is None else ref.astimezone(UTC)).date()
    cands = sorted(((m.start(), -m.end(), i, m) for i, (_, p) in enumerate(_PATTERNS)
                    for m in p.finditer(text)), key=lambda c: c[:3])
    out: list[tuple[int, int, _Window]] = []
    for a, neg_b, i, m in cands:
        if out and a < out[-1][1]:
            continue
        try:
            w = _HANDLERS[_PATTERNS[i][0]](m.groupdict(), d)
        except (ValueError, OverflowError, KeyError):  # "February 30, 2023"
            w = None
        if w is not None and w[1] > w[0]:
            out.append((a, -neg_b, w))
    return out


def _num(s: str) -> int:
    s = " ".join(s.lower().split())
    return int(s) if s.isdigit() else _WORDS.get(s, 0)


def _mon(s: str) -> int:
    return _MONTHS[s.lower()[:3]]


def _month_window(y: int, m: int) -> _Window:
    return _month(y, m), _month(y, m + 1)


def _latest_month(m: int, d: date, before_this: bool = False) -> int:
    """The year of the latest month ``m`` starting on or before ``d`` (or before its month)."""
    return d.year if (m < d.month if before_this else m <= d.month) else d.year - 1


@lru_cache(maxsize=4096)
def _read_day(fragment: str, year: int) -> date | None:
    """A day date read by dateparser; without a year in it, a day of ``year``."""
    quick = _quick_day(fragment, year)
    if quick is not None:
        return quick
    parser = _parsers()[1 if re.fullmatch(r"\d\d?\.\d\d?\.\d{4}", fragment) else 0]
    data = parser.get_date_data(fragment)
    if data.date_obj is None or data.period != "day":
        return None
    return data.date_obj.date().replace(year=year) if not re.search(_YEAR, fragment) else \
        data.date_obj.date()


def _quick_day(fragment: str, year: int) -> date | None:
    """The common spellings without dateparser, slow on a new fragment (ADR 0060): "August 9,
    2022", "9th of Aug", "2022-08-09"; None for the others."""
    iso = re.fullmatch(r"(\d{4})-(\d\d)-(\d\d)", fragment)
    if iso:
        return date(int(iso[1]), int(iso[2]), int(iso[3]))
    words = [w for w in re.split(r"[\s,.]+", fragment.lower())
             if w and w not in ("the", "of") and w[:3] not in _WEEKDAYS]
    if len(words) in (2, 3) and all(re.fullmatch(r"\d+(?:st|nd|rd|th)?|[a-z]+", w) for w in words):
        names = [w for w in words[:2] if w[0].isalpha()]
        days = [w for w in words[:2] if w[0].isdigit()]
        if len(names) == 1 and len(days) == 1 and names[0][:3] in _MONTHS:
            y = int(words[2]) if len(words) == 3 and words[2].isdigit() else year
            return date(y, _MONTHS[names[0][:3]], int(re.sub(r"\D", "", days[0])))
    return None


@lru_cache(maxsize=1)
def _parsers() -> tuple[Any, Any]:
    from dateparser.date import DateDataParser  # slow to import (ADR 0060): on first date

    base = {"RELATIVE_BASE": datetime(2000, 1, 1), "PREFER_DATES_FROM": "past"}
    return (DateDataParser(languages=["en"], settings={**base, "DATE_ORDER": "MDY"}),
            DateDataParser(languages=["en"], settings={**base, "DATE_ORDER": "DMY"}))


def _day_of(fragment: str, d: date) -> date | None:
    """The day a date fragment names; without a year, the latest on or before ``d``."""
    frag = " ".join(fragment.split())
    if re.search(_YEAR, frag):
        return _read_day(frag, 0)
    for year in (d.year, d.year - 1):
        try:
            day = _read_day(frag, year)
        except ValueError:  # the 29th of February in another year
            continue
        if day is not None and day <= d:
            return day
    return None


def _h_day(g: dict[str, Any], d: date) -> _Window | None:
    frag = g["d"]
    if re.search(r"\bmay\b", frag) and not re.search(_YEAR, frag):
        return None  # "you may 2 times": lowercase "may" is a verb
    day = _day_of(frag, d)
    return (day, day + _DAY) if day else None


def _h_around(g: dict[str, Any], d: date) -> _Window | None:
    day = _day_of(g["d"], d)
    if day is None:
        return None
    unit, rel = g["unit"].lower(), g["rel"].lower()
    if unit == "day":
        return (day - _DAY, day) if rel == "before" else (day + _DAY, day + 2 * _DAY) \
            if rel == "after" else (day, day + _DAY)
    if unit == "week" and rel != "of":
        return (day - 7 * _DAY, day) if rel == "before" else (day + _DAY, day + 8 * _DAY)
    monday = day - day.weekday() * _DAY
    return (monday, monday + 7 * _DAY) if unit == "week" else \
        (monday + 5 * _DAY, monday + 7 * _DAY)


def _month_of(g: dict[str, Any], d: date) -> tuple[int, int]:
    m = _mon(g["mon"])
    return (int(g["yr"]) if g.get("yr") else _latest_month(m, d)), m


def _h_nth_week(g: dict[str, Any], d: date) -> _Window:
    y, m = _month_of(g, d)
    start, end = _month_window(y, m)
    nth = g["nth"].lower()
    if nth in ("last", "final"):
        return end - 7 * _DAY, end
    first = start + 7 * _NTH[nth] * _DAY
    return first, first + 7 * _DAY


def _h_part(g: dict[str, Any], d: date) -> _Window:
    part = g["part"].split()[-2] if g["part"].lower().startswith("the") else g["part"]
    i = {"early": 0, "beginning": 0, "start": 0, "mid": 1, "middle": 1}.get(part.lower(), 2)
    if g["yonly"]:
        y = int(g["yonly"])
        return _month(y, 1 + 4 * i), _month(y, 5 + 4 * i)
    y, m = _month_of(g, d)
    start, end = _month_window(y, m)
    return start + 10 * i * _DAY, (start + 10 * (i + 1) * _DAY) if i < 2 else end


def _h_season(g: dict[str, Any], d: date) -> _Window | None:
    first, mod = _SEASONS[g["s"].lower()], (g["mod"] or "").lower()
    if g["yr"]:
        y = int(g["yr"])
    elif not mod:
        return None  # "a winter coat", "the leaves fall"
    elif mod == "this":
        y = d.year - 1 if first == 12 and d.month < 3 else d.year
    elif mod == "next":
        y = d.year if _month(d.year, first) > d else d.year + 1
    else:  # the latest that started (in, during) or ended (last) by the reference day
        y, edge = d.year, 3 if mod == "last" else 0
        while _month(y, first + edge) > d:
            y -= 1
    return _month(y, first), _month(y, first + 3)


def _h_month(g: dict[str, Any], d: date) -> _Window | None:
    mod, m = g["mod"].lower(), _mon(g["mon"])
    if not g["yr"] and (g["mon"] == "may" or mod in ("and", "to")):
        return None  # "this may take a while"; "Alice and June"
    if g["yr"]:
        y = int(g["yr"])
    elif mod == "this":
        y = d.year
    elif mod == "next":
        y = d.year if m > d.month else d.year + 1
    else:
        y = _latest_month(m, d, before_this=mod == "last")
    start, end = _month_window(y, m)
    return (start, d + _DAY) if mod == "since" else (start, end)


def _h_year(g: dict[str, Any], d: date) -> _Window:
    y = int(g["yr"] or g["yr2"])
    if (g["mod"] or "").lower() == "since":
        return date(y, 1, 1), d + _DAY
    return date(y, 1, 1), date(y + 1, 1, 1)


def _rel(unit: str, d: date, k: int) -> _Window:
    """The calendar ``unit`` (day, week, weekend, month, year) ``k`` steps from the one of d."""
    monday = d - d.weekday() * _DAY
    if unit == "day":
        return d + k * _DAY, d + (k + 1) * _DAY
    if unit == "week":
        return monday + 7 * k * _DAY, monday + 7 * (k + 1) * _DAY
    if unit == "weekend":
        return monday + (7 * k + 5) * _DAY, monday + 7 * (k + 1) * _DAY
    if unit == "month":
        return _month_window(d.year, d.month + k)
    return date(d.year + k, 1, 1), date(d.year + k + 1, 1, 1)


def _back(unit: str, d: date, n: int) -> date:
    if unit in ("day", "week"):
        return d - n * (7 if unit == "week" else 1) * _DAY
    months = n * (12 if unit == "year" else 1)
    first = _month(d.year, d.month - months)
    return first.replace(day=min(d.day, (_month(first.year, first.month + 1) - _DAY).day))


def _h_ago(g: dict[str, Any], d: date) -> _Window | None:
    n, unit = _num(g["n"]), g["unit"].lower()
    vague = g["n"].lower().strip() in ("a few", "few", "several")
    sign = -1 if g.get("dir", "later").lower() in ("ago", "earlier") else 1
    if vague:
        return ((d - 6 * _DAY, d - _DAY) if unit == "day" else
                (d - 35 * _DAY, d - 13 * _DAY) if unit == "week" else None) if sign < 0 else None
    if unit == "week":
        centre = d + sign * 7 * n * _DAY
        return centre - 3 * _DAY, centre + 4 * _DAY
    return _rel(unit, d, sign * n) if n else None


_HANDLERS: dict[str, Any] = {
    "around": _h_around, "nth_week": _h_nth_week, "part": _h_part, "season": _h_season,
    "day": _h_day, "month": _h_month, "year": _h_year, "ago": _h_ago,
    "month_year": lambda g, d: _month_window(int(g["yr"]), _mon(g["mon"])),
    "half": lambda g, d: (_month(int(g["yr"]), 1 + 6 * (g["h"][0] in "s2")),
                          _month(int(g["yr"]), 7 + 6 * (g["h"][0] in "s2"))),
    "quarter": lambda g, d: (_month(int(g["yr"]), 3 * int(g["q"]) - 2),
                             _month(int(g["yr"]), 3 * int(g["q"]) + 1)),
    "year_range": lambda g, d: (date(int(g["a"]), 1, 1), date(int(g["b"]) + 1, 1, 1)),
    "rel_day": lambda g, d: _rel("day", d, {"the day before yesterday": -2, "yesterday": -1,
                                            "last night": -1, "tomorrow": 1,
                                            "the day after tomorrow": 2}.get(
        " ".join(g["w"].lower().split()), 0)),
    "past_n": lambda g, d: (_back(g["unit"].lower(), d, _num(g["n"])), d + _DAY)
    if _num(g["n"]) else None,
    "rolling": lambda g, d: (_back(g["unit"].lower(), d, 1), d + _DAY),
    "before_last": lambda g, d: _rel(g["unit"].lower(), d, -2),
    "rel_unit": lambda g, d: (_back(g["unit"].lower(), d, 1), d + _DAY)
    if g["mod"].lower() == "past" and g["unit"].lower() != "weekend" else _rel(
        g["unit"].lower(), d, {"last": -1, "previous": -1, "past": -1, "this": 0}.get(
            g["mod"].lower(), 1)),
    "in_n": _h_ago,  # no "dir" group: later
    "other_day": lambda g, d: (d - 6 * _DAY, d - _DAY),
    "weekday": lambda g, d: _h_weekday(g, d),
}


def _h_weekday(g: dict[str, Any], d: date) -> _Window | None:
    mod, w = (g["mod"] or "").lower(), _WEEKDAYS[g["wd"].lower()[:3]]
    if not mod and not g["tail"]:
        return None  # "the Sunday font"; "on Fridays" never matches
    if mod == "this":
        day = d + (w - d.weekday()) * _DAY
    elif mod in ("next", "coming"):
        day = d + ((w - d.weekday() - 1) % 7 + 1) * _DAY
    else:  # last/past/previous: strictly before; on, "Friday's": on or before
        strict = mod in ("last", "past", "previous")
        day = d - ((d.weekday() - w - strict) % 7 + strict) * _DAY
    return day, day + _DAY
