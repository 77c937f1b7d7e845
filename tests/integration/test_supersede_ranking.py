"""supersede wins (issue 44 point 8, ADR 0059): in the default view the valid memory ranks
above the one it superseded - in the README's own example and in a LoCoMo-sized namespace -
while ``as_of`` in the past still answers with the old one."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from graphmem import GraphMemory
from tests.integration.test_lifecycle import LOCOMO, _conv30


@pytest.mark.model
def test_the_readme_example_answers_with_the_new_password(tmp_path: Path,
                                                         real_embedder: Any) -> None:
    now = datetime.now(UTC)
    with GraphMemory.open(tmp_path, embedder=real_embedder) as mem:
        old = mem.store("The wifi password is hunter2", namespace="office",
                        created_at=now - timedelta(days=30))
        new = mem.store("The wifi password is swordfish", namespace="office")
        mem.supersede(old.id, new.id, namespace="office")
        got = mem.retrieve("wifi password", namespace="office", record_access=False)
        assert [h.memory.id for h in got] == [new.id, old.id]
        assert got[1].terms["invalid"] == 1.0 and got[0].score > got[1].score
        then = mem.retrieve("wifi password", namespace="office",
                            as_of=now - timedelta(days=7), record_access=False)
        assert [h.memory.id for h in then] == [old.id]


@pytest.mark.model
@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not beside the project")
def test_corrections_win_in_a_conversation(tmp_path: Path, real_embedder: Any) -> None:
    """Every 40th turn of conv-30 corrected by a later memory that says the same with one
    detail changed; asked with the old turn's own words, the correction ranks above it."""
    items = _conv30()
    with GraphMemory.open(tmp_path, embedder=real_embedder) as mem:
        stored = mem.store_many(items, namespace="c")
        pairs = []
        for old in stored[::40]:
            text = old.content + " (correction: it was the week after)"
            new = mem.store(text, namespace="c", source=old.source,
                            created_at=old.created_at + timedelta(days=2))
            mem.supersede(old.id, new.id, namespace="c")
            pairs.append((old, new))
        for old, new in pairs:
            got = [h.memory.id for h in mem.retrieve(old.content, namespace="c",
                                                     record_access=False)]
            assert new.id in got and (old.id not in got or got.index(new.id) <
                                      got.index(old.id)), old.content
            before = old.created_at + timedelta(hours=1)  # the correction was not yet known
            past = [h.memory.id for h in mem.retrieve(old.content, namespace="c", as_of=before,
                                                      record_access=False)]
            assert old.id in past and new.id not in past


@pytest.mark.model
def test_a_lapsed_memory_ranks_below_a_valid_twin(tmp_path: Path, real_embedder: Any) -> None:
    """``valid_until`` in the past, no successor: it still shows, below an equally relevant
    memory that is valid (a halved score did not do that once fusion made it negative)."""
    now = datetime.now(UTC)
    with GraphMemory.open(tmp_path, embedder=real_embedder) as mem:
        lapsed = mem.store("The office opens at 8 on weekdays", namespace="o",
                           valid_until=now - timedelta(days=1),
                           created_at=now - timedelta(days=40))
        valid = mem.store("The office opens at 9 on weekdays", namespace="o",
                          created_at=now - timedelta(days=40))
        for i in range(6):
            mem.store(f"Unrelated note {i} about the lunch menu", namespace="o")
        got = mem.retrieve("when does the office open", namespace="o", record_access=False)
        ids = [h.memory.id for h in got]
        assert ids.index(valid.id) < ids.index(lapsed.id)
        assert got[ids.index(lapsed.id)].terms["invalid"] == 1.0
