"""Computed importance (seed 004, ADR 0014): a weighted blend of five factors in [0, 1].

- recency: 0.5 ** (hours since the memory was stored or last accessed / ``recency_half_life``)
- access: log(1 + accesses) / log(1 + ``access_saturation``), at most 1
- causal: CAUSES out-edges / ``causal_saturation``, at most 1 (what it caused or explains)
- surprise: the surprise score feedback keeps (how much more useful it was than predicted)
- marks: 1 when pinned (the explicit tag), else 0

The maintenance job persists the blend as ``importance`` when ``importance.computed`` is on.
Pure functions: no store, no clock of their own.
"""

from __future__ import annotations

import math
from datetime import datetime

from graphmem.config import ImportanceConfig
from graphmem.models import Memory
from graphmem.rules.tiers import age_hours, decay_factor


def factors(m: Memory, now: datetime, cfg: ImportanceConfig, causes_out: int) -> dict[str, float]:
    """Each factor of ``m``'s computed importance.

    Example:
        >>> from graphmem.config import ImportanceConfig
        >>> m = Memory(id="m1", namespace="ops", content="x", access_count=20, pinned=True)
        >>> f = factors(m, m.last_accessed_at, ImportanceConfig(), causes_out=10)
        >>> f["recency"], f["access"], f["causal"], f["surprise"], f["marks"]
        (1.0, 1.0, 1.0, 0.0, 1.0)
    """
    last = max(m.stored_at, m.last_accessed_at)
    return {
        "recency": decay_factor(age_hours(last, now), cfg.recency_half_life_hours),
        "access": min(1.0, math.log1p(max(0, m.access_count))
                      / math.log1p(cfg.access_saturation)),
        "causal": min(1.0, max(0, causes_out) / cfg.causal_saturation),
        "surprise": min(1.0, max(0.0, m.surprise_score)),
        "marks": 1.0 if m.pinned else 0.0,
    }


def computed_importance(m: Memory, now: datetime, cfg: ImportanceConfig,
                        causes_out: int) -> float:
    """The weighted mean of the factors (weights normalised to sum 1), in [0, 1].

    Example:
        >>> from graphmem.config import ImportanceConfig
        >>> m = Memory(id="m1", namespace="ops", content="x")
        >>> computed_importance(m, m.last_accessed_at, ImportanceConfig(), 0)
        0.3
    """
    f = factors(m, now, cfg, causes_out)
    total = sum(cfg.weights.values())
    value = sum(w * f[name] for name, w in cfg.weights.items()) / total
    return round(min(1.0, max(0.0, value)), 6)
