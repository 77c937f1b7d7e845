"""The time prior of a query that names a time (ADR 0061): a memory whose event
time or one of whose mentioned times falls in the query's window is lifted; outside it the
lift fades with the distance, so "July 2023" still favours 31 July over 3 August over March.
A soft prior, never a filter: callers who want one pass ``since`` / ``until``."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timedelta

from graphmem.rules.text import MONTHS
from graphmem.rules.time_expr import TimeSpan

#: the fade outside the window: the lift halves every ``max(FADE_MIN, window / FADE_SHARE)``
FADE_MIN = timedelta(days=1)
FADE_SHARE = 4


def proximity(window: TimeSpan, created_at: datetime,
              mentioned: Iterable[tuple[datetime, datetime]]) -> tuple[float, str]:
    """1.0 when the event time or a mentioned time is in ``window``, fading outside it; and
    the reason in words ("inside July 2023", "mentions a time inside July 2023", "3 days
    from July 2023", or "" when it has faded to nothing).

    Example:
        >>> from datetime import UTC
        >>> july = TimeSpan(datetime(2023, 7, 1, tzinfo=UTC), datetime(2023, 8, 1, tzinfo=UTC),
        ...                 "July 2023")
        >>> proximity(july, datetime(2023, 7, 9, tzinfo=UTC), ())
        (1.0, 'inside July 2023')
        >>> proximity(july, datetime(2023, 8, 8, 18, tzinfo=UTC), ())  # 7.75 days: half
        (0.5, '8 days from July 2023')
    """
    half = max(FADE_MIN, (window.end - window.start) / FADE_SHARE)
    best, why = _near(window, created_at, created_at + timedelta(microseconds=1), half, "")
    for start, end in mentioned:
        value, reason = _near(window, start, end, half, "mentions a time ")
        if value > best:
            best, why = value, reason
    return (best, why) if best >= 0.01 else (0.0, "")


def _near(window: TimeSpan, start: datetime, end: datetime, half: timedelta,
          prefix: str) -> tuple[float, str]:
    """How near the span [start, end) is to the window: 1 when they overlap."""
    if start < window.end and end > window.start:
        return 1.0, f"{prefix}inside {window.label()}"
    gap = window.start - end if end <= window.start else start - window.end
    value = math.pow(0.5, gap / half)
    days = max(1, round(gap / timedelta(days=1)))
    return value, f"{prefix}{days} day{'s' if days > 1 else ''} from {window.label()}"


def keyword_query(text: str, window: TimeSpan | None) -> str:
    """The words a query's keyword search uses: its own, and the window's month names and
    years, the date words every memory's keywords carry (``write.date_in_keywords``): "last
    week" then matches the memories of that week's month. (Without the time phrase's own
    words, LoCoMo's questions lost: "the week before" finds memories saying "last week";
    ADR 0061.)

    Example:
        >>> from datetime import UTC
        >>> week = TimeSpan(datetime(2023, 8, 21, tzinfo=UTC), datetime(2023, 8, 28, tzinfo=UTC),
        ...                 "last week")
        >>> keyword_query("what did we ship last week?", week)
        'what did we ship last week? august 2023'
    """
    if window is None:
        return text
    return f"{text} {' '.join(window_words(window))}".strip()


def window_words(window: TimeSpan) -> list[str]:
    """A window's date words: the months it touches and their years up to a month and a
    half, its years up to a year, none beyond."""
    last = window.end - timedelta(microseconds=1)
    if window.end - window.start <= timedelta(days=45):
        months = dict.fromkeys([(window.start.year, window.start.month), (last.year, last.month)])
        return [MONTHS[m - 1] for _, m in months] + sorted({str(y) for y, _ in months})
    if window.end - window.start <= timedelta(days=366):
        return sorted({str(window.start.year), str(last.year)})
    return []
