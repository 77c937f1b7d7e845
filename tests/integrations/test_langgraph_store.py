"""``GraphMemStore`` against LangGraph's own ``InMemoryStore``: generated operation sequences
(hypothesis) give the same answers where LangGraph defines them (search ranking and the order
of an unranked search aside: the same members, page sizes and full result sets), on the
embedded store and through the clients against a real server; inside a compiled
``StateGraph``; TTL in minutes on an injected clock, refreshed by reads."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypedDict, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain_core.embeddings.fake import DeterministicFakeEmbedding
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from graphmem import GraphMemory
from graphmem.client import AsyncGraphMemClient, GraphMemClient
from graphmem.config import GraphMemConfig, StoreConfig
from graphmem.errors import ConfigError, ForbiddenError, GraphMemError, ValidationError
from graphmem.integrations import langgraph_codec as codec
from graphmem.integrations.langgraph import GraphMemStore
from tests.api.test_rest import Server
from tests.conftest import Clock, FakeEmbedder, fresh_graph

LONG = "l" * 90  # three of them encode past 128 characters: a hashed namespace
NAMESPACES = [("users", "u1"), ("users", "u2"), ("users", "u1", "deep"), ("a:b", "ü ñ"),
              ("docs",), (LONG, LONG, LONG)]
PREFIXES = [(), ("users",), ("users", "u1"), ("a:b",), ("docs",), (LONG,), ("none",)]
KEYS = ["a", "b", "a key", "ü", "k" * 80]
TEXTS = ["likes green tea", "works at the harbour office", "allergic to peanuts",
         "plays chess on sundays", "likes green tea"]
_prefixes = itertools.count()


def fresh(mem: Any, **kw: Any) -> GraphMemStore:
    """A store of its own on a shared graphmem (one prefix per hypothesis example)."""
    return GraphMemStore(mem, index={"fields": ["text"]}, prefix=f"t{next(_prefixes)}", **kw)


def reference() -> InMemoryStore:
    return InMemoryStore(index={"dims": 16, "embed": DeterministicFakeEmbedding(size=16),
                                "fields": ["text"]})


values = st.fixed_dictionaries(
    {"kind": st.sampled_from(["pref", "fact"]), "n": st.integers(0, 3)},
    optional={"text": st.sampled_from(TEXTS), "meta": st.sampled_from([{"a": 1}, {"a": 2}]),
              "tags": st.sampled_from([["x"], ["x", "y"]])})
filters = st.sampled_from([None, {}, {"kind": "fact"}, {"n": {"$gte": 2}}, {"meta": {"a": 1}},
                           {"tags": ["x", "y"]}, {"kind": {"$ne": "pref"}, "n": {"$lt": 3}}])
ns_ = st.sampled_from(NAMESPACES)
key_ = st.sampled_from(KEYS)
put = st.tuples(st.just("put"), ns_, key_, values,
                st.sampled_from([None, False, ["text"], ["kind", "text"]]))
ops = st.one_of(
    put, put,
    st.tuples(st.just("delete"), ns_, key_),
    st.tuples(st.just("get"), ns_, key_),
    st.tuples(st.just("search"), st.sampled_from(PREFIXES), filters, st.integers(0, 3),
              st.integers(1, 4), st.sampled_from([None, "green tea", "office"])),
    st.tuples(st.just("list"), st.sampled_from([None, ("users",), ("users", "*")]),
              st.sampled_from([None, ("u1",), ("*", "deep")]),
              st.sampled_from([None, 1, 2]), st.integers(0, 2), st.integers(1, 5)),
    st.tuples(st.just("batch"), ns_, key_, values))


def _view(items: list[Any]) -> set[tuple[Any, ...]]:
    return {(i.namespace, i.key, json.dumps(i.value, sort_keys=True)) for i in items}


def _prune(ref: InMemoryStore) -> None:
    """InMemoryStore keeps a namespace once touched, even empty (a get makes one); graphmem's,
    like LangGraph's Postgres store's, are those holding items: drop the empty ones."""
    for ns in [ns for ns, items in ref._data.items() if not items]:
        del ref._data[ns]


def apply(op: tuple[Any, ...], mine: BaseStore, ref: InMemoryStore) -> None:
    """One operation on both stores, and the comparison of their answers."""
    kind = op[0]
    if kind == "put":
        _, ns, key, value, index = op
        mine.put(ns, key, value, index=index)
        ref.put(ns, key, value, index=index)
    elif kind == "delete":
        mine.delete(op[1], op[2])
        ref.delete(op[1], op[2])
    elif kind == "get":
        a, b = mine.get(op[1], op[2]), ref.get(op[1], op[2])
        assert (a is None) == (b is None)
        if a is not None and b is not None:
            assert (a.namespace, a.key, a.value) == (b.namespace, b.key, b.value)
            assert a.created_at <= a.updated_at
    elif kind == "search":
        _, prefix, filter, offset, limit, query = op
        got = mine.search(prefix, filter=filter, offset=offset, limit=limit, query=query)
        want = ref.search(prefix, filter=filter, offset=offset, limit=limit, query=query)
        whole = _view(mine.search(prefix, filter=filter, limit=1000))
        assert whole == _view(ref.search(prefix, filter=filter, limit=1000))
        assert _view(got) <= whole
        if query is None or offset == 0:  # InMemoryStore fills a ranked page's tail with
            assert len(got) == len(want)   # unranked items ignoring the offset: not compared
        if offset == 0 and limit >= len(whole):
            assert _view(got) == _view(want)
        if query is None:
            assert all(i.score is None for i in got)
    elif kind == "list":
        _, prefix, suffix, depth, offset, limit = op
        kw = dict(prefix=prefix, suffix=suffix, max_depth=depth, offset=offset, limit=limit)
        assert mine.list_namespaces(**kw) == ref.list_namespaces(**kw)
    else:  # a batch reads before it writes, and its last put of a key wins
        _, ns, key, value = op
        batch: list[Op] = [GetOp(ns, key), PutOp(ns, key, value), SearchOp(ns[:1]),
                           PutOp(ns, key, {**value, "n": 9}), GetOp(ns, key)]
        answers, wanted = mine.batch(batch), ref.batch(batch)
        assert [x is None for x in answers] == [x is None for x in wanted]
        assert _view(cast(list[Item], answers[2])) == _view(cast(list[Item], wanted[2]))
        after = mine.get(ns, key), ref.get(ns, key)
        assert [i.value if i else None for i in after] == [{**value, "n": 9}] * 2
    _prune(ref)


@pytest.fixture(scope="module", params=["sqlite", "falkordb"])
def shared_mem(request: pytest.FixtureRequest,
               tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphMemory]:
    """The embedded store and a FalkorDB graph (Neo4j: the acceptance sequence alone)."""
    target, graph = str(tmp_path_factory.mktemp("lg") / "data"), None
    if request.param == "falkordb":
        target, graph = fresh_graph(request, "falkordb")
    config = GraphMemConfig(store=StoreConfig(falkordb_graph=graph) if graph else StoreConfig())
    with GraphMemory.open(target, config=config, clock=Clock(), embedder=FakeEmbedder()) as mem:
        yield mem


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with Server(tmp_path_factory.mktemp("lg-api")) as srv:
        yield srv


def examples(n: int) -> settings:
    return settings(max_examples=n, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])


@examples(40)
@given(st.lists(ops, min_size=1, max_size=25))
def test_the_embedded_store_answers_as_langgraphs_own(shared_mem: GraphMemory,
                                                      sequence: list[tuple[Any, ...]]) -> None:
    mine, ref = fresh(shared_mem), reference()
    for op in sequence:
        apply(op, mine, ref)


@examples(12)
@given(st.lists(ops, min_size=1, max_size=15))
def test_through_the_client_it_answers_as_langgraphs_own(server: Server,
                                                         sequence: list[tuple[Any, ...]]) -> None:
    client = GraphMemClient(server.url, server.keys.create(["*"], "writer")[1])
    with client:
        mine, ref = fresh(client), reference()
        for op in sequence:
            apply(op, mine, ref)


def test_the_async_client_path_answers_as_langgraphs_own(server: Server) -> None:
    async def run(store: BaseStore) -> list[Any]:
        ns, other = ("users", "u9", "memories"), ("users", "u8", "memories")
        await store.aput(ns, "a", {"text": "likes green tea", "kind": "pref"})
        await store.aput(ns, "b", {"text": "works at the harbour office", "kind": "fact"})
        await store.aput(other, "c", {"text": "allergic to peanuts", "kind": "fact"},
                         index=False)
        got = [(await store.aget(ns, "a")).value]  # type: ignore[union-attr]
        got.append(sorted(i.key for i in await store.asearch(("users",), filter={"kind": "fact"})))
        got.append(sorted(i.key for i in await store.asearch(("users",), query="tea")))
        await store.aput(ns, "a", {"text": "likes black coffee", "kind": "pref"})
        await store.adelete(ns, "b")
        got += [(await store.aget(ns, "a")).value, await store.aget(ns, "b")]  # type: ignore[union-attr]
        return [*got, await store.alist_namespaces(prefix=("users",), max_depth=2)]

    async def main() -> list[Any]:
        async with AsyncGraphMemClient(server.url,
                                       server.keys.create(["*"], "writer")[1]) as client:
            return await run(fresh(client))

    assert asyncio.run(main()) == asyncio.run(run(reference()))


def test_an_async_client_refuses_the_sync_methods(server: Server) -> None:
    store = fresh(AsyncGraphMemClient(server.url, "gm_x"))
    with pytest.raises(ConfigError, match="async methods"):
        store.get(("users",), "a")


@pytest.mark.parametrize("mem", ["sqlite", "falkordb",
                                 pytest.param("neo4j", marks=pytest.mark.slow)], indirect=True)
def test_acceptance_sequence_on_every_store(mem: GraphMemory) -> None:
    """The acceptance check's sequence, on SQLite, FalkorDB and Neo4j (a first query plan
    each on a fresh Neo4j: ~50 s on a loaded machine, hence slow)."""
    def run(store: BaseStore) -> list[Any]:
        out: list[Any] = []
        ns, ns2 = ("users", "u1", "memories"), ("users", "u2", "memories")
        store.put(ns, "a", {"text": "likes green tea", "kind": "pref"})
        store.put(ns, "b", {"text": "works at the harbour office", "kind": "fact"})
        store.put(ns2, "c", {"text": "allergic to peanuts", "kind": "fact"})
        out.append(store.get(ns, "a").value)  # type: ignore[union-attr]
        out.append(sorted(i.key for i in store.search(ns, filter={"kind": "fact"})))
        out.append(sorted(store.list_namespaces(prefix=("users",))))
        store.put(ns, "a", {"text": "likes black coffee", "kind": "pref"})
        out.append(store.get(ns, "a").value)  # type: ignore[union-attr]
        store.delete(ns, "b")
        out += [store.get(ns, "b"), sorted(i.key for i in store.search(("users",)))]
        return out

    assert run(GraphMemStore(mem)) == run(InMemoryStore())


def test_namespaces_list_as_langgraphs_own_for_every_condition(shared_mem: GraphMemory) -> None:
    mine, ref = fresh(shared_mem), reference()
    for store in (mine, ref):
        for i, ns in enumerate([*NAMESPACES, ("users", "u2", "deep", "er")]):
            store.put(ns, "k", {"i": i})
        store.put(("gone",), "k", {"i": 0})
        store.delete(("gone",), "k")
    _prune(ref)
    conditions = itertools.product(
        [None, ("users",), ("users", "*"), ("*", "u1"), (LONG,)],
        [None, ("deep",), ("*", "deep"), ("u1",)], [None, 1, 2, 3], [0, 1], [1, 2, 100])
    for prefix, suffix, depth, offset, limit in conditions:
        kw: dict[str, Any] = dict(prefix=prefix, suffix=suffix, max_depth=depth,
                                  offset=offset, limit=limit)
        assert mine.list_namespaces(**kw) == ref.list_namespaces(**kw), kw
    assert ("gone",) not in mine.list_namespaces()


def test_a_put_updates_the_memory_and_keeps_the_value_whole(tmp_path: Path,
                                                           clock: Clock) -> None:
    with GraphMemory.open(tmp_path / "d", clock=clock, embedder=FakeEmbedder()) as mem:
        store = GraphMemStore(mem, index={"fields": ["text"]})
        value = {"text": "likes green tea", "nested": {"list": [1, 2.5, None, "\x7f"]}}
        store.put(("users", "u1"), "a key", value)
        first = store.get(("users", "u1"), "a key")
        clock.advance(seconds=5)
        store.put(("users", "u1"), "a key", {"text": "likes black coffee"})
        item = store.get(("users", "u1"), "a key")
        assert first is not None and first.value == value and item is not None
        assert item.value == {"text": "likes black coffee"}
        assert item.created_at == first.created_at < item.updated_at
        [m] = mem.list_page(namespace="lg:users:u1").items  # one memory, updated in place
        assert m.id == codec.key_id("a key") and m.content.startswith("likes black coffee")
        [hit] = store.search(("users",), query="black coffee")
        assert hit.key == "a key" and hit.score is not None and hit.score > 0


def test_unindexed_items_are_found_by_filter_never_ranked(tmp_path: Path) -> None:
    with GraphMemory.open(tmp_path / "d", embedder=FakeEmbedder()) as mem:
        store = GraphMemStore(mem, index={"fields": ["text"]})
        store.put(("docs",), "ranked", {"text": "green tea", "k": 1})
        store.put(("docs",), "hidden", {"text": "green tea", "k": 1}, index=False)
        store.put(("docs",), "no-text", {"k": 1})
        hits = store.search(("docs",), query="green tea")
        assert hits[0].key == "ranked" and hits[0].score is not None
        assert {h.key: h.score for h in hits[1:]} == {"hidden": None, "no-text": None}


def test_bad_values_raise_typed_errors_and_change_nothing(tmp_path: Path) -> None:
    with GraphMemory.open(tmp_path / "d", embedder=FakeEmbedder()) as mem:
        store = GraphMemStore(mem)
        with pytest.raises(ValidationError):
            store.put(("docs",), "a", {"when": object()})
        with pytest.raises(GraphMemError):  # over graphmem's metadata bound (32 KiB)
            store.put(("docs",), "a", {"text": "x" * 40_000})
        with pytest.raises(ValidationError):
            store.batch([PutOp(("docs",), "a", ["not", "a", "dict"])])  # type: ignore[arg-type]
        with pytest.raises(ConfigError):
            GraphMemStore(mem, prefix="no:colons")
        assert store.search(()) == [] and mem.namespaces() == []


class Turn(TypedDict, total=False):
    user: str
    said: str
    recalled: list[str]


def remember(state: Turn, *, store: BaseStore) -> Turn:
    """A node that recalls what this user said before, then keeps what they say now."""
    ns = ("users", state["user"], "memories")
    recalled = [i.value["text"] for i in store.search(ns, query=state["said"])]
    store.put(ns, f"turn-{len(recalled)}", {"text": state["said"]})
    return {"recalled": recalled}


def test_a_compiled_state_graph_reads_and_writes_through_the_store(tmp_path: Path) -> None:
    builder = StateGraph(Turn)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    with GraphMemory.open(tmp_path / "d", embedder=FakeEmbedder()) as mem:
        graph = builder.compile(store=GraphMemStore(mem, index={"fields": ["text"]}))
        assert graph.invoke({"user": "u1", "said": "I like green tea"})["recalled"] == []
        assert graph.invoke({"user": "u2", "said": "I like coffee"})["recalled"] == []
        again = graph.invoke({"user": "u1", "said": "what tea do I like?"})
        assert again["recalled"] == ["I like green tea"]  # u2's memory is not u1's
        third = asyncio.run(graph.ainvoke({"user": "u1", "said": "green tea again"}))
        assert sorted(third["recalled"]) == ["I like green tea", "what tea do I like?"]
        assert sorted(mem.namespaces()) == ["lg:users:u1:memories", "lg:users:u2:memories"]


def _ttl_story(store: BaseStore, advance: Any) -> list[Any]:
    """LangGraph's TTL: minutes after the last write or refreshing read."""
    ns = ("users", "u1")
    store.put(ns, "short", {"text": "a passing note"}, ttl=1)
    store.put(ns, "kept", {"text": "a lasting fact"})
    seen: list[Any] = []
    advance(45)
    seen.append(store.get(ns, "short") is not None)  # a read at 45 s: refreshed
    advance(45)
    seen.append(store.get(ns, "short", refresh_ttl=False) is not None)  # 45 s after: there
    seen.append(sorted(i.key for i in store.search(ns, refresh_ttl=False)))
    advance(20)  # 65 s after the refresh: gone from every read
    seen += [store.get(ns, "short"), sorted(i.key for i in store.search(ns)),
             store.list_namespaces()]
    store.put(ns, "short", {"text": "written again"}, ttl=1)  # a put over an expired key
    seen.append(store.get(ns, "short").value)  # type: ignore[union-attr]
    advance(50)
    seen.append([i.key for i in store.search(ns, query="written")])  # a search refreshes
    advance(50)
    seen.append(store.get(ns, "short") is not None)
    return seen


STORY = [True, True, ["kept", "short"], None, ["kept"], [("users", "u1")],
         {"text": "written again"}, ["short", "kept"], True]


def test_ttl_in_minutes_expires_on_the_injected_clock(tmp_path: Path, clock: Clock) -> None:
    with GraphMemory.open(tmp_path / "d", clock=clock, embedder=FakeEmbedder()) as mem:
        store = GraphMemStore(mem, index={"fields": ["text"]})
        assert store.supports_ttl
        assert _ttl_story(store, lambda s: clock.advance(seconds=s)) == STORY
        [kept] = [m for m in mem.list_page(namespace="lg:users:u1", status=None).items
                  if m.metadata[codec.KEY] == '"kept"']
        assert kept.expires_at is None and kept.pinned


def test_ttl_through_the_client_expires_on_the_servers_clock(server: Server) -> None:
    with GraphMemClient(server.url, server.keys.create(["*"], "writer")[1]) as client:
        store = fresh(client)
        assert _ttl_story(store, lambda s: server.clock.advance(seconds=s)) == STORY


def test_a_default_ttl_and_no_refresh_on_read(tmp_path: Path, clock: Clock) -> None:
    with GraphMemory.open(tmp_path / "d", clock=clock, embedder=FakeEmbedder()) as mem:
        store = GraphMemStore(mem, ttl={"default_ttl": 1, "refresh_on_read": False})
        store.put(("docs",), "a", {"text": "x"})
        clock.advance(seconds=45)
        assert store.get(("docs",), "a") is not None  # read, not refreshed
        clock.advance(seconds=20)
        assert store.get(("docs",), "a") is None
        store.put(("docs",), "b", {"text": "y"}, ttl=None)  # None: never expires
        clock.advance(days=400)
        assert store.get(("docs",), "b") is not None


def test_pinned_items_outlive_consolidation_unpinned_ones_age(tmp_path: Path,
                                                              clock: Clock) -> None:
    """Why items are pinned (ADR 0064): consolidation archives old unpinned look-alikes, and
    a LangGraph caller would see its items vanish."""
    with GraphMemory.open(tmp_path / "d", clock=clock, embedder=FakeEmbedder()) as mem:
        kept, aging = GraphMemStore(mem), GraphMemStore(mem, prefix="aging", pin=False)
        for store in (kept, aging):
            for i in range(8):
                store.put(("docs",), f"k{i}", {"text": "the deploy failed: the migration "
                                                       f"locked table {i % 2}"})
        clock.advance(days=200)
        for ns in ("lg:docs", "aging:docs"):
            mem.consolidate(ns)
        assert len(kept.search(("docs",))) == 8
        assert len(aging.search(("docs",))) < 8


def test_a_scoped_key_sees_only_its_namespaces(server: Server) -> None:
    admin = fresh(GraphMemClient(server.url, server.keys.create(["*"], "writer")[1]))
    for user in ("u1", "u2"):
        admin.put(("users", user), "a", {"text": f"a note of {user}"})
    key = server.keys.create([admin.graphmem_namespace(("users", "u1"))], "reader")[1]
    scoped = GraphMemStore(GraphMemClient(server.url, key), prefix=admin.prefix)
    assert scoped.list_namespaces() == [("users", "u1")]
    assert [i.namespace for i in scoped.search(("users",))] == [("users", "u1")]
    with pytest.raises(ForbiddenError):
        scoped.get(("users", "u2"), "a")
    with pytest.raises(ForbiddenError):  # a reader key: nothing written
        scoped.put(("users", "u1"), "b", {"text": "x"})
    assert [i.key for i in admin.search(("users", "u1"))] == ["a"]
