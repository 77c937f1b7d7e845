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
from graphmem.rules.validation import INVALID_VALIDITY, METADATA_TOO_LARGE
from tests.conftest import Clock, FakeEmbedder

_DIR = Path(tempfile.mkdtemp(prefix="graphmem-schemathesis-"))
_MEM = GraphMemory.open(_DIR / "data", clock=Clock(), embedder=FakeEmbedder())
_MEM.store("seeded memory about deploys", namespace="ns")
APP = create_app(Settings(data=str(_DIR / "data"), keys_file=_DIR / "keys.db",
                          scheduler=False), memory=_MEM)
_KEYS = {role: KeyStore(_DIR / "keys.db").create(["*"], role)[1]
         for role in ("admin", "reader")}
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)


#: the rules of validation that JSON Schema cannot state (documented on the fields): a
#: memory never relates to itself; a listing cursor is opaque, valid only as handed out; a
#: validity period ends after it starts; delete_all's confirm repeats the namespace;
#: a memory does not supersede itself
SEMANTIC = {("invalid_relation", "a memory cannot relate to itself"),
            ("invalid_input", INVALID_CURSOR), ("invalid_input", INVALID_VALIDITY),
            ("invalid_input", UNCONFIRMED_DELETE), ("invalid_input", SELF_SUPERSEDE)}
#: ... and the rules whose message names the numbers: metadata's bytes as UTF-8 JSON
#: (JSON Schema counts characters, not bytes: stated in the description and ``x-max-bytes``)
SEMANTIC_PREFIXES = {("limit_exceeded", METADATA_TOO_LARGE)}


def schema_valid_is_accepted(ctx: Any, response: Any, case: schemathesis.Case) -> bool | None:
    """``positive_data_acceptance``, except for the documented semantic rules above."""
    if response.status_code == 422:
        error = response.json().get("error", {})
        code, message = error.get("code"), error.get("message", "")
        if (code, message) in SEMANTIC or any(
                code == c and message.startswith(p) for c, p in SEMANTIC_PREFIXES):
            return None
    return positive_data_acceptance(ctx, response, case)


def _conforms(case: schemathesis.Case, role: str) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {_KEYS[role]}"},
                           checks=[not_a_server_error, status_code_conformance,
                                   content_type_conformance, response_schema_conformance,
                                   schema_valid_is_accepted, allow_header_conformance])


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms(case: schemathesis.Case) -> None:
    """Generated requests, valid and not, with an admin key: never a 5xx, every status
    documented, every body as the schema says, a 405 names what is allowed, and a request
    the schema calls valid is accepted (the document states every constraint validation
    enforces)."""
    _conforms(case, "admin")


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_api_conforms_with_a_reader_key(case: schemathesis.Case) -> None:
    """The same with a reader key: a write or an admin route is a documented 403, never a
    5xx or an undocumented status."""
    _conforms(case, "reader")
