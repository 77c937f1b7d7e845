"""The FastAPI application: routers under /v1 (``api/routes/``), API keys scoped to
namespaces (``api/auth.py``), one error handler for the one error tree.

Routes are plain ``def``: FastAPI runs them in its thread pool, so embedding and store work
stay off the event loop. ``create_app(settings)`` opens one ``GraphMemory`` in the lifespan
(model loaded once, store opened, the maintenance scheduler started) and closes it on shutdown.
"""

from __future__ import annotations

import ipaddress
import logging
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, nullcontext
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from prometheus_client import CollectorRegistry, Counter, Histogram
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphmem.api import schemas as s
from graphmem.api.auth import identify
from graphmem.api.keys import KeyStore
from graphmem.api.routes import (
    agents,
    consolidation,
    events,
    memories,
    operations,
    relations,
    retrieval,
    sessions,
)
from graphmem.api.routes.operations import StoreCollector
from graphmem.api.settings import Settings
from graphmem.errors import AuthError, GraphMemError
from graphmem.memory import GraphMemory

log = logging.getLogger(__name__)

_FIELD_CODES = (("content", "invalid_content"), ("query", "invalid_input"),
                ("importance", "invalid_importance"), ("namespace", "invalid_namespace"),
                ("relations", "invalid_relation"))
_error = operations.error


def _leaf_routes(routes: list[Any]) -> list[Any]:
    """The routes themselves: FastAPI keeps an included router as one entry."""
    out = []
    for r in routes:
        inner = getattr(r, "original_router", None)
        out.extend(_leaf_routes(list(inner.routes)) if inner is not None else [r])
    return out


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _answer(exc: GraphMemError) -> JSONResponse:
    return _error(exc.http_status, exc.code, str(exc))


class McpAuth:
    """The MCP endpoint behind the same API keys (``identify``): the key's namespaces and role
    bound to the request (``graphmem.api.mcp.PRINCIPAL``) for the tools to check.

    Example:
        >>> from graphmem.api.settings import Settings
        >>> app = create_app(Settings.from_env({}))  # doctest: +SKIP
        >>> # mounted by create_app at /mcp; a request without a key gets 401 before any tool runs
    """

    def __init__(self, app: Any, settings: Settings, keys: Callable[[], KeyStore]) -> None:
        self.app, self.settings, self.keys = app, settings, keys

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from graphmem.api.mcp import PRINCIPAL

        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        try:
            who = identify(scope, self.keys(), open=self.settings.dev_no_auth)
        except AuthError as exc:
            await _answer(exc)(scope, receive, send)
            return
        token = PRINCIPAL.set(who)
        try:
            await self.app(scope, receive, send)
        finally:
            PRINCIPAL.reset(token)


class CountRequests:
    """Requests by route, method and status, and their latency (Prometheus), as a plain
    ASGI layer: Starlette's ``BaseHTTPMiddleware`` cost the event loop a task group and a
    streamed copy of every response (~30% of its time under load). A handler that raised
    counts as the 500 it becomes.

    Example:
        >>> async def inner(scope, receive, send): ...
        >>> CountRequests(inner, requests=None, latency=None).app is inner
        True
    """

    def __init__(self, app: Any, requests: Any, latency: Any) -> None:
        self.app, self.requests, self.latency = app, requests, latency

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def counted(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, counted)
        finally:
            route = getattr(scope.get("route"), "path", "unmatched")
            self.requests.labels(route, scope["method"], str(status)).inc()
            self.latency.labels(route).observe(time.perf_counter() - started)


class Guard:
    """Outermost ASGI layer: the key is checked (``identify``) before any body is read
    (``/v1`` and ``/mcp``), and a body is read only up to ``max_body_bytes`` whatever its framing (a
    chunked upload has no Content-Length to trust). An unauthenticated client can no longer
    make the server buffer anything.

    Example:
        >>> from graphmem.api.settings import Settings
        >>> async def inner(scope, receive, send): ...
        >>> guard = Guard(inner, Settings.from_env({}), keys=lambda: None)
        >>> guard.settings.max_body_bytes > 0
        True
    """

    def __init__(self, app: Any, settings: Settings, keys: Callable[[], KeyStore]) -> None:
        self.app, self.settings, self.keys = app, settings, keys
        self.too_large = _error(413, "body_too_large",
                                f"request body over {settings.max_body_bytes} bytes")

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope.get("path", "")
        headers = dict(scope.get("headers") or [])
        if self.settings.dev_no_auth:  # no keys: only loopback names (no DNS rebinding)
            host = headers.get(b"host", b"").decode("latin-1")
            name = host[1:host.find("]")] if host.startswith("[") else host.rsplit(":", 1)[0]
            if not _is_loopback(name):  # an address, not a name that starts with "127."
                await _error(421, "misdirected_request", "without API keys only loopback "
                             "host names are served")(scope, receive, send)
                return
        if path.startswith(("/v1/", "/mcp")):  # refused before any body is read
            try:
                identify(scope, self.keys(), open=self.settings.dev_no_auth)
            except AuthError as exc:
                await _answer(exc)(scope, receive, send)
                return
        limit = self.settings.max_body_bytes
        length = headers.get(b"content-length", b"")
        if length.isdigit() and int(length) > limit:
            await self.too_large(scope, receive, send)
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
                await self.too_large(scope, receive, send)
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


def create_app(settings: Settings, *, memory: GraphMemory | None = None) -> FastAPI:
    if settings.dev_no_auth and not _is_loopback(settings.host):
        raise GraphMemError("dev mode without API keys is only allowed on a loopback host")
    # a key file is read per request (cheap, and a revocation holds at once); keys in the
    # graph database are remembered for key_cache_seconds
    keys = None if settings.keys_in_store else KeyStore(settings.keys_path(), ttl=0)
    registry = CollectorRegistry()
    requests = Counter("graphmem_requests_total", "HTTP requests", ["route", "method", "status"],
                       registry=registry)
    latency = Histogram("graphmem_request_seconds", "HTTP request latency", ["route"],
                        registry=registry)
    public = CollectorRegistry()  # --metrics-public: no namespace names, no key
    for collector in (requests, latency):
        public.register(collector)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        mem = memory or GraphMemory.open(settings.data, config=settings.memory_config())
        app.state.mem = mem
        if app.state.keys is None:  # keys in the graph database: known once it is open
            records = mem.key_records()
            if records is None:
                raise GraphMemError(f"{settings.data} keeps no API keys: set "
                                    "GRAPHMEM_KEYS_FILE")
            app.state.keys = KeyStore(records, ttl=settings.key_cache_seconds)

        def warm_up() -> None:  # load the model before serving; /readyz reports a failure
            try:
                mem.embedder.embed(["graphmem is warming up"])
                app.state.model_ready = True
            except Exception as exc:
                app.state.model_error = f"the embedding model did not load: {exc}"
                log.error("the embedding model did not load: %s", exc)

        import anyio.to_thread

        await anyio.to_thread.run_sync(warm_up)  # off the event loop, before the first request
        scheduler = None
        if settings.scheduler:
            from graphmem.engine.scheduler import start_scheduler

            scheduler = start_scheduler(mem)
        # a session manager runs once per process (test clients may enter the lifespan
        # again: MCP stays off then)
        ran, app.state.mcp_ran = getattr(app.state, "mcp_ran", False), True
        try:
            async with nullcontext() if ran else mcp.session_manager.run():
                yield
        finally:
            if scheduler is not None:
                scheduler.shutdown(wait=False)
            if memory is None:
                mem.close()

    app = FastAPI(title="graphmem", version="0.1.0", lifespan=lifespan,
                  docs_url=None, redoc_url=None,  # served offline by the viewer module
                  description="Long-term memory for LLM agents, backed by a property graph. "
                              "Every route is scoped to a namespace the API key may use.",
                  responses={code: {"model": s.ErrorOut, "description": text} for code, text in (
                      (400, "malformed request"), (401, "no or unknown API key"),
                      (403, "namespace or role not allowed"),
                      (404, "no such memory in this namespace"), (409, "id already taken"),
                      (413, "request body too large"), (422, "invalid input, nothing written"),
                      (503, "the store is unavailable"))})
    from graphmem.api.mcp import build_server

    mcp = build_server(lambda: app.state.mem)  # the lifespan runs its session manager
    app.state.settings, app.state.keys = settings, keys
    app.state.mem = memory
    app.state.registry, app.state.public_registry = registry, public
    registry.register(StoreCollector(lambda: app.state.mem))
    public.register(StoreCollector(lambda: app.state.mem, namespaces=False))

    # -- errors, limits, metrics ------------------------------------------------------------
    @app.exception_handler(GraphMemError)
    async def graphmem_error(request: Request, exc: GraphMemError) -> JSONResponse:
        return _answer(exc)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {400: "bad_request", 404: "not_found", 405: "method_not_allowed"}
        response = _error(exc.status_code, codes.get(exc.status_code, "http_error"),
                          str(exc.detail))
        response.headers.update(exc.headers or {})
        if exc.status_code == 405:  # every method the path takes (one route per method)
            from starlette.routing import Match

            allowed = sorted({m for r in _leaf_routes(request.app.router.routes)
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

    app.add_middleware(CountRequests, requests=requests, latency=latency)
    for router in (agents.router, memories.router, relations.router, retrieval.router,
                   consolidation.router, operations.router, events.router):
        app.include_router(router)
    app.include_router(sessions.router)  # the session context (issue 48)
    from graphmem.api import viewer

    viewer.install(app)  # /viewer, its static files, /docs and /redoc: nothing from a CDN
    mcp_app = mcp.streamable_http_app(streamable_http_path="/", stateless_http=True,
                                      json_response=True)
    app.mount("/mcp", McpAuth(mcp_app, settings, lambda: app.state.keys))
    app.add_middleware(Guard, settings=settings, keys=lambda: app.state.keys)
    return app
