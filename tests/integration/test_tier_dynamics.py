"""A memory's whole life through the facade, with an injected clock, on every adapter; the
maintenance job's properties; feedback, pin, restore, stats, the scheduler and the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
import time
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graphmem import GraphMemory, Tier
from graphmem.config import (
    ConsolidationConfig,
    GraphMemConfig,
    StoreConfig,
    TierConfig,
    TiersConfig,
)
from graphmem.errors import ConflictError, NotFoundError, ValidationError
from graphmem.models import Status, TransitionKind
from tests.conftest import Clock, FakeEmbedder

NS = "life"
SMALL = TiersConfig(medium=TierConfig(half_life_hours=24, capacity=3, entry_importance=0.5))


@pytest.fixture(params=["sqlite", "falkordb", "neo4j"])
def small(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> GraphMemory:
    """A memory whose medium tier holds 3, on each adapter."""
    from tests.conftest import _wipe_neo4j

    store = StoreConfig(falkordb_graph=f"t{uuid.uuid4().hex}")
    cfg = GraphMemConfig(tiers=SMALL, store=store)
    if request.param == "neo4j":
        target = request.getfixturevalue("neo4j_uri")
        _wipe_neo4j(target)
    else:
        target = (str(tmp_path / "d") if request.param == "sqlite"
                  else request.getfixturevalue("falkordb_server").url)
    mem = GraphMemory.open(target, config=cfg, clock=clock, embedder=FakeEmbedder())
    request.addfinalizer(mem.close)
    return mem


def cover(mem: GraphMemory, ids: list[str]) -> str:
    """A summary that stands for ``ids`` (as consolidation writes one), through the port."""
    from graphmem.models import EdgeSource, Kind, Memory, Relation, RelationType
    from graphmem.store.base import WriteBatch

    sid = f"summary-{uuid.uuid4().hex[:8]}"
    now = mem.clock()
    summary = Memory(sid, NS, "a summary", kind=Kind.SUMMARY, tier=Tier.SLOW,
                     created_at=now, updated_at=now, last_accessed_at=now, stored_at=now,
                     reinforced_at=now, content_hash=sid,
                     embedding=mem.embedder.embed(["a summary"])[0])
    mem.backend.apply(WriteBatch(NS, memories=[summary], edges=[
        Relation(sid, i, RelationType.SUMMARIZES, NS, None, now, EdgeSource.AUTO)
        for i in ids]))
    return sid


def kinds(mem: GraphMemory, id_: str) -> list[tuple[str, str, str]]:
    return [(t.kind.value, t.from_tier.value, t.to_tier.value)
            for t in mem.transitions(id_, namespace=NS)]


def test_a_whole_life(small: GraphMemory, clock: Clock) -> None:
    mem = small
    m = mem.store("the search API rate limit is 100 requests per minute", namespace=NS,
                  importance=0.9)
    assert m.tier is Tier.FAST
    # decays; after 3 h unaccessed it is stale in fast (retention 2 h): down to medium, where
    # the decay goes on from the value it had reached (0.9 x 0.5^3 = 0.1125, never raised by
    # the slower half-life), which is below medium's floor (slow's entry 0.3): on to slow
    clock.advance(hours=3)
    assert mem.get(m.id, namespace=NS).importance == 0.9  # decay persists on maintenance
    report = mem.maintain(namespace=NS)
    got = mem.get(m.id, namespace=NS)
    assert got.tier is Tier.SLOW and got.importance == pytest.approx(0.9 * 0.5 ** 3, abs=1e-6)
    assert report.counts()["demotion"] == 2
    # slow keeps it until it is stale there (retention 14 days)
    clock.advance(days=13)
    mem.maintain(namespace=NS)
    slow = mem.get(m.id, namespace=NS)
    assert slow.tier is Tier.SLOW and slow.importance < got.importance
    clock.advance(days=2)
    mem.maintain(namespace=NS)
    glacial = mem.get(m.id, namespace=NS)
    assert glacial.tier is Tier.GLACIAL and glacial.importance <= slow.importance
    assert kinds(mem, m.id) == [("demotion", "fast", "medium"), ("demotion", "medium", "slow"),
                                ("demotion", "slow", "glacial")]
    # surprisingly useful: low predicted relevance, useful -> surprise climbs -> promoted
    for _ in range(2):
        mem.feedback(m.id, namespace=NS, useful=True, predicted_relevance=0.1)
    assert mem.get(m.id, namespace=NS).tier is Tier.GLACIAL  # surprise 0.459 <= 0.5
    promoted = mem.feedback(m.id, namespace=NS, useful=True, predicted_relevance=0.1)
    assert promoted.tier is Tier.SLOW and promoted.surprise_score > 0.5
    assert mem.get(m.id, namespace=NS).last_promoted_at == clock.now
    # cooldown: surprise is above slow's 0.6 now, but not again within 24 h
    again = mem.feedback(m.id, namespace=NS, useful=True, predicted_relevance=0.0)
    assert again.surprise_score > 0.6 and again.tier is Tier.SLOW
    clock.advance(hours=25)
    later = mem.feedback(m.id, namespace=NS, useful=True, predicted_relevance=0.0)
    assert later.tier is Tier.MEDIUM
    # pinned: survives capacity pressure in medium (capacity 3)
    mem.pin(m.id, namespace=NS)
    others = [mem.store(f"medium memory {i}", namespace=NS, importance=0.5 + i / 100).id
              for i in range(4)]
    report = mem.maintain(namespace=NS)  # no summary stands for them: none may leave yet
    assert report.counts()["eviction"] == 0 and report.awaiting_consolidation == 2
    assert len(mem.list_memories(namespace=NS, tier="medium")) == 5
    cover(mem, others)
    report = mem.maintain(namespace=NS)
    assert report.counts()["eviction"] == 2
    active_medium = mem.list_memories(namespace=NS, tier="medium")
    assert m.id in {x.id for x in active_medium} and len(active_medium) == 3
    archived = {x.id for x in mem.list_memories(namespace=NS, status="archived")}
    assert archived == {others[0], others[1]}  # the lowest importance went first
    assert mem.maintain(namespace=NS).changed is False  # idempotent
    # expiry: an unpinned glacial memory untouched past its 60-day TTL
    cold = mem.store("an old note", namespace=NS, importance=0.1)
    clock.advance(days=61)
    assert mem.maintain(namespace=NS).awaiting_consolidation >= 1
    assert mem.get(cold.id, namespace=NS).status is Status.ACTIVE  # no summary: it stays
    cover(mem, [cold.id])
    mem.maintain(namespace=NS)
    assert mem.get(cold.id, namespace=NS).status is Status.EXPIRED
    lineage = mem.retrieve("old note", namespace=NS, include_archived=True)
    assert any(r.memory.id == cold.id and "SUMMARIZES" in str(r.path) for r in lineage)
    assert mem.get(m.id, namespace=NS).status is Status.ACTIVE  # pinned never expires
    # the default view still reaches it through its summary, below active peers (ADR 0059)
    seen = {r.memory.id: r for r in mem.retrieve("old note", namespace=NS,
                                                 record_access=False)}
    assert seen[cold.id].terms.get("archived") == 1.0
    assert cold.id not in {r.memory.id for r in mem.retrieve(
        "old note", namespace=NS, include_archived=False, record_access=False)}
    expired = {x.id for x in mem.list_memories(namespace=NS, status="expired")}
    assert cold.id in expired and m.id not in expired  # (the unpinned medium ones too)
    restored = mem.restore(cold.id, namespace=NS)
    assert restored.status is Status.ACTIVE
    back = {r.memory.id: r for r in mem.retrieve("old note", namespace=NS,
                                                 record_access=False)}
    assert "archived" not in back[cold.id].terms
    assert kinds(mem, cold.id)[-2:] == [("expiry", "glacial", "glacial"),
                                        ("restore", "glacial", "glacial")]
    with pytest.raises(ConflictError):  # already active: a state conflict (409)
        mem.restore(cold.id, namespace=NS)


def test_access_window_promotes_and_stats_count(small: GraphMemory, clock: Clock) -> None:
    mem = small
    m = mem.store("incident runbook for the payments queue", namespace=NS, importance=0.55)
    assert m.tier is Tier.MEDIUM
    for _ in range(3):
        clock.advance(hours=1)
        mem.retrieve("payments queue runbook", namespace=NS)
    got = mem.get(m.id, namespace=NS)
    assert got.tier is Tier.FAST and got.access_count == 3
    assert "3 accesses" in mem.transitions(m.id, namespace=NS)[0].reason
    mem.retrieve("nothing like anything stored xyzzy", namespace=NS, min_similarity=0.99)
    clock.advance(hours=5)
    mem.maintain(namespace=NS)
    s = mem.stats(namespace=NS)
    assert s["promotions"] == {"total": 1, "last_hour": 0}
    assert s["demotions"]["total"] >= 1 and s["demotions"]["last_hour"] >= 1
    assert s["transitions"]["promotion:medium->fast"]["total"] == 1
    assert s["hit_rate"] == pytest.approx(3 / 4) and s["queries"] == 4
    assert s["average_surprise"] == 0.0
    assert sum(s["importance_histogram"]["tiers"]["medium"]) == s["tiers"]["medium"]
    assert sum(sum(v.values()) for v in s["age_histogram"].values()) == s["statuses"]["active"]


def test_stats_histograms_match_each_memory_decayed(small: GraphMemory, clock: Clock) -> None:
    """The histograms are counted from columns with numpy (ADR 0018); they must equal what
    ``current_importance`` and the age of each active memory give, one memory at a time."""
    from graphmem.engine.stats import AGE_BINS, IMPORTANCE_BINS
    from graphmem.models import Status
    from graphmem.rules.tiers import age_hours, current_importance

    mem = small
    ids = []
    for i in range(24):
        ids.append(mem.store(f"note {i} about queue {i % 5} and disk {i % 3}", namespace=NS,
                             importance=round(0.05 + 0.04 * i, 2)).id)
        clock.advance(hours=[0.1, 0.5, 1, 3][i % 4])
    mem.retrieve("queue disk", namespace=NS)  # reinforces nothing, touches some
    mem.delete(ids[3], namespace=NS)
    clock.advance(hours=1)
    s = mem.stats(namespace=NS)
    now = clock()
    want_imp = {t.value: [0] * len(IMPORTANCE_BINS) for t in Tier}
    want_age = {t.value: dict.fromkeys((label for _, label in AGE_BINS), 0) for t in Tier}
    surprise, active = 0.0, 0
    for page in mem.backend.iter_memories(NS, embeddings=False, statuses=[Status.ACTIVE]):
        for m in page:
            active += 1
            surprise += m.surprise_score
            v = current_importance(m, now, mem.config.tiers)
            want_imp[m.tier.value][next(i for i, e in enumerate(IMPORTANCE_BINS) if v <= e)] += 1
            a = age_hours(m.created_at, now)
            want_age[m.tier.value][next(lab for e, lab in AGE_BINS if a < e)] += 1
    assert active == s["statuses"]["active"] >= 20
    assert s["importance_histogram"]["tiers"] == want_imp
    assert s["age_histogram"] == want_age
    assert sum(n > 0 for v in want_imp.values() for n in v) >= 5  # spread over the bins
    assert s["average_surprise"] == pytest.approx(round(surprise / active, 4))


def test_feedback_outcomes_and_validation(small: GraphMemory, clock: Clock) -> None:
    mem = small
    m = mem.store("use exponential backoff on 429", namespace=NS, importance=0.35)
    mem.retrieve("backoff 429", namespace=NS)  # records the predicted relevance
    predicted = mem.get(m.id, namespace=NS).last_predicted
    assert predicted is not None and 0 < predicted <= 1
    clock.advance(days=2)
    got = mem.feedback(m.id, namespace=NS, outcome="success")
    assert got.success_count == 1 and got.last_accessed_at == clock.now  # reinforced
    assert got.surprise_score == pytest.approx(0.3 * (1 - predicted), abs=1e-6)
    failed = mem.feedback(m.id, namespace=NS, outcome="failure", useful=False)
    assert failed.failure_count == 1 and failed.surprise_score < got.surprise_score
    for bad in ({}, {"outcome": "meh"}, {"useful": "yes"},
                {"useful": True, "predicted_relevance": 2}):
        with pytest.raises(ValidationError):
            mem.feedback(m.id, namespace=NS, **bad)
    with pytest.raises(NotFoundError):
        mem.feedback(m.id, namespace="elsewhere", useful=True)


def test_dry_run_writes_nothing(small: GraphMemory, clock: Clock) -> None:
    mem = small
    m = mem.store("fresh", namespace=NS, importance=0.95)
    clock.advance(days=3)
    dry = mem.maintain(namespace=NS, dry_run=True)
    assert dry.counts()["demotion"] >= 1 and dry.dry_run
    assert mem.get(m.id, namespace=NS).tier is Tier.FAST
    assert mem.transitions(m.id, namespace=NS) == []
    real = mem.maintain(namespace=NS)
    assert [t.to_tier for t in real.transitions] == [t.to_tier for t in dry.transitions]


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=st.lists(st.tuples(st.floats(0, 1), st.booleans(), st.integers(0, 2000),
                                st.booleans()), min_size=1, max_size=25),
       advance=st.integers(0, 3000))
def test_maintenance_is_idempotent_and_respects_pins(
        tmp_path_factory: pytest.TempPathFactory, specs: list[tuple[float, bool, int, bool]],
        advance: int) -> None:
    """Idempotent; pins hold; a tier over capacity sheds every movable member (covered by a
    summary, not pinned) it must; nothing leaves the active set without a summary."""
    clock = Clock()
    folder = tmp_path_factory.mktemp("prop")
    cfg = GraphMemConfig(tiers=TiersConfig(
        fast=TierConfig(half_life_hours=1, capacity=3, entry_importance=0.8),
        medium=TierConfig(half_life_hours=24, capacity=3, entry_importance=0.5),
        slow=TierConfig(half_life_hours=168, capacity=3, entry_importance=0.3),
        glacial=TierConfig(half_life_hours=720, capacity=3, entry_importance=0.0)))
    with GraphMemory.open(folder, config=cfg, clock=clock, embedder=FakeEmbedder()) as mem:
        ids = []
        for i, (importance, pinned, hours, _) in enumerate(specs):
            m = mem.store(f"memory {i}", namespace=NS, importance=importance, pinned=pinned,
                          created_at=clock.now - timedelta(hours=hours))
            ids.append((m.id, pinned, m.tier))
        covered = {i for (i, _, _), spec in zip(ids, specs, strict=True) if spec[3]}
        if covered:
            cover(mem, sorted(covered))
        clock.advance(hours=advance)
        first = mem.maintain(namespace=NS)
        second = mem.maintain(namespace=NS)
        assert not second.changed, second.to_dict()
        for id_, pinned, tier in ids:
            got = mem.get(id_, namespace=NS)
            if pinned:
                assert got.tier is tier and got.status is Status.ACTIVE
        mine = {i for i, _, _ in ids}
        now_in: dict[str, list[tuple[str, bool]]] = {}
        for t in Tier:
            for x in mem.list_memories(namespace=NS, tier=t):
                if x.id in mine:
                    now_in.setdefault(t.value, []).append((x.id, x.pinned))
        for members in now_in.values():
            fixed = sum(1 for i, p in members if p or i not in covered)
            assert len(members) <= max(3, fixed)
        for id_, _, _ in ids:  # nothing left the active set without a summary
            if id_ not in covered:
                assert mem.get(id_, namespace=NS).status is Status.ACTIVE
        assert all(t.kind is not TransitionKind.RESTORE for t in first.transitions)


def test_scheduler_runs_maintenance(tmp_path: Path, clock: Clock) -> None:
    from graphmem.engine.scheduler import CONSOLIDATION_JOB, MAINTENANCE_JOB, start_scheduler

    with GraphMemory.open(tmp_path, clock=clock, embedder=FakeEmbedder()) as mem:
        m = mem.store("will be demoted by the scheduled job", namespace=NS, importance=0.9)
        clock.advance(hours=3)
        scheduler = start_scheduler(mem, interval_minutes=0.005)  # every 0.3 s
        try:
            job = scheduler.get_job(MAINTENANCE_JOB)
            assert job.max_instances == 1 and job.coalesce is True
            nightly = scheduler.get_job(CONSOLIDATION_JOB)
            assert nightly.max_instances == 1 and nightly.coalesce is True
            assert "interval[1 day" in str(nightly.trigger)
            deadline = time.monotonic() + 20
            while mem.get(m.id, namespace=NS).tier is Tier.FAST:
                assert time.monotonic() < deadline, "the scheduled maintenance never ran"
                time.sleep(0.1)
            # the job ran on graphmem's named pool (ARCHITECTURE.md's thread table)
            assert any(t.name.startswith("graphmem-job") for t in threading.enumerate())
        finally:
            scheduler.shutdown(wait=True)
        assert mem.get(m.id, namespace=NS).tier is Tier.SLOW  # stale, then below the floor
    cron = GraphMemConfig(consolidation=ConsolidationConfig(cron="0 3 * * *"))
    with GraphMemory.open(tmp_path / "cron", config=cron, embedder=FakeEmbedder()) as mem:
        scheduler = start_scheduler(mem)
        try:
            assert "cron[" in str(scheduler.get_job(CONSOLIDATION_JOB).trigger)
        finally:
            scheduler.shutdown(wait=False)


def test_cli_maintain_and_mark(tmp_path: Path) -> None:
    gm = (shutil.which("graphmem", path=str(Path(sys.executable).parent))
          or shutil.which("graphmem"))
    assert gm
    clock = Clock()
    with GraphMemory.open(tmp_path, clock=clock, embedder=FakeEmbedder()) as mem:
        m = mem.store("an old hot memory", namespace=NS, importance=0.9,
                      created_at=clock.now)  # the CLI's clock is the real one: years later

    def run(*args: str) -> Any:
        out = subprocess.run([gm, *args, "--data", str(tmp_path)], capture_output=True,
                             text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout

    dry = run("maintain", "--dry-run", "-n", NS)
    assert dry.startswith("would change:") and "demotion 3" in dry and "expiry 0" in dry
    assert json.loads(run("maintain", "--json", "-n", NS, "--dry-run"))["dry_run"] is True
    done = json.loads(run("maintain", "--json"))  # past its TTL, but no summary stands for it
    assert done["counts"]["expiry"] == 0 and done["awaiting_consolidation"] == 1
    assert done["namespaces"] == [NS]
    assert json.loads(run("maintain", "--json"))["counts"] == {
        "promotion": 0, "demotion": 0, "expiry": 0, "eviction": 0}
    assert json.loads(run("mark", "-n", NS, "--json", m.id, "pin"))["pinned"] is True


def test_reading_entries_counts_as_access(small: GraphMemory, clock: Clock) -> None:
    m = small.store("the on-call handbook", namespace=NS, importance=0.55)
    for _ in range(3):
        clock.advance(minutes=30)
        got = small.entries([m.id], namespace=NS)[0]
    assert got.access_count == 3 and got.last_accessed_at == clock.now
    stored = small.get(m.id, namespace=NS)
    assert stored.tier is Tier.FAST and stored.window_count == 0  # promoted, window reset
    assert [t.kind for t in small.transitions(m.id, namespace=NS)] == [
        TransitionKind.PROMOTION]


def test_maintenance_compacts_stale_vectors_once_enough_wait(mem: GraphMemory,
                                                            clock: Clock) -> None:
    """Edits leave stale vector nodes on the graph engines; a maintenance run reclaims them
    (they used to pile up: nothing called the vacuum)."""
    ids = [mem.store(f"note {i} about the build", namespace=NS).id for i in range(3)]
    for n, i in enumerate(ids):
        mem.update(i, namespace=NS, content=f"note {n} about the release, rewritten")
    assert mem.maintain().compacted == 0  # the default waits for 1000 stale nodes
    eager = GraphMemory(mem.backend, config=mem.config.model_copy(update={
        "tuning": mem.config.tuning.model_copy(update={"compact_min_stale": 1})}),
        clock=clock, embedder=mem.embedder)
    assert eager.maintain(dry_run=True).compacted == 0  # a dry run changes nothing
    report = eager.maintain()
    assert report.compacted == (0 if mem.backend.__class__.__name__ == "SQLiteStore" else 3)
    assert report.to_dict()["compacted"] == report.compacted
    assert eager.maintain().compacted == 0
    hits = mem.retrieve("the release rewritten", namespace=NS, depth=0)
    assert {h.memory.id for h in hits} == set(ids)
