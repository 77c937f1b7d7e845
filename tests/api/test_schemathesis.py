"""Schemathesis against the OpenAPI document (bounded examples): no 5xx, and every response
matches the schema."""

from __future__ import annotations

import tempfile
from pathlib import Path

import schemathesis
from graphmem.api.app import create_app
from graphmem.api.settings import Settings
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from graphmem import GraphMemory
from tests.conftest import Clock, FakeEmbedder

_DIR = Path(tempfile.mkdtemp(prefix="graphmem-schemathesis-"))
_MEM = GraphMemory.open(_DIR / "data", clock=Clock(), embedder=FakeEmbedder())
_MEM.store("seeded memory about deploys", namespace="ns")
APP = create_app(Settings(data=str(_DIR / "data"), keys_file=_DIR / "keys.db",
                          dev_no_auth=True, scheduler=False), memory=_MEM)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms(case: schemathesis.Case) -> None:
    """Generated requests, valid and not: never a 5xx, every status documented, every body
    as the schema says."""
    case.call_and_validate(checks=[not_a_server_error, status_code_conformance,
                                   content_type_conformance, response_schema_conformance])
