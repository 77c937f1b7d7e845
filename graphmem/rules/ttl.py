"""A memory's own TTL (ADR 0067): the seconds it lives, when it expires, and how a read shows
one whose time ran out before maintenance marked it (status ``expired``, ADR 0067).

Pure functions of the values and the time given: the caller passes its clock's ``now``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from graphmem.errors import ValidationError
from graphmem.models import Memory, Status

#: the longest TTL accepted: a century (a datetime past year 9999 cannot be stored)
MAX_TTL_SECONDS = 100 * 365 * 86_400.0
#: the reason maintenance records on the ``expiry`` transition of a memory whose TTL ran out
REASON = "ttl"


def ttl_seconds(value: Any) -> float:
    """A TTL as given by a caller: a positive, finite number of seconds, at most a century.

    Example:
        >>> ttl_seconds(90), ttl_seconds(0.5)
        (90.0, 0.5)
        >>> ttl_seconds(0)
        Traceback (most recent call last):
        ...
        graphmem.errors.ValidationError: ttl must be a positive number of seconds, got 0
    """
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
            or value <= 0:
        raise ValidationError(f"ttl must be a positive number of seconds, got {value!r}")
    if value > MAX_TTL_SECONDS:
        raise ValidationError(f"ttl must be at most {MAX_TTL_SECONDS:.0f} seconds (a century)")
    return float(value)


def expiry(now: datetime, ttl: Any) -> datetime | None:
    """When a memory given ``ttl`` at ``now`` expires (None: no TTL given).

    Example:
        >>> from datetime import UTC
        >>> expiry(datetime(2026, 1, 1, tzinfo=UTC), 3600).isoformat()
        '2026-01-01T01:00:00+00:00'
        >>> expiry(datetime(2026, 1, 1, tzinfo=UTC), None) is None
        True
    """
    return None if ttl is None else now + timedelta(seconds=ttl_seconds(ttl))


def seen(m: Memory, now: datetime) -> Memory:
    """``m`` as a read shows it at ``now``: active with its TTL run out is ``expired``
    (maintenance writes that status later, with its transition). Changes ``m`` in place:
    only ever on a record that is returned, never on one about to be written.

    Example:
        >>> m = Memory(id="m1", namespace="ops", content="x")
        >>> seen(m.copy(expires_at=m.created_at), m.created_at).status.value
        'expired'
        >>> seen(m, m.created_at).status.value
        'active'
    """
    if m.status is Status.ACTIVE and m.expires_at is not None and m.expires_at <= now:
        m.status = Status.EXPIRED
    return m


def seen_all(memories: Iterable[Memory], now: datetime) -> list[Memory]:
    """``seen`` of each, in order."""
    return [seen(m, now) for m in memories]
