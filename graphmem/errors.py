"""The one error tree of graphmem.

Every error the library raises on purpose is a ``GraphMemError``; callers catch that (or a
branch of it) and never a backend's own exception type. The REST layer maps each branch to one
HTTP status in a single handler (``http_status`` below is that mapping's source of truth).

::

    GraphMemError                      500  base class, never raised bare
    ├── ValidationError                422  bad input; nothing was written
    │   ├── InvalidContentError        422  empty / oversized content
    │   ├── InvalidImportanceError     422  importance outside 0..1
    │   ├── InvalidNamespaceError      422  malformed namespace name
    │   ├── InvalidRelationError       422  unknown type, self-loop, reserved type
    │   └── LimitExceededError         422  batch / limit / depth over the configured bound
    ├── NotFoundError                  404  no such memory *in this namespace* (a memory of
    │                                       another namespace is reported exactly like a
    │                                       missing one: existence never leaks across tenants)
    ├── ConflictError                  409  an explicit id that is already taken
    ├── StoreError                     503  the storage backend failed
    │   ├── StoreLockedError           503  the data folder is owned by another process
    │   ├── MissingStoreError          503  no store where one was expected (none created)
    │   └── SchemaVersionError         503  data written by a newer graphmem / failed migration
    ├── EmbeddingError                 503  the embedding model could not be loaded or run
    ├── AuthError                      401  no API key, or one that is unknown or revoked
    │   └── ForbiddenError             403  the key may not use this namespace / needs a role
    ├── UnavailableError               503  (client) the service could not be reached
    └── ConfigError                    500  an invalid configuration
"""

from __future__ import annotations


class GraphMemError(Exception):
    """Root of every error graphmem raises on purpose."""

    code = "graphmem_error"
    http_status = 500


class ValidationError(GraphMemError):
    """Input was rejected before anything was written."""

    code = "invalid_input"
    http_status = 422


class InvalidContentError(ValidationError):
    code = "invalid_content"


class InvalidImportanceError(ValidationError):
    code = "invalid_importance"


class InvalidNamespaceError(ValidationError):
    code = "invalid_namespace"


class InvalidRelationError(ValidationError):
    code = "invalid_relation"


class LimitExceededError(ValidationError):
    code = "limit_exceeded"


class NotFoundError(GraphMemError):
    """No such memory in the namespace asked for."""

    code = "not_found"
    http_status = 404


class ConflictError(GraphMemError):
    code = "conflict"
    http_status = 409


class StoreError(GraphMemError):
    """The storage backend failed; the operation did not take effect."""

    code = "store_error"
    http_status = 503


class StoreLockedError(StoreError):
    code = "store_locked"


class MissingStoreError(StoreError):
    """The folder holds no graphmem store and creating one was not asked for."""

    code = "missing_store"


class SchemaVersionError(StoreError):
    code = "schema_version"


class EmbeddingError(GraphMemError):
    code = "embedding_error"
    http_status = 503


class AuthError(GraphMemError):
    """No API key, or one that is unknown or revoked (``.status`` 401 or 403)."""

    code = "unauthorized"
    http_status = 401

    def __init__(self, message: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.status = status or self.http_status


class ForbiddenError(AuthError):
    """The key may not use this namespace, or its role is too low."""

    code = "forbidden"
    http_status = 403


class UnavailableError(GraphMemError):
    """The client could not reach the service (connection refused, timed out, 503 after
    retries); nothing is known to have happened."""

    code = "unavailable"
    http_status = 503


class ConfigError(GraphMemError):
    code = "config_error"
    http_status = 500
