"""``GraphMemStore``: graphmem as LangGraph's long-term memory store (a ``BaseStore``), over
a ``GraphMemory`` (the embedded store, Neo4j, FalkorDB) or a server (``GraphMemClient``;
``AsyncGraphMemClient`` for the async methods). ``pip install "graphmem[langgraph]"``.

Each item is one memory: in the graphmem namespace its namespace tuple encodes to, with the
id its key maps to (``langgraph_codec``), the value kept whole in the metadata, and the texts of
the fields ``index`` names (LangGraph's default: the whole value as JSON) as the content that is
embedded and searched. A put of an existing key updates that memory, a delete deletes it.
``ttl`` (minutes, as LangGraph counts) is the memory's own TTL, refreshed on reads unless
``refresh_ttl=False``. Items are pinned unless ``pin=False``: graphmem's decay, expiry and
consolidation never take an item LangGraph still expects (ADR 0064).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    get_text_at_path,
    validate_op_namespace,
)

from graphmem.errors import (
    ConfigError,
    ConflictError,
    InvalidNamespaceError,
    NotFoundError,
    ValidationError,
)
from graphmem.integrations import langgraph_codec as codec
from graphmem.integrations._log import Plan, arun, call, is_async, run
from graphmem.models import Memory, Status

Steps = Plan[Any]
#: graphmem's bound on one retrieval's results
MAX_RANKED = 100
#: a listing's page (the REST bound)
PAGE = 1000


# -- the graphmem calls the op logic makes, as plans (``_log.run`` / ``arun`` drive them on a
# GraphMemory, a GraphMemClient or an AsyncGraphMemClient) ------------------------------------
def _get(ns: str, id: str) -> Plan[Memory | None]:
    try:
        return (yield from call("get", id, namespace=ns))
    except NotFoundError:
        return None


def _delete(ns: str, id: str) -> Plan[None]:
    with contextlib.suppress(NotFoundError):
        yield from call("delete", id, namespace=ns)


def _ttl(ttl: float | None) -> dict[str, float]:
    return {} if ttl is None else {"ttl": ttl}


def _listing(ns: str, limit: int | None = None) -> Plan[list[Memory]]:
    out: list[Memory] = []
    cursor = None
    while True:
        page = yield from call("list_page", namespace=ns, sort="created_at", order="asc",
                               limit=min(PAGE, limit or PAGE), cursor=cursor)
        out += page.items
        if page.next_cursor is None or (limit and len(out) >= limit):
            return out
        cursor = page.next_cursor


@dataclass
class _Found:
    """A live item read back: its LangGraph view and the memory it is kept in."""

    item: Item
    memory: Memory
    name: str

    @property
    def ttl(self) -> float | None:
        ttl = self.memory.metadata.get(codec.TTL)
        return None if ttl is None else float(ttl)


class GraphMemStore(BaseStore):
    """LangGraph's ``BaseStore`` on graphmem (see the module's doc). ``mem``: a
    ``GraphMemory``, ``GraphMemClient`` or ``AsyncGraphMemClient`` (then only the async
    methods). ``index``: LangGraph's ``IndexConfig``; only ``fields`` is read (graphmem embeds
    with its own model). ``ttl``: LangGraph's ``TTLConfig`` (``default_ttl``,
    ``refresh_on_read``). ``prefix``: the first part of every graphmem namespace it writes.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> with GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder()) as mem:
        ...     store = GraphMemStore(mem, index={"fields": ["text"]})
        ...     store.put(("users", "u1"), "a", {"text": "likes green tea", "kind": "pref"})
        ...     item = store.get(("users", "u1"), "a")
        ...     item.value, store.list_namespaces(), mem.namespaces()
        ({'text': 'likes green tea', 'kind': 'pref'}, [('users', 'u1')], ['lg:users:u1'])
    """

    supports_ttl = True

    def __init__(self, mem: Any, *, index: IndexConfig | None = None,
                 ttl: TTLConfig | None = None, prefix: str = codec.DEFAULT_PREFIX,
                 pin: bool = True) -> None:
        self._mem, self._async_only = mem, is_async(mem)
        self.index_config = index
        self.ttl_config = ttl
        self.prefix, self.pin = codec.check_prefix(prefix), pin
        self._fields = (index or {}).get("fields") or ["$"]

    def graphmem_namespace(self, namespace: tuple[str, ...]) -> str:
        """The graphmem namespace a LangGraph namespace is kept in (to scope an API key)."""
        return codec.encode_namespace(tuple(namespace), self.prefix)

    # -- the two drivers of the op logic ----------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        if self._async_only:
            raise ConfigError("GraphMemStore over an AsyncGraphMemClient: use the async "
                              "methods (aget, aput, asearch, ...)")
        return run(self._run(list(ops)), self._mem)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # the facade and the sync client block: arun drives them in a worker thread
        return await arun(self._run(list(ops)), self._mem)

    # -- the op logic, as steps: reads see the state before the batch's puts (as in
    # LangGraph's InMemoryStore), and the last put of a key wins ---------------------------
    def _run(self, ops: list[Op]) -> Steps:
        results: list[Result] = [None] * len(ops)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for i, op in enumerate(ops):
            validate_op_namespace(op)
            if isinstance(op, GetOp):
                results[i] = yield from self._get(op)
            elif isinstance(op, SearchOp):
                results[i] = yield from self._search(op)
            elif isinstance(op, ListNamespacesOp):
                results[i] = yield from self._list_namespaces(op)
            elif isinstance(op, PutOp):
                puts[(tuple(op.namespace), op.key)] = op
            else:
                raise ValidationError(f"unknown LangGraph operation {type(op).__name__}")
        for op in puts.values():
            yield from self._put(op)
        return results

    @staticmethod
    def _found(m: Memory | None, name: str) -> _Found | None:
        """The item kept in ``m`` when it is live: active (a read shows a memory past its TTL
        expired) and ours."""
        if m is None or m.status != Status.ACTIVE or not codec.is_item(m.metadata):
            return None
        labels, key, value = codec.parse_item(m.metadata)
        return _Found(Item(value=value, key=key, namespace=labels, created_at=m.created_at,
                           updated_at=m.updated_at), m, name)

    def _get(self, op: GetOp) -> Steps:
        name = self.graphmem_namespace(op.namespace)
        found = self._found((yield from _get(name, codec.key_id(op.key))), name)
        if found is None or (found.item.namespace, found.item.key) != (tuple(op.namespace),
                                                                        op.key):
            return None
        if op.refresh_ttl and found.ttl is not None:
            yield from call("update", found.memory.id, namespace=name, ttl=found.ttl * 60)
        return found.item

    def _live_in(self, prefix: tuple[str, ...], limit: int | None = None) -> Steps:
        """Every live item under ``prefix``, by graphmem namespace, oldest first."""
        n = len(prefix)
        out: dict[str, list[_Found]] = {}
        for name in (yield from call("namespaces")):
            labels = codec.decode_namespace(name, self.prefix)
            if not codec.owns(name, self.prefix) or (labels is not None
                                                     and labels[:n] != prefix):
                continue
            items = [f for m in (yield from _listing(name, limit))
                     if (f := self._found(m, name)) is not None
                     and f.item.namespace[:n] == prefix]
            if items:
                out[name] = items
        return out

    def _search(self, op: SearchOp) -> Steps:
        by_name = yield from self._live_in(tuple(op.namespace_prefix))
        groups = sorted(by_name.values(), key=lambda g: (g[0].memory.created_at,
                                                         g[0].item.namespace))
        found = [f for g in groups for f in sorted(g, key=lambda f: (f.memory.created_at,
                                                                      f.item.key))
                 if codec.matches(f.item.value, op.filter)]
        scores: dict[tuple[str, str], float] = {}
        if op.query:
            for name in {f.name for f in found}:
                mine = {f.memory.id for f in found if f.name == name
                        and f.memory.metadata.get(codec.INDEXED)}
                if mine:  # unindexed items are never ranked: they fill the page after
                    hits = yield from call("retrieve", op.query, namespace=name,
                                           limit=min(MAX_RANKED, len(mine)))
                    scores.update({(name, h.memory.id): h.score for h in hits
                                   if h.memory.id in mine})
            found.sort(key=lambda f: -scores.get((f.name, f.memory.id), float("-inf")))
        page = found[op.offset: op.offset + op.limit]
        if op.refresh_ttl:
            for f in page:
                if f.ttl is not None:
                    yield from call("update", f.memory.id, namespace=f.name, ttl=f.ttl * 60)
        return [SearchItem(f.item.namespace, f.item.key, f.item.value, f.item.created_at,
                           f.item.updated_at, scores.get((f.name, f.memory.id)))
                for f in page]

    def _list_namespaces(self, op: ListNamespacesOp) -> Steps:
        found = yield from self._live_in((), limit=1)
        spaces = {g[0].item.namespace for g in found.values()}
        spaces = {ns for ns in spaces if all(_matches(c, ns) for c in op.match_conditions or ())}
        if op.max_depth is not None:
            spaces = {ns[: op.max_depth] for ns in spaces}
        return sorted(spaces)[op.offset: op.offset + op.limit]

    def _put(self, op: PutOp) -> Steps:
        labels, name, id = tuple(op.namespace), self.graphmem_namespace(op.namespace), \
            codec.key_id(op.key)
        if not labels:
            raise InvalidNamespaceError("a LangGraph namespace cannot be empty")
        if op.value is None:
            yield from _delete(name, id)
            return None
        metadata = codec.item_metadata(labels, op.key, op.value, op.ttl)  # checks it
        texts = self._texts(op)
        metadata[codec.INDEXED] = bool(texts)
        content = codec.content(texts, id)
        ttl = None if op.ttl is None else op.ttl * 60
        was = yield from _get(name, id)
        live = self._found(was, name)
        if live is not None and not (live.ttl is not None and ttl is None):
            yield from call("update", id, namespace=name, content=content, metadata=metadata,
                            **_ttl(ttl))
            return None
        store = {"namespace": name, "id": id, "metadata": metadata, "pinned": self.pin,
                 "source": "langgraph", **_ttl(ttl)}
        if was is not None:  # expired, or losing its TTL: written afresh
            yield from _delete(name, id)
        try:
            yield from call("store", content, **store)
        except ConflictError:  # a server that hides an expired memory still holds its id
            yield from _delete(name, id)
            yield from call("store", content, **store)
        return None

    def _texts(self, op: PutOp) -> list[str]:
        """The texts of the fields to embed (``op.index``, else the store's ``index``)."""
        if op.index is False:
            return []
        fields = self._fields if op.index is None else op.index
        return [t for path in fields for t in get_text_at_path(op.value, path)]


def _matches(condition: MatchCondition, ns: tuple[str, ...]) -> bool:
    """LangGraph's namespace condition: a prefix or suffix, ``*`` matching any label."""
    path = tuple(condition.path)
    if len(ns) < len(path):
        return False
    part = ns[: len(path)] if condition.match_type == "prefix" else ns[len(ns) - len(path):]
    if condition.match_type not in ("prefix", "suffix"):
        raise ValidationError(f"unsupported match type {condition.match_type!r}")
    return all(p == "*" or p == label for p, label in zip(path, part, strict=True))
