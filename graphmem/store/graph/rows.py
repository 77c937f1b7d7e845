"""What the Cypher adapter writes into nodes and reads out of statement rows: a memory's node
properties, its vectors' hashes, FalkorDB's packed cells (ADR 0017) and the hits of a vector
search, with the fetch sizes that decide whether a search must be widened."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from graphmem.errors import StoreError
from graphmem.models import Memory
from graphmem.store import codec

#: the most vector hits one search fetches before the join with the namespace's memories
MAX_FETCH = 20_000
#: joins the cells FalkorDB packs (ADR 0017): never in a validated id or analysed keywords
JOIN_SEP = "\n"


def first_fetch(k: int) -> int:
    """The first fetch of a search for ``k`` when no hint sizes it."""
    return max(4 * k, 64)


def vector_hits(row: dict[str, Any], k: int, fetch: int
                ) -> tuple[list[tuple[str, float]], bool, int]:
    """The best similarity per memory of one search/vector row, whether it is final (enough
    hits, or the index gave fewer than asked (exhausted), or the fetch is at its cap;
    otherwise other namespaces / statuses crowded the fetch out and it must be widened), and
    how many hits survived the join.

    Example:
        >>> vector_hits({"matches": [{"id": "a", "similarity": 0.9}], "fetched": 1}, 5, 64)
        ([('a', 0.9)], True, 1)
    """
    hits = vector_matches(row)
    best: dict[str, float] = {}
    for id_, similarity in hits:
        best[id_] = max(similarity, best.get(id_, -2.0))
    matches = sorted(best.items(), key=lambda p: -p[1])
    done = len(matches) >= k or int(row["fetched"]) < fetch or fetch >= MAX_FETCH
    return matches[:k], done, len(hits)


def vector_matches(row: dict[str, Any]) -> list[tuple[str, float]]:
    """(id, similarity) of a search/vector row: a list of maps (Neo4j, vector_many) or
    FalkorDB's two cells, ids joined by ``JOIN_SEP`` and a JSON list (ADR 0017)."""
    if "ids" not in row:
        return [(m["id"], float(m["similarity"])) for m in row.get("matches") or []]
    n = int(row["n"] or 0)
    if n == 0:
        return []
    ids, sims = str(row["ids"]).split(JOIN_SEP), json.loads(row["similarities"])
    if len(ids) != n or len(sims) != n:
        raise StoreError("search/vector: a stored id holds a newline (ids are validated)")
    return list(zip(ids, map(float, sims), strict=True))


def unpack(rows: list[dict[str, Any]], asked: set[str]) -> list[dict[str, Any]] | None:
    """FalkorDB's memory/get_scored rows with their JSON cell spread out; None when a cell is
    not what the statement packs (an id not asked for, or JSON the server left unescaped)."""
    out = []
    for r in rows:
        try:
            packed = json.loads(r.pop("packed"), strict=False)
        except (TypeError, ValueError):
            return None
        if not isinstance(packed, dict) or packed.get("id") not in asked:
            return None
        out.append(packed | r)
    return out


def vector_hash(vector: np.ndarray | None) -> str | None:
    """What ties a memory to its current vector node: a vector search joins only the hits
    whose hash the memory still holds, so a re-embedded memory's stale node drops out
    (None: no vector)."""
    if vector is None:
        return None
    data = np.asarray(vector, dtype=np.float32).tobytes()
    return hashlib.blake2b(data, digest_size=12).hexdigest()


def node_props(m: Memory) -> dict[str, Any]:
    """The node's properties: the flat record (``codec``) and the keyword statistics BM25
    reads (distinct terms and the field lengths)."""
    kw, ctx = m.keywords.split(), m.context_keywords.split()
    props = codec.flatten(m)
    del props["id"], props["namespace"]  # the node's key, matched apart
    return props | {"kw_terms": sorted(set(kw)), "kw_len": len(kw),
                    "ctx_terms": sorted(set(ctx)), "ctx_len": len(ctx)}


def memory_of(row: dict[str, Any]) -> Memory:
    """A row of a memory statement as a ``Memory`` (with its vectors when the row has them)."""
    return codec.unflatten(row, embedding=codec.vector(row.get("embedding")),
                           context_embedding=codec.vector(row.get("context_embedding")))
