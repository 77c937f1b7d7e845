"""The FastAPI application: routes under /v1, API keys scoped to namespaces, one error handler.

Routes are plain ``def``: FastAPI runs them in its thread pool, so embedding and store work
stay off the event loop. ``create_app(settings)`` opens one ``GraphMemory`` in the lifespan
(model loaded once, store opened, the maintenance scheduler started) and closes it on shutdown.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Annotated, Any, Literal

from fastapi import Depends, FastAPI, Header, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse, Response
from graphmem.api import schemas as s
from graphmem.api.keys import KeyStore, Principal
from graphmem.api.settings import Settings
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphmem.errors import GraphMemError, LimitExceededError, NotFoundError
from graphmem.memory import GraphMemory
from graphmem.models import MemoryInput, RelationSpec

log = logging.getLogger(__name__)


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


_FIELD_CODES = (("content", "invalid_content"), ("query", "invalid_input"),
                ("importance", "invalid_importance"), ("namespace", "invalid_namespace"),
                ("relations", "invalid_relation"))


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _bearer(headers: dict[bytes, bytes]) -> str:
    """The API key of an ``Authorization: Bearer <key>`` header (raw ASGI headers), or ""."""
    auth = headers.get(b"authorization", b"").decode("latin-1")
    return auth[len("Bearer "):].strip() if auth.startswith("Bearer ") else ""


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def principal(request: Request,
              authorization: Annotated[str | None, Header()] = None) -> Principal:
    """Who is calling: the API key's namespaces and role (401 without a valid key)."""
    settings: Settings = request.app.state.settings
    if settings.dev_no_auth:
        return Principal("dev", frozenset({"*"}), "admin")
    if not authorization or not authorization.startswith("Bearer "):
        raise ApiError(401, "unauthorized", "send an API key: Authorization: Bearer <key>")
    found = request.app.state.keys.verify(authorization[len("Bearer "):].strip())
    if found is None:
        raise ApiError(401, "unauthorized", "unknown or revoked API key")
    return found


Auth = Annotated[Principal, Depends(principal)]


class _StoreCollector:
    """Scraped on /metrics: memories per namespace, tier and status; transitions so far."""

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
        mem = self.get()
        if mem is not None:
            size_total: dict[tuple[str, ...], float] = {}
            move_total: dict[tuple[str, ...], float] = {}
            for ns in mem.namespaces():
                prefix = (ns,) if self.namespaces else ()
                for (tier, status, kind), count in mem.counts(namespace=ns).memories.items():
                    key = (*prefix, tier.value, status.value, str(kind))
                    size_total[key] = size_total.get(key, 0) + count
                for kind, a, b, total, _recent in mem.transition_counts(namespace=ns):
                    key = (*prefix, kind, a.value, b.value)
                    move_total[key] = move_total.get(key, 0) + total
            for key, value in size_total.items():
                sizes.add_metric(list(key), value)
            for key, value in move_total.items():
                moves.add_metric(list(key), value)
            for run_status, count in mem.run_counts().items():
                runs.add_metric([run_status], count)
        yield sizes
        yield moves
        yield runs


class McpAuth:
    """The MCP endpoint behind the same API keys: the key's namespaces and role bound to the
    request (``graphmem.mcp_server.PRINCIPAL``) for the tools to check."""

    def __init__(self, app: Any, settings: Settings, keys: KeyStore) -> None:
        self.app, self.settings, self.keys = app, settings, keys

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from graphmem.mcp_server import PRINCIPAL

        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        who: Principal | None = Principal("dev", frozenset({"*"}), "admin")
        if not self.settings.dev_no_auth:
            key = _bearer(dict(scope.get("headers") or []))
            who = self.keys.verify(key) if key else None
        if who is None:
            response = _error(401, "unauthorized", "send an API key: Authorization: Bearer <key>")
            await response(scope, receive, send)
            return
        token = PRINCIPAL.set(who)
        try:
            await self.app(scope, receive, send)
        finally:
            PRINCIPAL.reset(token)
class Guard:
    """Outermost ASGI layer: the key is checked before any body is read (``/v1`` and
    ``/mcp``), and a body is read only up to ``max_body_bytes`` whatever its framing (a
    chunked upload has no Content-Length to trust). An unauthenticated client can no longer
    make the server buffer anything."""

    def __init__(self, app: Any, settings: Settings, keys: KeyStore) -> None:
        self.app, self.settings, self.keys = app, settings, keys

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        headers = dict(scope.get("headers") or [])
        if self.settings.dev_no_auth:  # no keys: only loopback names (no DNS rebinding)
            host = headers.get(b"host", b"").decode("latin-1").rsplit(":", 1)[0].strip("[]")
            if host not in ("127.0.0.1", "localhost", "::1") and not host.startswith("127."):
                await _error(421, "misdirected_request", "without API keys only loopback "
                             "host names are served")(scope, receive, send)
                return
        if not self.settings.dev_no_auth and path.startswith(("/v1/", "/mcp")):
            key = _bearer(headers)
            if not key or self.keys.verify(key) is None:
                message = ("send an API key: Authorization: Bearer <key>" if not key
                           else "unknown or revoked API key")
                await _error(401, "unauthorized", message)(scope, receive, send)
                return
        limit = self.settings.max_body_bytes
        length = headers.get(b"content-length", b"")
        if length.isdigit() and int(length) > limit:
            await _error(413, "body_too_large", f"request body over {limit} bytes")(
                scope, receive, send)
            return
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > limit:
                await _error(413, "body_too_large", f"request body over {limit} bytes")(
                    scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


NsQuery = Annotated[str, Query(description="the namespace", examples=["agent-42"],
                               pattern=s.NS_PATTERN)]
MemoryIdPath = Annotated[str, Path(description="a memory id", pattern=s.ID_PATTERN)]


def create_app(settings: Settings, *, memory: GraphMemory | None = None) -> FastAPI:
    if settings.dev_no_auth and not _is_loopback(settings.host):
        raise GraphMemError("dev mode without API keys is only allowed on a loopback host")
    keys = KeyStore(settings.keys_path())
    registry = CollectorRegistry()
    requests = Counter("graphmem_requests_total", "HTTP requests", ["route", "method",
                                                                    "status"],
                       registry=registry)
    latency = Histogram("graphmem_request_seconds", "HTTP request latency", ["route"],
                        registry=registry)
    state: dict[str, Any] = {} if memory is None else {"mem": memory}
    registry.register(_StoreCollector(lambda: state.get("mem")))
    public = CollectorRegistry()  # --metrics-public: no namespace names, no key
    for collector in (requests, latency):
        public.register(collector)
    public.register(_StoreCollector(lambda: state.get("mem"), namespaces=False))

    from graphmem.mcp_server import build_server

    mcp = build_server(lambda: state["mem"])
    mcp_app = mcp.streamable_http_app(streamable_http_path="/", stateless_http=True,
                                      json_response=True)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        mem = memory or GraphMemory.open(settings.data, config=settings.memory_config())
        state["mem"] = mem

        def warm_up() -> None:  # load the model before serving; /readyz reports a failure
            try:
                mem.embedder.embed(["graphmem is warming up"])
                state["model_ready"] = True
            except Exception as exc:
                state["model_error"] = f"the embedding model did not load: {exc}"
                log.error("the embedding model did not load: %s", exc)

        import anyio.to_thread

        await anyio.to_thread.run_sync(warm_up)  # off the event loop, before the first request
        scheduler = None
        if settings.scheduler:
            from graphmem.scheduler import start_scheduler

            scheduler = start_scheduler(mem)
        try:
            if state.get("mcp_ran"):  # a session manager runs once per process (test clients
                yield                 # may enter the lifespan again: MCP stays off then)
            else:
                state["mcp_ran"] = True
                async with mcp.session_manager.run():
                    yield
        finally:
            if scheduler is not None:
                scheduler.shutdown(wait=False)
            if memory is None:
                mem.close()

    app = FastAPI(title="graphmem", version="0.1.0", lifespan=lifespan,
                  description="Long-term memory for LLM agents, backed by a property graph. "
                              "Every route is scoped to a namespace the API key may use.",
                  responses={code: {"model": s.ErrorOut, "description": text} for code, text in (
                      (400, "malformed request"), (401, "no or unknown API key"),
                      (403, "namespace or role not allowed"),
                      (404, "no such memory in this namespace"), (409, "id already taken"),
                      (413, "request body too large"), (422, "invalid input, nothing written"),
                      (503, "the store is unavailable"))})

    app.state.settings = settings
    app.state.keys = keys

    def mem() -> GraphMemory:
        m: GraphMemory = state["mem"]
        return m

    # -- errors, limits, metrics ------------------------------------------------------------
    @app.exception_handler(GraphMemError)
    async def graphmem_error(request: Request, exc: GraphMemError) -> JSONResponse:
        return _error(exc.http_status, exc.code, str(exc))

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {400: "bad_request", 404: "not_found", 405: "method_not_allowed"}
        response = _error(exc.status_code, codes.get(exc.status_code, "http_error"),
                          str(exc.detail))
        for name, value in (exc.headers or {}).items():
            response.headers[name] = value
        if exc.status_code == 405:  # every method the path takes (one route per method)
            from starlette.routing import Match

            allowed = sorted({m for r in request.app.router.routes
                              if r.matches(request.scope)[0] is not Match.NONE
                              for m in getattr(r, "methods", None) or ()})
            if allowed:
                response.headers["Allow"] = ", ".join(allowed)
        return response

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        loc = [str(x) for x in first.get("loc", ()) if x != "body"]
        where = ".".join(loc)
        # the schema checks what the core would: answer with the core's error codes
        code = next((c for field, c in _FIELD_CODES if field in loc), "invalid_request")
        return _error(422, code, f"{where}: {first.get('msg', 'invalid request')}"
                      if where else str(first.get("msg", "invalid request")))

    @app.middleware("http")
    async def count_requests(request: Request, call_next: Callable[..., Any]) -> Response:
        started = time.perf_counter()
        response: Response = await call_next(request)
        route = getattr(request.scope.get("route"), "path", "unmatched")
        requests.labels(route, request.method, str(response.status_code)).inc()
        latency.labels(route).observe(time.perf_counter() - started)
        return response

    def scope(who: Principal, namespace: str, role: str = "reader") -> str:
        if not who.may_use(namespace):
            raise ApiError(403, "forbidden", f"this key may not use namespace {namespace!r}")
        if not who.at_least(role):
            raise ApiError(403, "forbidden", f"this needs the {role} role; the key is "
                                             f"{who.role}")
        return namespace

    def item(x: s.MemoryItem) -> MemoryInput:
        data = x.model_dump(exclude={"relations"})
        data["relations"] = [RelationSpec(r.type, r.target_id, r.direction, r.score)
                             for r in x.relations]
        return MemoryInput(**data)

    # -- memories ----------------------------------------------------------------------------
    @app.post("/v1/memories", status_code=201, tags=["memories"],
              response_model=list[s.MemoryOut] | s.MemoryOut)
    def create_memories(body: s.MemoryCreate | s.BatchCreate, who: Auth) -> Any:
        ns = scope(who, body.namespace, "writer")
        if isinstance(body, s.BatchCreate):
            if len(body.items) > settings.max_batch:
                raise LimitExceededError(f"batch of {len(body.items)}, the limit is "
                                         f"{settings.max_batch}")
            return [m.to_dict() for m in mem().store_many([item(x) for x in body.items],
                                                          namespace=ns)]
        single = s.MemoryItem(**body.model_dump(exclude={"namespace"}))
        return mem().store_many([item(single)], namespace=ns)[0].to_dict()

    @app.get("/v1/memories/{memory_id}", response_model=s.MemoryOut, tags=["memories"])
    def get_memory(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth) -> Any:
        return mem().get(memory_id, namespace=scope(who, namespace)).to_dict()

    @app.patch("/v1/memories/{memory_id}", response_model=s.MemoryOut, tags=["memories"])
    def patch_memory(memory_id: MemoryIdPath, namespace: NsQuery, body: s.MemoryPatch,
                     who: Auth) -> Any:
        return mem().update(memory_id, namespace=scope(who, namespace, "writer"),
                            **body.model_dump(exclude_none=True)).to_dict()

    @app.delete("/v1/memories/{memory_id}", status_code=204, tags=["memories"])
    def delete_memory(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth) -> Response:
        mem().delete(memory_id, namespace=scope(who, namespace, "writer"))
        return Response(status_code=204)

    @app.post("/v1/memories/{memory_id}/pin", response_model=s.MemoryOut, tags=["memories"])
    def pin(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth) -> Any:
        return mem().pin(memory_id, namespace=scope(who, namespace, "writer")).to_dict()

    @app.post("/v1/memories/{memory_id}/unpin", response_model=s.MemoryOut, tags=["memories"])
    def unpin(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth) -> Any:
        return mem().unpin(memory_id, namespace=scope(who, namespace, "writer")).to_dict()

    @app.post("/v1/memories/{memory_id}/restore", response_model=s.MemoryOut,
              tags=["memories"])
    def restore(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth) -> Any:
        return mem().restore(memory_id, namespace=scope(who, namespace, "writer")).to_dict()

    @app.post("/v1/memories/{memory_id}/feedback", response_model=s.MemoryOut,
              tags=["memories"])
    def feedback(memory_id: MemoryIdPath, namespace: NsQuery, body: s.FeedbackIn, who: Auth) -> Any:
        return mem().feedback(memory_id, namespace=scope(who, namespace, "writer"),
                              **body.model_dump()).to_dict()

    # -- relations ---------------------------------------------------------------------------
    @app.post("/v1/relations", status_code=201, response_model=s.RelationOut,
              tags=["relations"])
    def create_relation(body: s.RelationCreate, who: Auth) -> Any:
        return mem().relate(body.source_id, body.target_id, body.type,
                            namespace=scope(who, body.namespace, "writer"),
                            score=body.score).to_dict()

    @app.get("/v1/memories/{memory_id}/relations", response_model=list[s.RelationOut],
             tags=["relations"])
    def list_relations(memory_id: MemoryIdPath, namespace: NsQuery, who: Auth) -> Any:
        return [r.to_dict() for r in mem().relations(memory_id,
                                                     namespace=scope(who, namespace))]

    @app.delete("/v1/relations", status_code=204, tags=["relations"])
    def delete_relation(body: s.RelationDelete, who: Auth) -> Response:
        mem().unrelate(body.source_id, body.target_id, body.type,
                       namespace=scope(who, body.namespace, "writer"))
        return Response(status_code=204)

    # -- retrieval ---------------------------------------------------------------------------
    def _options(body: s.SearchIn) -> dict[str, Any]:
        return {"limit": body.limit, "tiers": body.tiers, "min_similarity":
                body.min_similarity, "strategy": body.strategy, "depth": body.depth,
                "filters": (body.filters.model_dump(exclude_none=True)
                            if body.filters is not None else None),
                "include_archived": body.include_archived}

    @app.post("/v1/search", response_model=list[s.ResultOut], tags=["retrieval"])
    def search(body: s.SearchIn, who: Auth) -> Any:
        results = mem().retrieve(body.query, namespace=scope(who, body.namespace),
                                 record_access=body.record_access, **_options(body))
        out = [r.to_dict() for r in results]
        if not body.explain:
            for r in out:
                r["terms"] = r["path"] = None
        return out

    @app.post("/v1/search/index", response_model=list[s.IndexEntryOut], tags=["retrieval"])
    def search_index(body: s.SearchIn, who: Auth) -> Any:
        return [e.to_dict() for e in mem().search_index(
            body.query, namespace=scope(who, body.namespace), **_options(body))]

    @app.get("/v1/search/timeline", response_model=list[s.MemoryOut], tags=["retrieval"])
    def timeline(anchor_id: Annotated[str, Query(pattern=s.ID_PATTERN)], namespace: NsQuery,
                 who: Auth, before: Annotated[int, Query(ge=0, le=100)] = 3,
                 after: Annotated[int, Query(ge=0, le=100)] = 3) -> Any:
        return [m.to_dict() for m in mem().timeline(anchor_id, namespace=scope(who, namespace),
                                                    before=before, after=after)]

    @app.post("/v1/entries", response_model=list[s.MemoryOut], tags=["retrieval"])
    def entries(body: s.EntriesIn, who: Auth) -> Any:
        return [m.to_dict() for m in mem().entries(body.ids,
                                                   namespace=scope(who, body.namespace))]

    # -- consolidation -----------------------------------------------------------------------
    def _run_out(run: Any) -> dict[str, Any]:
        return {"id": run.id, "status": run.status, "report": run.report}

    @app.post("/v1/consolidation/runs", status_code=201, tags=["consolidation"])
    def start_run(body: s.RunIn, who: Auth) -> dict[str, Any]:
        if body.namespace is None and "*" not in who.namespaces:
            raise ApiError(403, "forbidden", "a run over every namespace needs a key for *")
        # a dry run is saved and costs a whole clustering: never a reader's to start
        role = "writer" if body.dry_run else "admin"
        if body.namespace is not None:
            scope(who, body.namespace, role)
        elif not who.at_least(role):
            raise ApiError(403, "forbidden", f"this needs the {role} role; the key is "
                                             f"{who.role}")
        return _run_out(mem().consolidate(body.namespace, dry_run=body.dry_run))

    @app.get("/v1/consolidation/runs", tags=["consolidation"])
    def list_runs(who: Auth) -> list[dict[str, Any]]:
        return [r for r in mem().runs() if who.may_use(r["namespace"] or "*")]

    @app.get("/v1/consolidation/runs/{run_id}", tags=["consolidation"], response_model=None)
    def get_run(run_id: str, who: Auth,
                format: Literal["json", "md", "html"] = "json") -> Any:
        data = _visible_run(who, run_id)
        if format == "json":
            return {"id": data["id"], "status": data["status"], "report": data["report"]}
        text = mem().report(run_id, format)
        return Response(text, media_type="text/html" if format == "html" else "text/markdown")

    @app.post("/v1/consolidation/runs/{run_id}/approve", tags=["consolidation"])
    def approve_run(run_id: str, who: Auth) -> dict[str, Any]:
        _visible_run(who, run_id, "admin")
        return _run_out(mem().approve(run_id))

    @app.post("/v1/consolidation/runs/{run_id}/rollback", tags=["consolidation"])
    def rollback_run(run_id: str, who: Auth) -> dict[str, Any]:
        _visible_run(who, run_id, "admin")
        return _run_out(mem().rollback(run_id))

    def _visible_run(who: Principal, run_id: str, role: str = "reader") -> dict[str, Any]:
        try:
            data = mem().run(run_id)
        except NotFoundError:
            data = None
        if data is None or not who.may_use(data.get("namespace") or "*"):
            raise NotFoundError(f"no consolidation run {run_id!r}")
        if not who.at_least(role):
            raise ApiError(403, "forbidden", f"this needs the {role} role")
        return data

    @app.get("/v1/stats", tags=["operations"])
    def stats(namespace: NsQuery, who: Auth) -> dict[str, Any]:
        return mem().stats(namespace=scope(who, namespace))

    # -- health, readiness, metrics ----------------------------------------------------------
    @app.get("/healthz", tags=["operations"])
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/readyz", tags=["operations"])
    def readyz() -> JSONResponse:
        """Ready when the store answers a query and the embedding model is loaded (the
        first search would otherwise wait for it)."""
        try:
            mem().ping()
        except GraphMemError as exc:
            return _error(503, "not_ready", str(exc))
        if not state.get("model_ready"):
            why = state.get("model_error") or "the embedding model is still loading"
            return _error(503, "not_ready", why)
        return JSONResponse({"status": "ready"})

    app.mount("/mcp", McpAuth(mcp_app, settings, keys))
    app.add_middleware(Guard, settings=settings, keys=keys)

    @app.get("/metrics", tags=["operations"], response_class=PlainTextResponse)
    def metrics(request: Request,
                authorization: Annotated[str | None, Header()] = None) -> Response:
        """Prometheus metrics. Needs a key for every namespace (``*``): the series name
        namespaces. ``--metrics-public`` serves totals without namespace names to anyone."""
        if settings.metrics_public:
            return Response(generate_latest(public), media_type=CONTENT_TYPE_LATEST)
        who = principal(request, authorization)
        if "*" not in who.namespaces:
            raise ApiError(403, "forbidden", "metrics name every namespace: they need a key "
                                             "for all namespaces (*)")
        return Response(generate_latest(registry), media_type=CONTENT_TYPE_LATEST)

    return app
