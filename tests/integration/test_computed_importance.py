"""Computed importance (issue 12 point 9, ADR 0014): the maintenance job persists the seed's
blend of recency, access, causal density, surprise and marks; retrieval ranks by it; tier
moves are the same with it on or off."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from pydantic import ValidationError as ConfigValidationError

from graphmem import GraphMemory
from graphmem.config import GraphMemConfig, ImportanceConfig, StoreConfig
from graphmem.models import Memory
from graphmem.rules.importance import computed_importance, factors
from tests.conftest import Clock, FakeEmbedder

NS = "imp"


def _open(target: str, clock: Clock, computed: bool, graph: str | None = None) -> GraphMemory:
    store = StoreConfig() if graph is None else StoreConfig(falkordb_graph=graph)
    cfg = GraphMemConfig(importance=ImportanceConfig(computed=computed), store=store)
    return GraphMemory.open(target, config=cfg, clock=clock, embedder=FakeEmbedder())


def _scenario(mem: GraphMemory, clock: Clock) -> dict[str, Memory]:
    cause = mem.store("the disk filled up on the build host", namespace=NS)
    effects = [mem.store(f"build {i} failed: no space left on device", namespace=NS)
               for i in range(3)]
    for e in effects:
        mem.relate(cause.id, e.id, "CAUSES", namespace=NS)
    used = mem.store("clean the docker cache weekly on the build host", namespace=NS)
    pinned = mem.store("the build host is build-01", namespace=NS, pinned=True)
    clock.advance(hours=12)
    for _ in range(4):
        mem.entries([used.id], namespace=NS)
    mem.feedback(used.id, namespace=NS, useful=True, predicted_relevance=0.1)
    clock.advance(hours=30)
    mem.maintain(NS)
    return {"cause": cause, "effect": effects[0], "used": used, "pinned": pinned}


@pytest.fixture(params=["sqlite", "falkordb"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str | None]:
    if request.param == "sqlite":
        return str(tmp_path / "data"), None
    return request.getfixturevalue("falkordb_server").url, f"t{uuid.uuid4().hex}"


def test_maintenance_persists_the_blend_and_retrieval_ranks_by_it(
        target: tuple[str, str | None]) -> None:
    clock = Clock()
    with _open(target[0], clock, True, target[1]) as mem:
        made = _scenario(mem, clock)
        got = {k: mem.get(m.id, namespace=NS) for k, m in made.items()}
        cfg = mem.config.importance
        for key, m in got.items():
            out = 3 if key == "cause" else 0
            assert m.importance == computed_importance(m, clock.now, cfg, out), key
        f = factors(got["cause"], clock.now, cfg, 3)
        assert f["causal"] == pytest.approx(0.6) and f["access"] == 0.0
        assert factors(got["used"], clock.now, cfg, 0)["access"] > 0.4
        assert got["cause"].importance > got["effect"].importance  # what it caused counts
        assert got["used"].importance > got["effect"].importance  # used and surprising
        assert got["pinned"].importance > got["effect"].importance  # marked
        hits = mem.retrieve("build host disk", namespace=NS, limit=10, record_access=False)
        for h in hits:
            assert h.terms["importance"] == mem.get(h.memory.id, namespace=NS).importance


def test_tier_moves_do_not_depend_on_the_option(tmp_path: Path) -> None:
    outcomes = []
    for computed in (False, True):
        clock = Clock()
        with _open(str(tmp_path / str(computed)), clock, computed) as mem:
            made = _scenario(mem, clock)
            clock.advance(days=20)
            mem.maintain(NS)
            outcomes.append({k: (m.tier, m.status) for k, m in (
                (k, mem.get(v.id, namespace=NS)) for k, v in made.items())})
            imp = {k: mem.get(v.id, namespace=NS).importance for k, v in made.items()}
            if not computed:  # off: the decayed base importance, as before
                assert imp["cause"] == imp["effect"]
    assert outcomes[0] == outcomes[1]


def test_weights_are_validated() -> None:
    with pytest.raises(ConfigValidationError, match="unknown importance factors"):
        ImportanceConfig(weights={"recency": 1, "vibes": 1})
    with pytest.raises(ConfigValidationError, match="not all 0"):
        ImportanceConfig(weights={"recency": 0})
    assert ImportanceConfig(weights={"causal": 2}).weights == {"causal": 2}
