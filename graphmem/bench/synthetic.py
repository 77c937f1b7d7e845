"""Synthetic agent memories with realistic length, sessions, timestamps and relations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np

SUBJECTS = ["the billing service", "the checkout API", "Priya", "the on-call engineer",
            "the nightly import job", "our Postgres primary", "the search cluster",
            "the mobile app", "Marco", "the payment provider", "the cache layer",
            "the data team", "the CI pipeline", "the staging environment", "Alice"]
VERBS = ["failed after", "recovered from", "was slowed down by", "asked about",
         "reported", "was migrated during", "timed out because of", "was fixed after",
         "started logging", "was rolled back after", "doubled its latency during",
         "complained about", "scheduled", "documented", "deprecated"]
OBJECTS = ["a schema migration on the invoices table", "a burst of retries",
           "an expired TLS certificate", "the Friday deploy", "a memory leak in the worker",
           "a misconfigured feature flag", "a slow query on user sessions",
           "a full disk on the log volume", "the quarterly load test", "a DNS outage",
           "a new rate limit", "the holiday traffic peak", "a flaky integration test",
           "the vendor's API change", "a missing index on orders"]
TAILS = ["and we wrote a follow-up ticket", "which took about {n} minutes to notice",
         "so the runbook now has a section on it", "and {n} customers were affected",
         "and the fix shipped in release 4.{n}", "according to the incident channel",
         "which nobody expected", "before the weekly sync", "and it happened again on day {n}",
         ""]


def texts(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        s, v, o, t = (rng.integers(len(x)) for x in (SUBJECTS, VERBS, OBJECTS, TAILS))
        tail = TAILS[t].format(n=int(rng.integers(2, 90)))
        out.append(f"{SUBJECTS[s].capitalize()} {VERBS[v]} {OBJECTS[o]} {tail}".strip()
                   + f" (note {i}).")
    return out


def records(n: int, *, session_len: int = 20, seed: int = 0,
            start: datetime | None = None) -> list[dict[str, object]]:
    """Memory inputs: sessions of ``session_len`` turns, one session every ~3 hours."""
    start = start or datetime(2026, 1, 1, tzinfo=UTC)
    rng = np.random.default_rng(seed + 1)
    out: list[dict[str, object]] = []
    for i, text in enumerate(texts(n, seed)):
        session = i // session_len
        at = start + timedelta(hours=3 * session, minutes=i % session_len)
        out.append({"content": text, "session_id": f"s{session}", "created_at": at,
                    "importance": float(np.round(rng.uniform(0.05, 0.95), 2)),
                    "source": "agent" if i % 2 else "user"})
    return out


def _question(subject: str, obj: str) -> str:
    return f"why was {subject} affected by {obj}?"


def queries(n: int, seed: int = 99) -> list[str]:
    rng = np.random.default_rng(seed)
    return [_question(SUBJECTS[rng.integers(len(SUBJECTS))], OBJECTS[rng.integers(len(OBJECTS))])
            for _ in range(n)]


def other_queries(asked: list[str]) -> list[str]:
    """Every question of ``queries``' kind that ``asked`` does not hold, in a fixed order.

    Example:
        >>> len(other_queries(queries(200))) + len(set(queries(200))) == 15 * 15
        True
    """
    seen = set(asked)
    return [q for q in (_question(s, o) for s in SUBJECTS for o in OBJECTS) if q not in seen]
