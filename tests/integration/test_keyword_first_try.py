"""The embedded store's keyword candidates skip the unscored first try (ADR 0022) when one
term alone is in more fields than asked for: more memories match than fit, and the first
try's rows would be read and thrown away (ADR 0035). Same answer either way."""

from __future__ import annotations

from pathlib import Path

from graphmem.config import TuningConfig
from graphmem.models import Memory
from graphmem.store.base import WriteBatch
from graphmem.store.sqlite.rows import _FTS_ALL
from graphmem.store.sqlite.store import SQLiteStore

NS = "ops"


def test_the_first_try_runs_only_when_the_matches_may_fit(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path, dim=4, tuning=TuningConfig(ann_min=0))
    store.open()
    try:
        store.apply(WriteBatch(NS, memories=[
            Memory(id=f"m{i}", namespace=NS, content="x", keywords=f"deploy word{i}")
            for i in range(30)]))
        statements: list[str] = []
        assert store._conn is not None
        store._conn.set_trace_callback(statements.append)
        many = store.keyword_candidates(NS, ["deploy"], 10)
        first_tries = [s for s in statements if "ORDER BY m.pk DESC" in s]
        assert len(many) == 10 and first_tries == []
        assert {i for i, _, _ in many} == {i for i, _ in store.keyword_topk(NS, ["deploy"], 10)}
        statements.clear()
        few = store.keyword_candidates(NS, ["word3", "word4"], 10)
        assert sorted(i for i, _, _ in few) == ["m3", "m4"]
        assert [s for s in statements if "ORDER BY m.pk DESC" in s]  # the unscored try
        assert "ORDER BY m.pk DESC" in _FTS_ALL  # what the filter above looks for
    finally:
        store.close()
