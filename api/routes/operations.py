"""Operations: /v1/stats, /healthz, /readyz and Prometheus /metrics."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from graphmem.api.auth import authorize
from graphmem.api.deps import Auth, Mem, NsQuery, caller
from graphmem.errors import ForbiddenError, GraphMemError
from graphmem.memory import GraphMemory

router = APIRouter(tags=["operations"])


def error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


@router.get("/v1/stats")
def stats(namespace: NsQuery, who: Auth, mem: Mem) -> dict[str, Any]:
    return mem.stats(namespace=authorize(who, namespace))


@router.get("/v1/whoami")
def whoami(who: Auth, mem: Mem) -> dict[str, Any]:
    """The calling key's role and the namespaces it may use (those that hold memories, and
    every one it names); ``all_namespaces`` when it may use any."""
    known = set(mem.namespaces()) | {n for n in who.namespaces if n != "*"}
    return {"key_id": who.key_id, "role": who.role, "all_namespaces": "*" in who.namespaces,
            "namespaces": sorted(n for n in known if who.may_use(n))}


@router.get("/v1/transitions")
def transitions(namespace: NsQuery, who: Auth, mem: Mem,
                limit: Annotated[int, Query(ge=1, le=10_000)] = 200,
                since: Annotated[datetime | None, Query()] = None) -> list[dict[str, Any]]:
    """The namespace's latest tier transitions with their reasons, newest first."""
    return [t.to_dict() for t in mem.transitions(namespace=authorize(who, namespace),
                                                 limit=limit, since=since)]


@router.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz")
def readyz(request: Request, mem: Mem) -> JSONResponse:
    """Ready when the store answers a query and the embedding model is loaded (the first
    search would otherwise wait for it)."""
    try:
        mem.ping()
    except GraphMemError as exc:
        return error(503, "not_ready", str(exc))
    state = request.app.state
    if not getattr(state, "model_ready", False):
        why = getattr(state, "model_error", None) or "the embedding model is still loading"
        return error(503, "not_ready", why)
    return JSONResponse({"status": "ready"})


@router.get("/metrics", response_class=PlainTextResponse)
def metrics(request: Request, authorization: Annotated[str | None, Header()] = None
            ) -> Response:
    """Prometheus metrics. Needs a key for every namespace (``*``): the series name
    namespaces. ``--metrics-public`` serves totals without namespace names to anyone."""
    state = request.app.state
    if state.settings.metrics_public:
        return Response(generate_latest(state.public_registry), media_type=CONTENT_TYPE_LATEST)
    who = caller(request)
    if "*" not in who.namespaces:
        raise ForbiddenError("metrics name every namespace: they need a key for all "
                             "namespaces (*)")
    return Response(generate_latest(state.registry), media_type=CONTENT_TYPE_LATEST)


class StoreCollector:
    """Scraped on /metrics: memories per namespace, tier and status; transitions so far.

    Example:
        >>> collector = StoreCollector(lambda: None)  # no store open yet: nothing to report
        >>> [(m.name, m.samples) for m in collector.collect()][0]
        ('graphmem_memories', [])
    """

    def __init__(self, get: Callable[[], GraphMemory | None], namespaces: bool = True) -> None:
        self.get = get
        #: False (``--metrics-public``): totals only, no namespace names
        self.namespaces = namespaces

    def describe(self) -> list[Any]:
        return []

    def collect(self) -> Any:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        ns_label = ["namespace"] if self.namespaces else []
        sizes = GaugeMetricFamily("graphmem_memories", "memories by tier, status and kind",
                                  labels=[*ns_label, "tier", "status", "kind"])
        moves = CounterMetricFamily("graphmem_transitions", "tier transitions recorded",
                                    labels=[*ns_label, "kind", "from_tier", "to_tier"])
        runs = GaugeMetricFamily("graphmem_consolidation_runs", "consolidation runs by status",
                                 labels=["status"])
        capture = CounterMetricFamily("graphmem_capture_events", "tool events by outcome "
                                      "(this process)", labels=[*ns_label, "outcome"])
        cache = CounterMetricFamily("graphmem_cache_requests", "hot-cache lookups by outcome "
                                    "(this process)", labels=[*ns_label, "outcome"])
        mem = self.get()
        if mem is not None:
            totals: list[Counter[tuple[str, ...]]] = [Counter() for _ in range(4)]
            size_total, move_total, capture_total, cache_total = totals
            for ns in mem.namespaces():
                prefix = (ns,) if self.namespaces else ()
                for (tier, status, kind), count in mem.counts(namespace=ns).memories.items():
                    size_total[(*prefix, tier.value, status.value, str(kind))] += count
                for kind, a, b, total, _recent in mem.transition_counts(namespace=ns):
                    move_total[(*prefix, kind, a.value, b.value)] += total
                seen = mem.activity(namespace=ns)
                for outcome in ("captured", "skipped", "dropped"):
                    capture_total[(*prefix, outcome)] += seen["capture"][outcome]
                for outcome, key in (("hit", "hits"), ("miss", "misses")):
                    cache_total[(*prefix, outcome)] += seen["cache"][key]
            families: tuple[Any, ...] = (sizes, moves, capture, cache)
            for family, counts in zip(families, totals, strict=True):
                for labels, value in counts.items():
                    family.add_metric(list(labels), value)
            for run_status, count in mem.run_counts().items():
                runs.add_metric([run_status], count)
        yield from (sizes, moves, runs, capture, cache)
