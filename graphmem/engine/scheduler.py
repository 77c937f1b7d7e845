"""Background jobs on APScheduler: the maintenance job at an interval (the server starts it;
consolidation joins it later). One instance at a time, missed runs coalesced."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from graphmem.config import GraphMemConfig

log = logging.getLogger(__name__)

MAINTENANCE_JOB = "graphmem-maintenance"
CONSOLIDATION_JOB = "graphmem-consolidation"


class Jobs(Protocol):
    """What the scheduler runs: the facade (``GraphMemory``) satisfies it.

    Example:
        >>> import tempfile
        >>> from graphmem import GraphMemory
        >>> from graphmem.bench.scale import RandomEmbedder
        >>> mem = GraphMemory.open(tempfile.mkdtemp(), embedder=RandomEmbedder())
        >>> scheduler = start_scheduler(mem, interval_minutes=60, consolidation=False)
        >>> [job.id for job in scheduler.get_jobs()]
        ['graphmem-maintenance']
        >>> scheduler.shutdown(); mem.close()
    """

    config: GraphMemConfig

    def maintain(self) -> Any: ...

    def consolidate(self) -> Any: ...


def _maintain(mem: Jobs) -> None:
    try:
        report = mem.maintain()
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
    consolidation interval or cron. Call ``.shutdown()`` to stop it."""
    minutes = interval_minutes or mem.config.dynamics.maintenance_interval_minutes
    scheduler = BackgroundScheduler(**scheduler_options)
    scheduler.add_job(_maintain, "interval", args=[mem], seconds=minutes * 60,
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
