"""Cypher adapter: the store port over Neo4j 5 or FalkorDB, every statement from ``cypher/``.

Stateless (no caches; one hint, the share of vector hits that survive the join, only sizes
a fetch), so several API replicas can share one database. Values go in as
parameters only; relationship types and index/attribute names come from allow-lists in the
statement files or this module, never from input. A ``WriteBatch`` is one statement, so it is
atomic on FalkorDB (which has no multi-statement transactions) as on Neo4j.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Collection, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol, runtime_checkable

import numpy as np

from graphmem import cypher
from graphmem.errors import StoreError
from graphmem.models import (
    Candidate,
    Memory,
    Relation,
    RelationType,
    Status,
    TermStats,
    Tier,
    Transition,
)
from graphmem.store import codec
from graphmem.store.base import (
    SORT_FIELDS,
    ActiveColumns,
    Beside,
    Counts,
    EdgeKey,
    ListSpec,
    VectorField,
    WriteBatch,
    active_columns,
    breadth_first,
)
from graphmem.store.graph.context import SCHEMA as CONTEXT_SCHEMA
from graphmem.store.graph.context import CypherContext
from graphmem.store.graph.rows import (
    JOIN_SEP,
    MAX_FETCH,
    first_fetch,
    memory_of,
    node_props,
    unpack,
    vector_hash,
    vector_hits,
)

_SHARED_SCHEMA = ["schema/" + n for n in (
    "transition_lookup", "vector_key_content", "vector_key_context", "vector_content",
    "vector_context", "fulltext", "key_lookup", "term_lookup", "keyword_stats_lookup",
    "event_window_key", "lease_key")] + CONTEXT_SCHEMA
SCHEMA = {
    "falkordb": ["schema/memory_lookup", "schema/memory_dedupe", "schema/session_key",
                 *_SHARED_SCHEMA],
    "neo4j": ["schema/memory_key", "schema/memory_dedupe", "schema/session_key",
              "schema/memory_lookup", "schema/memory_time", "schema/memory_hash",
              "schema/memory_created", *_SHARED_SCHEMA],
}
_VECTOR_TARGET = {  # allow-list: field -> (parameter name, index (Neo4j) / label (FalkorDB))
    "neo4j": {"content": ("index", "content_vector"), "context": ("index", "context_vector")},
    "falkordb": {"content": ("label", "ContentVector"), "context": ("label", "ContextVector")},
}
_MANY_CHUNK = 250  # vectors per search/vector_many statement


@runtime_checkable
class Connection(Protocol):
    """What the Cypher adapter needs of an engine's connection module: run a named
    statement with parameters, and create the schema.

    Example:
        >>> from graphmem.store.graph.neo4j_conn import Neo4jConnection
        >>> isinstance(Neo4jConnection("neo4j://localhost:7687"), Connection)
        True
    """

    dialect: str

    def open(self) -> None: ...
    def close(self) -> None: ...
    def run(self, statement: cypher.Statement, params: dict[str, Any] | None = None, *,
            write: bool = False) -> list[dict[str, Any]]: ...
    def ensure_schema(self, statements: list[cypher.Statement]) -> None: ...



class CypherStore(CypherContext):  # the session context: cypher_context
    """The store port over a ``Connection`` (``Neo4jConnection`` or ``FalkorDBConnection``).

    Example:
        >>> from graphmem.store.graph.falkordb_server import FalkorDBServer
        >>> from graphmem.store.graph.falkordb_conn import FalkorDBConnection
        >>> import tempfile
        >>> server = FalkorDBServer(tempfile.mkdtemp()); server.start()  # doctest: +SKIP
        >>> store = CypherStore(FalkorDBConnection(server.url)); store.open()  # doctest: +SKIP
        >>> store.namespaces()  # doctest: +SKIP
        []
    """

    #: RediSearch scores TF-IDF, Lucene BM25 per field: a pool of 200 left out memories
    #: graphmem's BM25 ranks high on FalkorDB, 1000 did not (ADR 0007)
    keyword_pool = 1000
    #: a retrieval mostly waits on the server's round trips (ADR 0051)
    cpu_bound = False

    def __init__(self, connection: Connection, *, dedupe: bool = True) -> None:
        self.conn = connection
        #: new active memories hold their content hash under a uniqueness constraint
        #: (``write.dedupe``; issue 45)
        self.dedupe = dedupe
        #: (namespace, field, tiers, statuses) -> share of the last full vector fetch that
        #: survived the join: sizes the next first fetch (a hint; never changes an answer)
        self._survival: dict[tuple[Any, ...], float] = {}
        self.dialect = connection.dialect

    def _st(self, name: str) -> cypher.Statement:
        return cypher.load(name, self.dialect)

    def _run(self, statement: str, write: bool = False, **params: Any) -> list[dict[str, Any]]:
        return self.conn.run(self._st(statement), params, write=write)

    # lifecycle ------------------------------------------------------------------------------
    def open(self) -> None:
        self.conn.open()
        self.conn.ensure_schema([self._st(n) for n in SCHEMA[self.dialect]])
        if self.dialect == "falkordb":
            self._run("schema/warm_attributes", True,
                      props=dict.fromkeys(_written_names(self._st("memory/write_batch").body), 0))

    def close(self) -> None:
        self.conn.close()

    def ping(self) -> None:
        self._run("schema/ping")

    # writes ---------------------------------------------------------------------------------
    def apply(self, batch: WriteBatch) -> None:
        if not batch:
            return
        batch.check()
        ns = batch.namespace
        first = 0
        if batch.memories:
            last = int(self._run("memory/reserve_seq", True, namespace=ns,
                                 count=len(batch.memories))[0]["last"])
            first = last - len(batch.memories) + 1
        params: dict[str, Any] = {
            "namespace": ns,
            "delete_edges": [{"source_id": s, "target_id": t, "type": ty.value}
                             for s, t, ty in batch.delete_edges],
            "delete_ids": list(batch.delete_memories),
            "sessions": [{"id": k, "version": n} for k, n in sorted(batch.sessions.items())],
            "memories": [{"id": m.id, "seq": first + i, "props": node_props(m),
                          "new": m.id in batch.new_ids,
                          "dedupe_key": (m.content_hash if m.id in batch.new_ids and
                                         self.dedupe and m.status is Status.ACTIVE
                                         else None),
                          "embedding": codec.floats(m.embedding),
                          "vec_hash": vector_hash(m.embedding),
                          "context_embedding": codec.floats(m.context_embedding),
                          "ctx_hash": vector_hash(m.context_embedding)}
                         for i, m in enumerate(batch.memories)],
        }
        params["patches"] = [{"id": i, "props": {k: codec.scalar(v) for k, v in f.items()}}
                             for i, f in batch.patches]
        written = time.time_ns()  # ties in ``at`` keep the order they were recorded in
        params["transitions"] = [codec.transition_props(t) | {"seq": written + n}
                                 for n, t in enumerate(batch.transitions)]
        for rtype in RelationType:
            params[rtype.value.lower()] = [codec.edge_props(e) for e in batch.edges
                                           if e.type is rtype]
        self.conn.run(self._st("memory/write_batch"), params, write=True)

    # reads ----------------------------------------------------------------------------------
    def get_memories(self, namespace: str, ids: Sequence[str], *,
                     embeddings: bool = False) -> dict[str, Memory]:
        if not ids:
            return {}
        name = "memory/get_with_vectors" if embeddings else "memory/get"
        rows = self._run(name, namespace=namespace, ids=list(dict.fromkeys(ids)))
        # a node without its kind is one a write on FalkorDB is still making or undoing (a
        # reader sees its clauses as they finish): not there yet
        return {r["id"]: memory_of(r) for r in rows if r.get("kind") is not None}

    def similarities(self, namespace: str, ids: Sequence[str], vector: np.ndarray
                     ) -> dict[str, tuple[float, float | None]]:
        if not ids:
            return {}
        rows = self._run("memory/similarities", namespace=namespace,
                         ids=list(dict.fromkeys(ids)), vector=[float(x) for x in vector])
        return {r["id"]: (float(r["content"]),
                          None if r["context"] is None else float(r["context"]))
                for r in rows if r["content"] is not None}

    def get_scored(self, namespace: str, ids: Sequence[str], vector: np.ndarray
                   ) -> tuple[dict[str, Candidate], dict[str, tuple[float, float | None]]]:
        if not ids:
            return {}, {}
        unique = list(dict.fromkeys(ids))
        rows = self._run("memory/get_scored", namespace=namespace, ids=unique,
                         vector=[float(x) for x in vector])
        if self.dialect == "falkordb":
            unpacked = unpack(rows, set(unique))
            if unpacked is None:  # a field that should not hold free text did: read apart
                return ({i: Candidate.of(m) for i, m in
                         self.get_memories(namespace, unique).items()},
                        self.similarities(namespace, unique, vector))
            rows = unpacked
        sims = {r["id"]: (float(r["sim_content"]),
                          None if r["sim_context"] is None else float(r["sim_context"]))
                for r in rows if r["sim_content"] is not None}
        return {r["id"]: Candidate.of(memory_of(r)) for r in rows}, sims

    def keyword_fields(self, namespace: str, ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        if not ids:
            return {}
        rows = self._run("memory/keyword_fields", namespace=namespace,
                         ids=list(dict.fromkeys(ids)))
        return {r["id"]: (r["keywords"] or "", r["context_keywords"] or "") for r in rows}

    def find_by_hash(self, namespace: str, hashes: Collection[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        if hashes:
            for r in self._run("memory/find_by_hash", namespace=namespace,
                               hashes=list(set(hashes))):
                out.setdefault(r["content_hash"], r["id"])
        return out

    def session_members(self, namespace: str, session_id: str) -> list[tuple[str, datetime]]:
        rows = self._run("memory/session_members", namespace=namespace, session_id=session_id)
        return [(r["id"], codec.dt(r["created_at"])) for r in rows]  # type: ignore[misc]

    def session_version(self, namespace: str, session_id: str) -> int:
        rows = self._run("memory/session_version", namespace=namespace, session_id=session_id)
        return int(rows[0]["version"]) if rows else 0

    def time_window(self, namespace: str, anchor: Memory, *, before: int, after: int,
                    session_only: bool,
                    statuses: Collection[Status] = (Status.ACTIVE, Status.ARCHIVED),
                    now: datetime | None = None,
                    ) -> tuple[list[Memory], list[Memory]]:
        rows = self._run("memory/anchor", namespace=namespace, id=anchor.id)
        if not rows:
            return [], []
        common = {"namespace": namespace, "created_at": rows[0]["created_at"],
                  "seq": rows[0]["seq"], "statuses": [s.value for s in statuses],
                  "now": codec.ts(now),
                  "session_id": anchor.session_id if session_only else None}
        earlier = ([memory_of(r) for r in self._run("memory/time_before", limit=before, **common)]
                   if before > 0 else [])
        later = ([memory_of(r) for r in self._run("memory/time_after", limit=after, **common)]
                 if after > 0 else [])
        return earlier, later

    def active_columns(self, namespace: str) -> ActiveColumns:
        rows = self._run("memory/active_columns", namespace=namespace)
        if self.dialect == "falkordb":  # one packed cell: numbers and tier names only
            return active_columns(json.loads(rows[0]["packed"]) if rows else [])
        return active_columns([(r["tier"], r["base_importance"], r["reinforced_at"],
                                r["created_at"], r["surprise"], r["stored_at"]) for r in rows])

    def list_page(self, namespace: str, spec: ListSpec) -> list[Memory]:
        if spec.sort not in SORT_FIELDS:
            raise StoreError(f"cannot sort by {spec.sort!r}")
        sign = -1 if spec.descending else 1

        def values(xs: Any) -> list[str] | None:
            return None if xs is None else [getattr(x, "value", x) for x in xs]

        rows = self._run("memory/list_page", namespace=namespace,
                         statuses=values(spec.statuses), tiers=values(spec.tiers),
                         types=values(spec.types), source=spec.source,
                         session_id=spec.session_id, topic=spec.topic,
                         since=codec.ts(spec.since), until=codec.ts(spec.until),
                         sort=spec.sort, sign=sign, now=codec.ts(spec.now),
                         after_key=None if spec.after is None else sign * spec.after[0],
                         after_id=None if spec.after is None else spec.after[1],
                         limit=max(0, int(spec.limit)))
        return [memory_of(r) for r in rows]

    def iter_memories(self, namespace: str, *, page: int = 1000, embeddings: bool = True,
                      statuses: Collection[Status] | None = None) -> Iterator[list[Memory]]:
        after = -1
        wanted = None if statuses is None else [s.value for s in statuses]
        while True:
            rows = self._run("memory/page", namespace=namespace, after_seq=after, page=page,
                             statuses=wanted)
            if not rows:
                return
            after = int(rows[-1]["seq"])
            page_ = [memory_of(r) for r in rows]
            if not embeddings:
                for m in page_:
                    m.embedding = m.context_embedding = None
            yield page_

    def transition_counts(self, namespace: str, since: datetime
                          ) -> list[tuple[str, Tier, Tier, int, int]]:
        rows = self._run("memory/transition_counts", namespace=namespace,
                         since=since.timestamp())
        return [(r["kind"], Tier(r["from_tier"]), Tier(r["to_tier"]), int(r["total"]),
                 int(r["recent"] or 0)) for r in rows]

    def transitions_of(self, namespace: str, memory_id: str) -> list[Transition]:
        rows = self._run("memory/transitions_of", namespace=namespace, memory_id=memory_id)
        return [codec.transition(r) for r in rows]

    def recent_transitions(self, namespace: str, limit: int,
                           since: datetime | None = None) -> list[Transition]:
        rows = self._run("memory/transitions_recent", namespace=namespace,
                         since=codec.ts(since) if since else -1e18, limit=max(0, int(limit)))
        return [codec.transition(r) for r in rows]

    def iter_edges(self, namespace: str, *, page: int = 5000) -> Iterator[list[Relation]]:
        skip = 0
        while True:
            rows = self._run("edge/page", namespace=namespace, skip=skip, page=page)
            if not rows:
                return
            skip += len(rows)
            yield [codec.edge(namespace, r) for r in rows]

    def namespaces(self) -> list[str]:
        return [r["namespace"] for r in self._run("memory/namespaces")]

    def counts(self, namespace: str) -> Counts:
        mem = self._run("memory/counts", namespace=namespace)
        edges = self._run("edge/counts", namespace=namespace)
        return Counts(
            memories={(Tier(r["tier"]), Status(r["status"]), r["kind"]): int(r["n"])
                      for r in mem},
            edges={RelationType(r["type"]): int(r["n"]) for r in edges},
        )

    # graph ----------------------------------------------------------------------------------
    def edges_of(self, namespace: str, ids: Collection[str],
                 types: Collection[RelationType] | None = None) -> list[Relation]:
        if not ids:
            return []
        params = {"namespace": namespace, "ids": list(ids),
                  "types": None if types is None else [t.value for t in types]}
        out: dict[EdgeKey, Relation] = {}
        for r in self.conn.run(self._st("edge/touching"), params):
            e = codec.edge(namespace, r)
            out[e.key] = e
        return list(out.values())

    def neighbourhood(self, namespace: str, seeds: Collection[str], depth: int, *,
                      types: Collection[RelationType] | None = None,
                      max_nodes: int = 1000) -> list[Relation]:
        if depth <= 0 or not seeds:
            return []
        if depth <= 2:  # one round trip: a bounded variable-length pattern
            limit = 20 * max_nodes
            rows = self._run("edge/neighbourhood", namespace=namespace, seeds=list(seeds),
                             depth=depth, limit=limit,
                             types=None if types is None else [t.value for t in types])
            if len(rows) < limit:
                by_node: dict[str, list[Relation]] = {}
                for r in rows:
                    e = codec.edge(namespace, r)
                    if types is None or e.type in types:  # engines differ on all()
                        by_node.setdefault(e.source_id, []).append(e)
                        by_node.setdefault(e.target_id, []).append(e)
                return breadth_first(seeds, depth, max_nodes, lambda frontier: [
                    e for n in frontier for e in by_node.get(n, ())])
        # the result was cut (a hub): hop by hop, asking the database each time
        return breadth_first(seeds, depth, max_nodes,
                             lambda frontier: self.edges_of(namespace, frontier, types))

    # search ---------------------------------------------------------------------------------
    def vector_topk(self, namespace: str, vector: np.ndarray, k: int, *,
                    field: VectorField = "content", tiers: Collection[Tier] | None = None,
                    statuses: Collection[Status] = (Status.ACTIVE,)) -> list[tuple[str, float]]:
        if k <= 0:
            return []
        key, target = _VECTOR_TARGET[self.dialect][field]
        params: dict[str, Any] = {
            "vector": [float(x) for x in vector], "namespace": namespace,
            "statuses": [s.value for s in statuses],
            "tiers": None if tiers is None else [t.value for t in tiers], key: target,
        }
        if self.dialect == "falkordb":
            params["sep"] = JOIN_SEP
        # the share of hits that survived the last search of this namespace and field
        # sizes the first fetch (a hint, not state: a short fetch only costs a wider retry)
        hint = (namespace, field, params["tiers"] and tuple(params["tiers"]),
                tuple(params["statuses"]))
        share = self._survival.get(hint, 0.25)
        fetch = min(max(math.ceil(k / max(share, 1 / 64) * 1.25), k + 8), MAX_FETCH)
        if self.dialect != "falkordb":  # Neo4j's HNSW searches as wide as it is asked:
            fetch = max(fetch, first_fetch(k))  # a smaller fetch would cost recall
        while True:
            rows = self._run("search/vector", fetch=fetch, **params)
            row: dict[str, Any] = rows[0] if rows else {"fetched": 0, "matches": []}
            matches, done, survived = vector_hits(row, k, fetch)
            fetched = int(row["fetched"] or 0)
            if fetched >= fetch:  # a full fetch measures the share; a short one is everything
                share = survived / fetched
                self._survival[hint] = share
            if done:
                return matches
            fetch = min(max(fetch * 4, math.ceil(k / max(share, 1 / 64) * 1.25)), MAX_FETCH)

    def vector_topk_fields(self, namespace: str, vector: np.ndarray, k: int, *,
                           tiers: Collection[Tier] | None = None,
                           statuses: Collection[Status] = (Status.ACTIVE,),
                           beside: Beside | None = None,
                           ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        return (self.vector_topk(namespace, vector, k, tiers=tiers, statuses=statuses),
                self.vector_topk(namespace, vector, k, field="context", tiers=tiers,
                                 statuses=statuses))

    def vector_topk_many(self, namespace: str, vectors: np.ndarray, k: int, *,
                         statuses: Collection[Status] = (Status.ACTIVE,),
                         min_score: float | None = None,  # the full top-k holds them all
                         ) -> list[list[tuple[str, float]]]:
        """One round trip per ``_MANY_CHUNK`` vectors; a vector whose hits were crowded out
        by other namespaces or statuses is asked again alone, with a wider fetch."""
        if k <= 0:
            return [[] for _ in vectors]
        key, target = _VECTOR_TARGET[self.dialect]["content"]
        fetch = first_fetch(k)
        out: list[list[tuple[str, float]]] = []
        for start in range(0, len(vectors), _MANY_CHUNK):
            chunk = vectors[start:start + _MANY_CHUNK]
            params: dict[str, Any] = {
                "fetch": fetch, "namespace": namespace, key: target,
                "vectors": [[float(x) for x in v] for v in chunk],
                "statuses": [s.value for s in statuses]}
            rows = self._run("search/vector_many", **params)
            by_pos = {int(r["i"]): r for r in rows}
            for i, v in enumerate(chunk):
                row = by_pos.get(i, {"fetched": 0, "matches": []})
                matches, done, _ = vector_hits(row, k, fetch)
                out.append(matches if done else
                           self.vector_topk(namespace, v, k, statuses=statuses))
        return out

    def keyword_topk(self, namespace: str, terms: Sequence[str], k: int, *,
                     tiers: Collection[Tier] | None = None,
                     statuses: Collection[Status] = (Status.ACTIVE,), newest: bool = False,
                     ) -> list[tuple[str, float]]:
        # ``newest`` is a hint: the server-side indexes rank by score at the same cost
        params = self._keyword_params(namespace, terms, k, tiers, statuses)
        if params is None:
            return []
        return [(r["id"], float(r["score"])) for r in self._run("search/keyword", **params)]

    def keyword_candidates(self, namespace: str, terms: Sequence[str], k: int, *,
                           tiers: Collection[Tier] | None = None,
                           statuses: Collection[Status] = (Status.ACTIVE,),
                           newest: bool = False) -> list[tuple[str, str, str]]:
        params = self._keyword_params(namespace, terms, k, tiers, statuses)
        if params is None:
            return []
        if self.dialect != "falkordb":
            return [(r["id"], r["keywords"], r["context_keywords"])
                    for r in self._run("search/keyword_candidates", **params)]
        row = self._run("search/keyword_candidates", sep=JOIN_SEP, **params)[0]
        n = int(row["n"] or 0)
        if n == 0:
            return []
        cols = [str(row[c]).split(JOIN_SEP) for c in ("ids", "keywords", "context_keywords")]
        if any(len(c) != n for c in cols):  # a field held the separator: ask row by row
            found = self.keyword_topk(namespace, terms, k, tiers=tiers, statuses=statuses)
            fields = self.keyword_fields(namespace, [i for i, _ in found])
            return [(i, *fields[i]) for i, _ in found if i in fields]
        return list(zip(*cols, strict=True))

    def _keyword_params(self, namespace: str, terms: Sequence[str], k: int,
                        tiers: Collection[Tier] | None, statuses: Collection[Status]
                        ) -> dict[str, Any] | None:
        words = [t for t in dict.fromkeys(terms) if t.isalnum()]
        if not words or k <= 0:
            return None
        # Lucene (Neo4j) reads AND / OR / NOT as operators: every term is quoted there
        query = ("|".join(words) if self.dialect == "falkordb"
                 else " ".join(f'"{w}"' for w in words))
        return {"query": query, "namespace": namespace, "k": k,
                "statuses": [s.value for s in statuses],
                "tiers": None if tiers is None else [t.value for t in tiers]}

    def keyword_stats(self, namespace: str, terms: Sequence[str]
                      ) -> tuple[TermStats, TermStats]:
        """Kept by write_batch (ADR 0016): a read of two small nodes per query, not a scan;
        a namespace written before that is counted once, on its first query."""
        terms = list(dict.fromkeys(terms))
        row: dict[str, Any] = self._run("memory/keyword_stats", namespace=namespace,
                                        terms=terms)[0]
        if not row.get("ready"):
            self._run("memory/keyword_stats_build", True, namespace=namespace)
            row = self._run("memory/keyword_stats", namespace=namespace, terms=terms)[0]
        dfs: dict[str, dict[str, int]] = {"kw": dict.fromkeys(terms, 0),
                                          "ctx": dict.fromkeys(terms, 0)}
        for field, term, df in row.get("df") or []:
            if field in dfs and term in dfs[field]:
                dfs[field][term] = max(0, int(df or 0))
        out = []
        for field in ("kw", "ctx"):
            docs = max(0, int(row.get(f"{field}_docs") or 0))
            avg = (int(row.get(f"{field}_total") or 0) / docs) if docs else 0.0
            out.append(TermStats(docs, avg, dfs[field]))
        return out[0], out[1]

    def compact(self, min_stale: int = 1) -> int:
        """Vector nodes are append-only (ADR 0003): replaced and deleted memories leave theirs
        behind. Vacuum them once ``min_stale`` wait (on FalkorDB that rebuilds the vector
        indexes, so not for every stale node)."""
        stale = sum(int(self._run(f"memory/stale_{f}")[0]["stale"] or 0)
                    for f in ("content", "context"))
        if stale < max(1, min_stale):
            return 0
        return self.vacuum()

    def vacuum(self) -> int:
        """Delete vector nodes no memory points at; on FalkorDB rebuild the vector indexes
        after deletes (ADR 0003). Returns the vector nodes deleted."""
        deleted = 0
        for field in ("content", "context"):
            n = int(self._run(f"memory/vacuum_{field}", True)[0]["deleted"])
            deleted += n
            if n and self.dialect == "falkordb":
                self.conn.ensure_schema([self._st(f"schema/drop_vector_{field}"),
                                         self._st(f"schema/vector_{field}")])
        return deleted

    # API keys (``KeyRecords``): shared by every API replica of this database ----------------
    def save_key(self, record: dict[str, Any]) -> None:
        self._run("key/save", True, id=record["id"], hash=record["hash"],
                  namespaces=list(record["namespaces"]), role=record["role"],
                  label=record.get("label"), created_at=float(record["created_at"]))

    def key_by_hash(self, key_hash: str) -> dict[str, Any] | None:
        rows = self._run("key/by_hash", hash=key_hash)
        return dict(rows[0]) if rows else None

    def list_keys(self) -> list[dict[str, Any]]:
        return [dict(r) for r in self._run("key/list")]

    def revoke_key(self, key_id: str, at: float) -> bool:
        return int(self._run("key/revoke", True, id=key_id, at=at)[0]["revoked"]) > 0

    # jobs -----------------------------------------------------------------------------------
    def save_run(self, run: dict[str, Any]) -> None:
        self._run("run/save", True, id=run["id"], namespace=run.get("namespace"),
                  status=run["status"], created_at=run["created_at"], data=json.dumps(run))

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        rows = self._run("run/get", id=run_id)
        return dict(json.loads(rows[0]["data"])) if rows else None

    def list_runs(self) -> list[dict[str, Any]]:
        return [json.loads(r["data"]) for r in self._run("run/list")]

    def run_counts(self) -> dict[str, int]:
        return {r["status"]: int(r["n"]) for r in self._run("run/counts")}

    def acquire_lease(self, name: str, owner: str, until: datetime, now: datetime) -> bool:
        rows = self._run("lease/acquire", True, name=name, owner=owner,
                         until=until.timestamp(), now=now.timestamp())
        return bool(rows) and rows[0]["owner"] == owner

    def lease_holder(self, name: str) -> tuple[str, datetime] | None:
        rows = self._run("lease/holder", name=name)
        if not rows:
            return None
        return str(rows[0]["owner"]), datetime.fromtimestamp(float(rows[0]["expires_at"]), UTC)

    def release_lease(self, name: str, owner: str) -> None:
        self._run("lease/release", True, name=name, owner=owner)

    # limits ---------------------------------------------------------------------------------
    def count_event(self, namespace: str, key: str, limit: int, window_seconds: float,
                    now: datetime) -> bool:
        rows = self._run("counter/count_event", True, namespace=namespace, key=key,
                         limit=limit, window=float(window_seconds), now=now.timestamp())
        return bool(rows) and bool(rows[0]["admitted"])


def _written_names(statement: str) -> list[str]:
    """Every property name a statement writes or reads (``x.name`` and ``{name: ...}``) and
    every property of a memory node (``schema/warm_attributes``)."""
    import re

    names = set(re.findall(r"\b[a-z]\w*\.([a-z_]\w*)\b", statement))
    names |= set(re.findall(r"[{,]\s*([a-z_]\w*)\s*:", statement))
    names |= set(node_props(Memory(id="x", namespace="x", content="x")))
    return sorted(names)
