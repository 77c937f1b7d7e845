"""Background jobs on APScheduler: the maintenance job at an interval (the server starts it;
consolidation joins it later). One instance at a time, missed runs coalesced; one replica
runs maintenance per interval (a lease in the store, ``MaintenanceJob``)."""

from __future__ import annotations

import logging
import os
import socket
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from graphmem.config import GraphMemConfig
from graphmem.store.base import MemoryStore

if TYPE_CHECKING:
    from graphmem.consolidation import ConsolidationRun
    from graphmem.engine.maintenance import MaintenanceReport

log = logging.getLogger(__name__)

MAINTENANCE_JOB = "graphmem-maintenance"
CONSOLIDATION_JOB = "graphmem-consolidation"
#: the store lease of the maintenance schedule: held by the replica that ran this interval
SCHEDULE_LEASE = "maintenance-schedule"


class Jobs(Protocol):
    """What the scheduler runs: the facade (``GraphMemory``) satisfies it.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> scheduler = start_scheduler(mem, interval_minutes=60, consolidation=False)
        >>> [job.id for job in scheduler.get_jobs()]
        ['graphmem-maintenance']
        >>> scheduler.shutdown(); mem.close()
    """

    config: GraphMemConfig
    backend: MemoryStore
    clock: Callable[[], datetime]

    def maintain(self) -> MaintenanceReport: ...

    def consolidate(self) -> ConsolidationRun: ...


class MaintenanceJob:
    """The scheduled maintenance run, once per interval across every replica of a store.

    Each run first takes the store's schedule lease until the interval ends (the store's
    ``acquire_lease``, the kind consolidation takes); the replica holding it renews it on
    its next run, so it keeps running maintenance, and another takes over once it missed
    one. A replica that finds the lease held, or the run itself held by a run elsewhere
    (``MaintenanceReport.skipped``), skips quietly (a debug line) and counts it.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.testing import RandomEmbedder
        >>> folder = tempfile.mkdtemp()
        >>> mem = GraphMemory.open(folder, embedder=RandomEmbedder())
        >>> one, other = MaintenanceJob(mem, 15), MaintenanceJob(mem, 15)
        >>> one(); other(); one()
        >>> (one.ran, one.skipped, other.ran, other.skipped)
        (2, 0, 0, 1)
        >>> mem.close()
    """

    def __init__(self, mem: Jobs, interval_minutes: float) -> None:
        self.mem = mem
        self.interval = timedelta(minutes=interval_minutes)
        #: stable across runs: the holder renews its own lease
        self.owner = f"schedule-{uuid.uuid4().hex[:12]}@{socket.gethostname()}:{os.getpid()}"
        #: runs done / skipped (another replica ran this interval, or runs now)
        self.ran = 0
        self.skipped = 0

    def __call__(self) -> None:
        try:
            now = self.mem.clock()
            if not self.mem.backend.acquire_lease(SCHEDULE_LEASE, self.owner,
                                                  now + self.interval, now):
                self.skipped += 1
                log.debug("maintenance skipped: another replica ran it this interval (%s)",
                          SCHEDULE_LEASE)
                return
            report = self.mem.maintain()
            if getattr(report, "skipped", None):
                self.skipped += 1
                log.debug("maintenance skipped: %s", report.skipped)
                return
            self.ran += 1
            log.info("maintenance: %d scanned, %s", report.scanned, report.counts())
        except Exception:  # a failed run is logged; the next one tries again
            log.exception("maintenance run failed")


def _consolidate(mem: Jobs) -> None:
    try:
        run = mem.consolidate()
        log.info("consolidation %s: %s", run.id, run.status)
    except Exception:  # e.g. another replica holds the lease: the next run tries again
        log.exception("consolidation run failed")


def start_scheduler(mem: Jobs, *, interval_minutes: float | None = None,
                    consolidation: bool = True,
                    **scheduler_options: Any) -> BackgroundScheduler:
    """Start a background scheduler: ``mem.maintain()`` every interval (default from
    ``DynamicsConfig.maintenance_interval_minutes``) and ``mem.consolidate()`` on the
    consolidation interval or cron. Call ``.shutdown()`` to stop it. Maintenance runs on
    one replica per interval (``MaintenanceJob``: the job's ``func``)."""
    minutes = interval_minutes or mem.config.dynamics.maintenance_interval_minutes
    # the jobs' own threads, named like every other graphmem thread (APScheduler's default
    # pool is ten unnamed workers); two, so consolidation never holds maintenance back
    scheduler_options.setdefault("executors", {"default": ThreadPoolExecutor(
        2, pool_kwargs={"thread_name_prefix": "graphmem-job"})})
    scheduler = BackgroundScheduler(**scheduler_options)
    scheduler.add_job(MaintenanceJob(mem, minutes), "interval", seconds=minutes * 60,
                      id=MAINTENANCE_JOB, max_instances=1, coalesce=True,
                      replace_existing=True)
    if consolidation:
        cfg = mem.config.consolidation
        trigger: Any = (CronTrigger.from_crontab(cfg.cron) if cfg.cron else
                        IntervalTrigger(hours=cfg.interval_hours))
        scheduler.add_job(_consolidate, trigger, args=[mem], id=CONSOLIDATION_JOB,
                          max_instances=1, coalesce=True, replace_existing=True)
    scheduler.start()
    return scheduler
