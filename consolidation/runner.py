"""Consolidation runs (SPEC §6): select old memories, cluster, decide per cluster, check
retrieval, apply cluster by cluster, resume after a crash, roll back.

A run is a record in the store (its plan, progress and report). Applying one cluster is one
atomic write; a cluster's summary id is derived from the run and the cluster, so re-applying
after a crash changes nothing. One run at a time across processes: a lease in the store.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from graphmem.consolidation.plan import Plan, Planner, cluster_batch, no_progress
from graphmem.engine.leases import Lease
from graphmem.errors import ConflictError, NotFoundError
from graphmem.models import Status
from graphmem.store.base import WriteBatch

if TYPE_CHECKING:
    from graphmem.engine.core import Core

log = logging.getLogger(__name__)
LEASE = "graphmem-consolidation"


@dataclass
class ConsolidationRun:
    """What ``GraphMemory.consolidate`` returns: the run record and its report.

    Example:
        >>> run = ConsolidationRun({"id": "r1", "status": "applied", "report": {}})
        >>> run.id, run.status
        ('r1', 'applied')
    """

    data: dict[str, Any]

    @property
    def id(self) -> str:
        return str(self.data["id"])

    @property
    def status(self) -> str:
        return str(self.data["status"])

    @property
    def report(self) -> dict[str, Any]:
        return dict(self.data.get("report", {}))


class Consolidator:
    """One consolidation run at a time (a lease in the store): plan clusters without the
    write lock, check retrieval, apply cluster by cluster; resumable, reversible.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> run = Consolidator(mem.core).run("ops", dry_run=True)
        >>> run.status, run.report["candidates"]
        ('dry_run', 0)
        >>> mem.close()
    """

    def __init__(self, core: Core,
                 progress: Callable[[str, int, int], None] | None = None,
                 lock: AbstractContextManager[Any] | None = None) -> None:
        self.core = core
        #: the facade's write lock, held for one step at a time (a cluster, a record save),
        #: never for a whole run: planning reads without it
        self.lock: AbstractContextManager[Any] = lock if lock is not None else nullcontext()
        self.store = core.store
        self.config = core.config.consolidation
        self._held: Lease | None = None  # the lease, while a run holds it
        #: progress bars: called with (stage, done, total): "plan" counts candidates of a
        #: namespace as their clusters are decided, "apply" counts clusters written
        self.progress = progress or no_progress

    # -- entry points ------------------------------------------------------------------------
    def run(self, namespace: str | None = None, *, dry_run: bool = False) -> ConsolidationRun:
        self.core.settle()  # deferred accesses count (importance, last access) before we read
        now = self.core.clock()
        run_id = f"run-{now.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
        if dry_run:  # saved, so the report can be opened later; it changes nothing else
            data = self._new_run(run_id, namespace, now, dry_run=True)
            self._save(data)
            return ConsolidationRun(data)
        with self._lease(run_id):
            unfinished = [r for r in self.store.list_runs()
                          if r["status"] == "running" and r.get("namespace") == namespace]
            if unfinished:  # a crashed run: finish it first
                data = unfinished[0]
                log.info("resuming consolidation run %s", data["id"])
                self._apply(data)
                return ConsolidationRun(data)
            data = self._new_run(run_id, namespace, now, dry_run=False)
            self._save(data)
            if data["status"] == "running":
                self._apply(data)
            return ConsolidationRun(data)

    def approve(self, run_id: str) -> ConsolidationRun:
        data = self._get(run_id)
        if data["status"] != "pending_approval":
            raise ConflictError(f"run {run_id} is {data['status']}, not pending_approval")
        with self._lease(run_id):
            data["status"] = data["report"]["status"] = "running"
            data["approved_at"] = self.core.clock().isoformat()
            self._save(data)
            self._apply(data)
        return ConsolidationRun(data)

    def rollback(self, run_id: str) -> ConsolidationRun:
        data = self._get(run_id)
        if data["status"] not in ("applied", "running"):
            raise ConflictError(f"run {run_id} is {data['status']}: nothing to roll back")
        with self._lease(run_id):
            for c in data["clusters"]:
                # applied = its summary exists (progress is saved every few seconds only)
                if not c.get("summary") or not self.store.get_memories(
                        c["namespace"], [c["summary"]["id"]]):
                    continue
                batch = WriteBatch(c["namespace"], patches=[
                    (m, {"status": Status.ACTIVE}) for m in c["archive"]],
                    delete_memories=[c["summary"]["id"]])
                with self.lock:
                    self.core.apply(batch)
            data["status"] = data["report"]["status"] = "rolled_back"
            data["rolled_back_at"] = self.core.clock().isoformat()
            self._save(data)
        return ConsolidationRun(data)

    # -- planning ----------------------------------------------------------------------------
    def _new_run(self, run_id: str, namespace: str | None, now: datetime, *,
                 dry_run: bool) -> dict[str, Any]:
        from graphmem.consolidation.report import build_report

        plan = Plan(run_id, now)
        planner = Planner(self.core, plan, self.progress)
        for ns in [namespace] if namespace else self.store.namespaces():
            planner.namespace(ns)
        check = self._retrieval_check(plan)
        status = ("dry_run" if dry_run else
                  "pending_approval" if check["held_on"] > self.config.max_recall_loss else
                  "running")
        data: dict[str, Any] = {
            "id": run_id, "namespace": namespace, "status": status, "dry_run": dry_run,
            "created_at": now.isoformat(), "candidates": plan.candidates,
            "clusters": plan.clusters, "unclustered": plan.unclustered, "done": [],
            "retrieval_check": check,
        }
        data["report"] = build_report(data, plan.tiers_before, plan.archived_tiers, now,
                                      self.core.config.tiers)
        return data

    def _retrieval_check(self, plan: Plan) -> dict[str, Any]:
        from graphmem.consolidation.check import retrieval_check

        return retrieval_check(self.core, plan)

    # -- applying ----------------------------------------------------------------------------
    def _apply(self, data: dict[str, Any]) -> None:
        now = self.core.clock()
        saved = time.monotonic()
        done = set(data["done"])
        for c in data["clusters"]:
            if c["key"] in done:
                continue
            if c["archive"]:
                vec = self.core.embedder.embed([c["summary"]["content"]])[0]
                with self.lock:  # one short step: writers wait for one cluster at most
                    # the plan was made without the lock: members deleted, pinned or archived
                    # since then are left as they are now
                    found = self.store.get_memories(c["namespace"], c["members"])
                    self.core.apply(cluster_batch(self.core, data["id"], c, vec, now, found))
            data["done"].append(c["key"])
            done.add(c["key"])
            if not c["archive"]:
                continue
            self.progress("apply", len(done), len(data["clusters"]))
            if time.monotonic() - saved > 2.0:  # progress every few seconds: re-applying a
                self._save(data)               # cluster after a crash changes nothing
                self._heartbeat()
                saved = time.monotonic()
        data["status"] = data["report"]["status"] = "applied"
        data["finished_at"] = now.isoformat()
        self._save(data)

    # -- helpers -----------------------------------------------------------------------------
    def _save(self, data: dict[str, Any]) -> None:
        with self.lock:  # a record save is one short step, as a cluster is
            self.core.save_run(data)

    def _get(self, run_id: str) -> dict[str, Any]:
        data = self.store.get_run(run_id)
        if data is None:
            raise NotFoundError(f"no consolidation run {run_id!r}")
        return data

    @contextmanager
    def _lease(self, run_id: str) -> Iterator[None]:
        """The one-run-at-a-time lease, renewed by every saved step (``_heartbeat``)."""
        lease = Lease(self.store, LEASE, run_id, timedelta(minutes=self.config.lease_minutes),
                      self.core.clock, "consolidation")
        holder = lease.take()
        if holder is not None:
            raise ConflictError(f"another consolidation run is in progress ({holder})")
        self._held = lease
        try:
            yield
        finally:
            lease.release()

    def _heartbeat(self) -> None:
        assert self._held is not None  # only called inside _lease
        self._held.renew()
