"""Numbers every benchmark reports the same way: latency percentiles and resident memory."""

from __future__ import annotations

import statistics
import threading
import time


def pct(xs: list[float], p: float) -> float:
    """The p-th percentile, linearly interpolated.

    Example:
        >>> pct([1.0, 2.0, 3.0, 4.0], 50)
        2.5
    """
    xs = sorted(xs)
    k = (len(xs) - 1) * p / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def latency(xs: list[float]) -> dict[str, float]:
    """Seconds in, milliseconds out: p50 / p95 / p99 / mean.

    Example:
        >>> latency([0.001, 0.002, 0.003])["p50_ms"]
        2.0
    """
    ms = [x * 1000 for x in xs]
    return {"p50_ms": round(pct(ms, 50), 2), "p95_ms": round(pct(ms, 95), 2),
            "p99_ms": round(pct(ms, 99), 2), "mean_ms": round(statistics.fmean(ms), 2)}


def latency_or_none(xs: list[float]) -> dict[str, float | None]:
    """``latency``, or every figure None when nothing was timed (a run that answered nothing).

    Example:
        >>> latency_or_none([])["p95_ms"] is None
        True
    """
    if not xs:
        return {"p50_ms": None, "p95_ms": None, "p99_ms": None, "mean_ms": None}
    return dict(latency(xs))


def ratio(a: float, b: float) -> float | None:
    """``a / b`` to three places; None when ``b`` is zero (nothing answered).

    Example:
        >>> ratio(150.0, 58.0), ratio(1.0, 0.0)
        (2.586, None)
    """
    return round(a / b, 3) if b else None


def rss_mb(field: str = "VmRSS") -> float:
    """This process's resident memory now, in MB: all of it (VmRSS), or the part that is
    its own (RssAnon) or pages of mapped files (RssFile, the kernel's to reclaim)."""
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(f"{field}:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def run_together(threads: list[threading.Thread]) -> tuple[float, float]:
    """Start ``threads`` and wait for them all: (wall seconds, this process's CPU seconds)."""
    started, cpu = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started, time.process_time() - cpu
