"""The demo behind ``make demo``: a small, realistic memory set for an ops agent.

It stores memories with explicit relations (a causal chain, a reference, a contradiction) and a
short conversation session (FOLLOWS edges), then runs a few retrievals and prints each result's
score, every score term and the path that reached it. Two months of older notes on two topics
give the consolidation something to summarise: its report is what a maintainer reviews in the
viewer (``graphmem viewer --data <folder>``). Running the demo again replaces its namespace.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from graphmem.memory import GraphMemory

NS = "demo"

INCIDENT = [
    ("deploy", "The 14:00 deploy of billing-api failed: the schema migration held a lock on "
     "the invoices table for 11 minutes", 0.9),
    ("timeouts", "Checkout requests timed out while the invoices table was locked", 0.8),
    ("fix", "We now split large schema migrations into batches of 10k rows to avoid long "
     "table locks", 0.7),
    ("runbook", "Runbook: before a migration on a hot table, check its row count and run it "
     "in off-peak hours", 0.6),
    ("postgres", "Billing runs on PostgreSQL 15; migrations are applied by Alembic", 0.5),
    ("pg14", "Billing runs on PostgreSQL 14", 0.3),
    ("tea", "Priya prefers to get incident summaries by email, not Slack", 0.4),
]
RELATIONS = [("deploy", "CAUSES", "timeouts"), ("deploy", "CAUSES", "fix"),
             ("runbook", "REFERENCES", "fix"), ("pg14", "CONTRADICTS", "postgres")]
SESSION = [
    ("priya", "Priya: can we deploy billing again on Friday?"),
    ("agent", "Agent: yes, if the migration is split into batches and runs after 18:00"),
    ("priya", "Priya: ok, schedule it and send me the summary afterwards"),
]
#: older notes (two topics, stored two months before the demo's day): consolidation material
HISTORY = [
    "The nightly backup job failed because the storage volume was full",
    "Backups failed again overnight: the backup disk ran out of space",
    "The backup volume filled up and the nightly backup did not finish",
    "Disk full on the backup server stopped last night's backup run",
    "A customer was charged twice and asked for a refund of the duplicate invoice",
    "Refund issued after the billing system charged a customer twice",
    "Duplicate charge on an invoice: the customer wants a refund",
    "Billing double-charged a customer; we refunded the second payment",
]
QUERIES = ["why did the billing deploy fail?", "what database does billing use?",
           "when is the next billing deploy?"]


def run_demo(folder: str | Path, echo: Callable[[str], None]) -> None:
    start = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
    clock = {"now": start - timedelta(days=60)}  # an injected clock: the demo's own days
    with GraphMemory.open(folder, clock=lambda: clock["now"]) as mem:
        if gone := mem.delete_all(namespace=NS, confirm=NS):  # what an earlier demo left
            echo(f"(removed the {gone} memories an earlier demo left in namespace '{NS}')")
        mem.store_many([{"content": text, "importance": 0.3, "source": "ops-agent",
                         "created_at": clock["now"] + timedelta(hours=i)}
                        for i, text in enumerate(HISTORY)], namespace=NS)
        clock["now"] = start + timedelta(days=3)  # decay and recency as of that day
        ids: dict[str, str] = {}
        for n, (key, text, importance) in enumerate(INCIDENT):
            m = mem.store(text, namespace=NS, importance=importance, source="ops-agent",
                          created_at=start + timedelta(minutes=10 * n))
            ids[key] = m.id
        for src, rtype, dst in RELATIONS:
            mem.relate(ids[src], ids[dst], rtype, namespace=NS)
        mem.store_many([{"content": text, "source": who, "session_id": "chat-2026-03-04",
                         "created_at": start + timedelta(days=2, minutes=i), "importance": 0.6}
                        for i, (who, text) in enumerate(SESSION)], namespace=NS)
        stats = mem.stats(namespace=NS)
        echo(f"stored {stats['memories']} memories in namespace '{NS}' "
             f"(tiers {stats['tiers']}); edges {stats['edges']}")
        for query in QUERIES:
            echo(f"\n? {query}")
            for r in mem.retrieve(query, namespace=NS, limit=4, depth=2):
                flag = "  [DISPUTED]" if r.disputed else ""
                echo(f"  {r.score:6.3f}  {r.memory.content[:88]}{flag}")
                echo(f"          path: {r.path}")
                echo("          terms: " + ", ".join(f"{k} {v:.2f}" for k, v in r.terms.items()
                                                     if v))
        run = mem.consolidate(namespace=NS)
        report = run.report
        echo(f"\nconsolidation {run.id}: {run.status}; {report.get('summaries', 0)} summaries "
             f"written, {report.get('archived', 0)} memories archived (restorable)")
    echo(f"\nlook at it in a browser: graphmem viewer --data {folder}")
