"""The Memory Viewer (``/viewer``) and the offline API docs (``/docs``, ``/redoc``).

The viewer is a static page shipped in the wheel (``static/``: HTML, CSS, one script, and the
vendored Cytoscape.js, Swagger UI and ReDoc with their licences). It calls the same ``/v1``
routes agents use, with the key the user signs in with (kept in the tab's sessionStorage),
so every request passes the same key, namespace and role checks. Nothing loads from the
internet (ADR 0009).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC = Path(str(files("graphmem.api.viewer") / "static"))
VENDOR = "/viewer/static/vendor"
#: the viewer's page may load only its own files; the key never leaves in a Referer
HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; connect-src 'self'; frame-src 'self' data:; "
        "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"),
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}

router = APIRouter(include_in_schema=False)


@router.get("/viewer", response_class=HTMLResponse)
def viewer_page() -> HTMLResponse:
    return HTMLResponse((STATIC / "viewer.html").read_text(encoding="utf-8"), headers=HEADERS)


@router.get("/docs", response_class=HTMLResponse)
def swagger_ui() -> HTMLResponse:
    return get_swagger_ui_html(openapi_url="/openapi.json", title="graphmem API",
                               swagger_js_url=f"{VENDOR}/swagger-ui/swagger-ui-bundle.js",
                               swagger_css_url=f"{VENDOR}/swagger-ui/swagger-ui.css",
                               swagger_favicon_url=f"{VENDOR}/swagger-ui/favicon-32x32.png")


@router.get("/redoc", response_class=HTMLResponse)
def redoc() -> HTMLResponse:
    return get_redoc_html(openapi_url="/openapi.json", title="graphmem API",
                          redoc_js_url=f"{VENDOR}/redoc/redoc.standalone.js",
                          redoc_favicon_url=f"{VENDOR}/swagger-ui/favicon-32x32.png",
                          with_google_fonts=False)


def _bearer_in_openapi(app: FastAPI) -> None:
    """Declare the API key (HTTP bearer) on every ``/v1`` operation, so the docs' *Authorize*
    button takes a key and *Try it out* sends it (``/healthz`` and ``/readyz`` stay open)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        schema = build()  # cached by FastAPI after the first call: mutated once
        schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
        if "apiKey" not in schemes:
            schemes["apiKey"] = {"type": "http", "scheme": "bearer",
                                 "description": "a graphmem API key (`graphmem keys create`)"}
            for path, operations in schema.get("paths", {}).items():
                if path.startswith("/v1/"):
                    for operation in operations.values():
                        operation["security"] = [{"apiKey": []}]
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


def install(app: FastAPI) -> None:
    """Serve the viewer, its static files and the offline docs on ``app`` (created with
    ``docs_url=None, redoc_url=None``)."""
    app.include_router(router)
    app.mount("/viewer/static", StaticFiles(directory=STATIC), name="viewer-static")
    _bearer_in_openapi(app)
