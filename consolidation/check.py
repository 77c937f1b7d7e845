"""The retrieval check of a consolidation run (SPEC §6.7, ADR 0059): the view users get,
asked the way users ask.

Before a run changes anything, each namespace it would change is copied into a scratch
embedded store, and probes about a sample of the memories it would archive are asked there
with the real pipeline - the configured default view (``retrieve(q)``) and the
comprehensive one - before and after the plan is applied to the copy. Probes never repeat a
member's text: its rarest words, a question about them, and its session neighbour's words.
A hit is the member itself in the top 10 (a summary in its place does not count). What
holds a run is the invariant users rely on (SPEC §6.8): of the probes whose member the view
found before, the share it no longer finds after (``loss``).
"""

from __future__ import annotations

import logging
import re
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from typing import TYPE_CHECKING, Any

from graphmem.consolidation.plan import Plan, cluster_batch
from graphmem.models import Memory
from graphmem.rules.text import CHIT_CHAT_STEMS, strip_speaker
from graphmem.store.base import WriteBatch

if TYPE_CHECKING:
    from graphmem.engine.core import Core
    from graphmem.engine.retrieval import Retriever

log = logging.getLogger(__name__)
VIEWS = ("default", "comprehensive")
PROBES = ("keywords", "question", "neighbour")
_WORD = re.compile(r"[^\W\d_][\w'-]*[^\W_]")


def retrieval_check(core: Core, plan: Plan) -> dict[str, Any]:
    """Recall of the sampled members' probes in both views, before and after the plan."""
    cfg = core.config.consolidation
    sample = [(c, m) for c in plan.clusters if c["summary"] for m in c["archive"]]
    sample = sample[:: max(1, len(sample) // max(1, cfg.check_queries))][: cfg.check_queries]
    hits: dict[tuple[str, str], set[int]] = {(v, when): set() for v in VIEWS
                                             for when in ("before", "after")}
    kinds = dict.fromkeys(PROBES, 0)
    by_ns: dict[str, list[str]] = {}
    for c, member in sample:
        by_ns.setdefault(c["namespace"], []).append(member)
    asked = 0
    for ns, members in sorted(by_ns.items()):
        probes = _probes(core, ns, members)
        if not probes:
            continue
        for _, kind, _ in probes:
            kinds[kind] += 1
        with _scratch(core, ns) as scratch:
            _ask(scratch, ns, probes, asked, hits, "before")
            for c in plan.clusters:
                if c["namespace"] == ns and c["summary"]:
                    found = scratch.core.store.get_memories(ns, c["members"])
                    scratch.core.apply(cluster_batch(core, plan.run_id, c,
                                                     plan.vectors[c["summary"]["id"]],
                                                     plan.now, found))
            _ask(scratch, ns, probes, asked, hits, "after")
        asked += len(probes)
    out: dict[str, Any] = {"queries": asked, "members": len(sample), "probes": kinds,
                           "view": cfg.check_view, "max_loss": cfg.max_recall_loss}
    for view in VIEWS:
        before, after = hits[(view, "before")], hits[(view, "after")]
        out[view] = {"before": round(len(before) / asked, 4) if asked else 1.0,
                     "after": round(len(after) / asked, 4) if asked else 1.0,
                     "lost": len(before - after),
                     "loss": round(len(before - after) / len(before), 4) if before else 0.0}
    out["held_on"] = out[cfg.check_view]["loss"]
    return out


def _ask(retriever: Retriever, ns: str, probes: Sequence[tuple[str, str, str]], first: int,
         hits: dict[tuple[str, str], set[int]], when: str) -> None:
    """Ask every probe in both views, as ``retrieve(q, namespace=ns)`` and with
    ``strategy="comprehensive"`` do; a hit adds the probe's number (``first`` + its
    position) to ``hits[(view, when)]``."""
    for n, (member, _, text) in enumerate(probes, start=first):
        for view in VIEWS:
            q = retriever.query(text, ns, limit=10, strategy=(
                "comprehensive" if view == "comprehensive" else None))
            if any(r.memory.id == member for r in retriever.retrieve(q, touch=False)):
                hits[(view, when)].add(n)


def _probes(core: Core, ns: str, ids: list[str]) -> list[tuple[str, str, str]]:
    """(member id, kind, text) for each member: its rarest words, a question about the two
    rarest, and its session neighbour's content (the turn before it, else after it)."""
    found = core.store.get_memories(ns, ids)
    out: list[tuple[str, str, str]] = []
    sessions: dict[str, list[str]] = {}
    for mid in ids:
        m = found.get(mid)
        if m is None:
            continue
        words = _rare_words(core, ns, m)
        if words:
            out.append((mid, "keywords", " ".join(words)))
            about = " and ".join(words[:2])
            who = m.source or "we"
            out.append((mid, "question", f"What did {who} say about {about}?"))
        if m.session_id is not None:
            if m.session_id not in sessions:
                sessions[m.session_id] = [i for i, _ in core.store.session_members(
                    ns, m.session_id)]
            order = sessions[m.session_id]
            at = order.index(mid) if mid in order else -1
            other = order[at - 1] if at > 0 else order[at + 1] if 0 <= at < len(order) - 1 \
                else None
            if other is not None:
                near = core.store.get_memories(ns, [other]).get(other)
                if near is not None and near.content.strip():
                    out.append((mid, "neighbour", near.content))
    return out


def _rare_words(core: Core, ns: str, m: Memory, n: int = 4) -> list[str]:
    """The member's ``n`` informative words rarest in the namespace, rarest first (no stop
    words, no chit-chat, no speaker label)."""
    analyzer = core.analyzer
    seen: dict[str, str] = {}
    for word in _WORD.findall(strip_speaker(m.content)):
        terms = analyzer.terms(word)
        if len(terms) == 1 and terms[0] not in CHIT_CHAT_STEMS and terms[0] not in seen:
            seen[terms[0]] = word
    if not seen:
        return []
    stats = core.store.keyword_stats(ns, list(seen))[0]
    rarest = sorted(seen, key=lambda t: stats.df.get(t, 0))[:n]  # stable: ties as written
    return [seen[t] for t in rarest]


@contextmanager
def _scratch(core: Core, ns: str) -> Iterator[Retriever]:
    """A throw-away embedded store holding a copy of one namespace (memories with their
    vectors, and edges), with the same configuration, clock and embedder, and a retrieval
    pipeline over it (``.core``: the scratch's own)."""
    from graphmem.engine.core import Core
    from graphmem.engine.retrieval import Retriever
    from graphmem.store import make_store

    with tempfile.TemporaryDirectory(prefix="graphmem-check-",
                                     ignore_cleanup_errors=True) as folder, ExitStack() as stack:
        store = make_store(folder, core.config)
        stack.callback(store.close)
        store.open()
        retriever = Retriever(Core(store, core.embedder, core.analyzer, core.config, core.clock))
        stack.callback(retriever.close)
        for page in core.store.iter_memories(ns, embeddings=True):
            retriever.core.apply(WriteBatch(ns, memories=page))
        for edges in core.store.iter_edges(ns):
            retriever.core.apply(WriteBatch(ns, edges=edges))
        yield retriever
