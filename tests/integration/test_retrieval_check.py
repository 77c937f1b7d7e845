"""The retrieval check of a consolidation run asks as users ask (issue 44 point 2, ADR 0059):
probes that never repeat a member's text, asked with the real pipeline in the default and the
comprehensive view. (The check holding a run whose default view hides archived memories is
``test_lifecycle.py::test_retrieval_check_measures_a_real_loss``.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphmem import GraphMemory
from graphmem.consolidation import check
from tests.conftest import Clock, FakeEmbedder
from tests.integration.test_lifecycle import LOCOMO, _conv30


def _runs(text: str, n: int) -> set[tuple[str, ...]]:
    words = re.findall(r"\w+", text.lower())
    return {tuple(words[i:i + n]) for i in range(len(words) - n + 1)}


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo data not beside the project")
def test_probes_never_repeat_the_members_text(tmp_path: Path) -> None:
    with GraphMemory.open(tmp_path, clock=Clock(), embedder=FakeEmbedder()) as mem:
        stored = mem.store_many(_conv30(), namespace="c")
        members = {m.id: m for m in stored[5::23]}
        probes = check._probes(mem.core, "c", list(members))
        kinds = {kind for _, kind, _ in probes}
        assert kinds == {"keywords", "question", "neighbour"}
        assert len(probes) >= 2 * len(members)
        for member, kind, text in probes:
            own = members[member].content
            assert text != own
            if kind != "neighbour":  # a neighbour's own words may echo it: never verbatim
                assert not _runs(text, 4) & _runs(own, 4), (kind, text, own)
            else:
                assert text in {m.content for m in stored} and text != own
        questions = [t for _, k, t in probes if k == "question"]
        assert all(t.startswith("What did ") and t.endswith("?") for t in questions)
