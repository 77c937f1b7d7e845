"""Schemathesis against the OpenAPI document (bounded examples): no 5xx, every response
matches the schema, and schema-valid requests are accepted."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    positive_data_acceptance,
    response_schema_conformance,
    status_code_conformance,
)

from graphmem import GraphMemory
from graphmem.api.app import create_app
from graphmem.api.keys import KeyStore
from graphmem.api.settings import Settings
from graphmem.engine.agents import INVALID_CURSOR, SELF_SUPERSEDE, UNCONFIRMED_DELETE
from graphmem.rules.validation import INVALID_VALIDITY
from tests.conftest import Clock, FakeEmbedder

_DIR = Path(tempfile.mkdtemp(prefix="graphmem-schemathesis-"))
_MEM = GraphMemory.open(_DIR / "data", clock=Clock(), embedder=FakeEmbedder())
_MEM.store("seeded memory about deploys", namespace="ns")
APP = create_app(Settings(data=str(_DIR / "data"), keys_file=_DIR / "keys.db",
                          scheduler=False), memory=_MEM)
_KEY = KeyStore(_DIR / "keys.db").create(["*"], "admin")[1]
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


#: the rules of validation that JSON Schema cannot state (documented on the fields): a
#: memory never relates to itself; a listing cursor is opaque, valid only as handed out; a
#: validity period ends after it starts; delete_all's confirm repeats the namespace;
#: a memory does not supersede itself
SEMANTIC = {("invalid_relation", "a memory cannot relate to itself"),
            ("invalid_input", INVALID_CURSOR), ("invalid_input", INVALID_VALIDITY),
            ("invalid_input", UNCONFIRMED_DELETE), ("invalid_input", SELF_SUPERSEDE)}


def schema_valid_is_accepted(ctx: Any, response: Any, case: schemathesis.Case) -> bool | None:
    """``positive_data_acceptance``, except for the documented semantic rule above."""
    if response.status_code == 422:
        error = response.json().get("error", {})
        if (error.get("code"), error.get("message")) in SEMANTIC:
            return None
    return positive_data_acceptance(ctx, response, case)


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms(case: schemathesis.Case) -> None:
    """Generated requests, valid and not: never a 5xx, every status documented, every body
    as the schema says, a 405 names what is allowed, and a request the schema calls valid is
    accepted (the document states every constraint validation enforces)."""
    case.call_and_validate(headers={"Authorization": f"Bearer {_KEY}"},
                           checks=[not_a_server_error, status_code_conformance,
                                   content_type_conformance, response_schema_conformance,
                                   schema_valid_is_accepted, allow_header_conformance])
