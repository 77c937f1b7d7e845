"""Responses rendered where the route runs: validated against the route's model and dumped to
JSON bytes in the worker thread, returned as a ready ``Response``.

A plain-``def`` route that returns dicts has FastAPI validate them in a second hop to the
thread pool and serialise them on the event loop; both serial costs showed in the REST
search's profile (ADR 0053). The route keeps ``response_model=`` for the OpenAPI schema;
FastAPI passes a ``Response`` through untouched, so the check here is the same model's.
"""

from __future__ import annotations

from typing import Any

from fastapi import Response
from pydantic import TypeAdapter


class Rendered:
    """One response model's validator and JSON writer (built once, per route).

    Example:
        >>> from graphmem.api.schemas import IndexEntryOut
        >>> r = Rendered(list[IndexEntryOut])([])
        >>> r.status_code, r.body, r.media_type
        (200, b'[]', 'application/json')
    """

    def __init__(self, model: Any, status_code: int = 200) -> None:
        self.adapter: TypeAdapter[Any] = TypeAdapter(model)
        self.status_code = status_code

    def __call__(self, payload: Any) -> Response:
        """``payload`` (dicts as the core's ``to_dict`` gives them) checked against the model
        (a ``ValidationError``, a 500, when the server broke its own contract) and dumped."""
        body = self.adapter.dump_json(self.adapter.validate_python(payload))
        return Response(body, status_code=self.status_code, media_type="application/json")
