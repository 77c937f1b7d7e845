"""The pure consolidation policy (SPEC §6.3): what happens to one cluster, and why, for each
member. Plain values in, a decision out; no store, no clock.

- **keep_all**: a member is highly important: every member stays active as it is.
- **compressed**: the cluster is coherent (mean pairwise cosine >= ``coherence``): a summary
  stands for it and its most central members stay active (one per five members, at most
  ``representatives``).
- **loose**: below the coherence threshold no summary could stand for the members (SPEC
  §6.3, ADR 0059): nothing is written and nothing archived; the report names the
  ``loose_top`` members by importance, then centrality, the ones a reader should look at.
- **digest**: what no topical cluster took but maintenance wants gone (past the glacial
  TTL), grouped by episode: a summary stands for them, none stays (``digest``).
Survivors never depend on id order: ties fall to centrality, then to the earlier memory.
Chit-chat ("Thanks!") never survives while an informative member could.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from graphmem.config import ConsolidationConfig


@dataclass(slots=True, frozen=True)
class Member:
    """What the policy needs of one cluster member.

    Example:
        >>> from datetime import datetime, UTC
        >>> Member("m1", 0.4, datetime(2023, 5, 1, tzinfo=UTC)).chit_chat
        False
    """

    id: str
    importance: float
    created_at: datetime
    chit_chat: bool = False
    due: str | None = None  # why maintenance wants it gone, if it does


@dataclass(slots=True)
class Decision:
    """What to do with one cluster, and why for each member.

    Example:
        >>> import numpy as np
        >>> from datetime import datetime, UTC
        >>> from graphmem.config import ConsolidationConfig
        >>> t = datetime(2023, 5, 1, tzinfo=UTC)
        >>> members = [Member("a", 0.9, t), Member("b", 0.3, t)]
        >>> d = decide(members, np.eye(2, dtype=np.float32), 0.0, ConsolidationConfig())
        >>> d.policy, d.keep
        ('keep_all', ['a', 'b'])
    """

    policy: str  # keep_all | compressed | loose | digest
    reason: str
    coherence: float
    keep: list[str] = field(default_factory=list)
    archive: list[str] = field(default_factory=list)
    #: member id -> (action, why): "kept" / "archived" with the rule and its numbers
    why: dict[str, tuple[str, str]] = field(default_factory=dict)
    centrality: dict[str, float] = field(default_factory=dict)


def centralities(vectors: np.ndarray) -> np.ndarray:
    """Cosine of each unit vector to the cluster's (normalised) centroid."""
    centroid = vectors.mean(axis=0)
    norm = float(np.linalg.norm(centroid))
    return np.asarray(vectors @ (centroid / norm if norm else centroid), dtype=np.float64)


def decide(members: Sequence[Member], vectors: np.ndarray, coherence: float,
           config: ConsolidationConfig) -> Decision:
    """The policy of one cluster (``vectors``: the members' unit embeddings, same order)."""
    cent = centralities(vectors)
    central = {m.id: round(float(c), 4) for m, c in zip(members, cent, strict=True)}
    top = max(m.importance for m in members)
    if top >= config.high_importance:
        why = ("kept", "keep_all: the cluster holds a highly important memory")
        return Decision("keep_all", f"a member has importance {top:.2f} >= "
                        f"{config.high_importance:g}: every member stays", coherence,
                        keep=[m.id for m in members], centrality=central,
                        why={m.id: why for m in members})
    order = range(len(members))
    if coherence < config.coherence:
        ranked = sorted(order, key=lambda i: (members[i].chit_chat, -members[i].importance,
                                              -cent[i], members[i].created_at))
        named = set(ranked[:config.loose_top])
        d = Decision("loose", f"loose (mean cosine {coherence:.2f} < {config.coherence:g}): no "
                     "summary stands for it; nothing is archived", coherence,
                     keep=[m.id for m in members], centrality=central)
        for i in ranked:
            lead = (f"top {config.loose_top} by importance ({members[i].importance:.2f}), "
                    f"then centrality ({cent[i]:.2f}); " if i in named else "")
            d.why[members[i].id] = ("kept", f"{lead}a loose cluster archives nothing")
        return d
    ranked = sorted(order, key=lambda i: (members[i].chit_chat, -cent[i],
                                          -members[i].importance, members[i].created_at))
    n = representatives(len(members), config.representatives)
    d = Decision("compressed", f"coherent (mean cosine {coherence:.2f} >= {config.coherence:g}):"
                 f" a summary stands for all; the {n} most central stay", coherence,
                 centrality=central)
    for rank, i in enumerate(ranked, start=1):
        m = members[i]
        text = f"representative: centrality {cent[i]:.2f}, rank {rank} of {len(members)}"
        if rank <= n:
            d.keep.append(m.id)
            d.why[m.id] = ("kept", text)
        else:
            d.archive.append(m.id)
            chat = "chit-chat; " if m.chit_chat else ""
            d.why[m.id] = ("archived", f"{chat}the summary stands for it ({text})")
    return d


def representatives(size: int, most: int) -> int:
    """How many of a coherent cluster's members stay active: one per five, 1..``most``.

    Example:
        >>> representatives(3, 2), representatives(9, 2), representatives(10, 2)
        (1, 1, 2)
    """
    return max(1, min(most, size // 5))


def digest(members: Sequence[Member], vectors: np.ndarray, coherence: float) -> Decision:
    """**digest**: memories of one episode that are due to leave (past the glacial TTL) and
    that no topical cluster took. A summary stands for them all; none stays active."""
    cent = centralities(vectors)
    return Decision("digest", f"{len(members)} memories of one episode past their retention, "
                    "in no topical cluster: a digest summary stands for them", coherence,
                    archive=[m.id for m in members],
                    why={m.id: ("archived", f"{m.due or 'due to leave'}; the digest stands for it")
                         for m in members},
                    centrality={m.id: round(float(c), 4)
                                for m, c in zip(members, cent, strict=True)})


def keep_uncovered(d: Decision, ids: Sequence[str], similarity: np.ndarray,
                   threshold: float, small_talk: Collection[str] = ()) -> None:
    """A summary stands only for the members it resembles: a member whose cosine to the
    summary is below ``threshold`` stays active instead of being archived - unless it is
    small talk, which no summary needs to resemble (ADR 0059)."""
    sims = dict(zip(ids, (float(x) for x in similarity), strict=True))
    for mid in list(d.archive):
        if sims[mid] < threshold and mid not in small_talk:
            d.archive.remove(mid)
            d.keep.append(mid)
            d.why[mid] = ("kept", f"the summary does not cover it (cosine {sims[mid]:.2f} < "
                                  f"{threshold:g})")
