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
        └── EmbeddingMismatchError     500  the namespace's vectors were made by another
                                            embedding model (or the int8 one for the float)
"""

from __future__ import annotations


class GraphMemError(Exception):
    """Root of every error graphmem raises on purpose.

    Example:
        >>> try:
        ...     raise NotFoundError("no memory 'm1' in namespace 'ops'")
        ... except GraphMemError as exc:
        ...     (exc.code, exc.http_status)
        ('not_found', 404)
    """

    code = "graphmem_error"
    http_status = 500


class ValidationError(GraphMemError):
    """Input was rejected before anything was written.

    Example:
        >>> exc = ValidationError("limit must be 1..100")
        >>> isinstance(exc, GraphMemError), exc.code, exc.http_status
        (True, 'invalid_input', 422)
    """

    code = "invalid_input"
    http_status = 422


class InvalidContentError(ValidationError):
    """Content that is empty or longer than ``WriteConfig.max_content_chars``.

    Example:
        >>> exc = InvalidContentError("content is empty")
        >>> isinstance(exc, ValidationError), exc.code, exc.http_status
        (True, 'invalid_content', 422)
    """

    code = "invalid_content"


class InvalidImportanceError(ValidationError):
    """An importance outside 0..1.

    Example:
        >>> exc = InvalidImportanceError("importance must be within 0..1, got 1.5")
        >>> isinstance(exc, ValidationError), exc.code, exc.http_status
        (True, 'invalid_importance', 422)
    """

    code = "invalid_importance"


class InvalidNamespaceError(ValidationError):
    """A namespace name that is empty, too long or has characters outside ``[A-Za-z0-9_.:-]``.

    Example:
        >>> exc = InvalidNamespaceError("bad namespace 'a b'")
        >>> isinstance(exc, ValidationError), exc.code, exc.http_status
        (True, 'invalid_namespace', 422)
    """

    code = "invalid_namespace"


class InvalidRelationError(ValidationError):
    """An unknown relation type, a self-loop, or a type graphmem reserves for itself
    (``SUMMARIZES``, ``FOLLOWS``).

    Example:
        >>> exc = InvalidRelationError("unknown relation type 'LIKES'")
        >>> isinstance(exc, ValidationError), exc.code, exc.http_status
        (True, 'invalid_relation', 422)
    """

    code = "invalid_relation"


class LimitExceededError(ValidationError):
    """A batch, limit or depth over its configured bound.

    Example:
        >>> exc = LimitExceededError("depth must be at most 2")
        >>> isinstance(exc, ValidationError), exc.code, exc.http_status
        (True, 'limit_exceeded', 422)
    """

    code = "limit_exceeded"


class NotFoundError(GraphMemError):
    """No such memory in the namespace asked for (a memory of another namespace looks
    exactly the same).

    Example:
        >>> exc = NotFoundError("no memory 'm1' in namespace 'ops'")
        >>> isinstance(exc, GraphMemError), exc.code, exc.http_status
        (True, 'not_found', 404)
    """

    code = "not_found"
    http_status = 404


class ConflictError(GraphMemError):
    """An explicit id that is already taken (or a run in a state that forbids the call).

    Example:
        >>> exc = ConflictError("id 'm1' is taken")
        >>> isinstance(exc, GraphMemError), exc.code, exc.http_status
        (True, 'conflict', 409)
    """

    code = "conflict"
    http_status = 409


class DuplicateError(ConflictError):
    """The database refused a create: a memory with this id, or an active memory with this
    content, exists already - written by another process meanwhile (issue 45). The writer
    answers it: a taken explicit id is a 409, a twin becomes a reinforcement.

    Example:
        >>> exc = DuplicateError("unique constraint violation on node of type Memory")
        >>> isinstance(exc, ConflictError), exc.http_status
        (True, 409)
    """


class StoreError(GraphMemError):
    """The storage backend failed; the operation did not take effect.

    Example:
        >>> exc = StoreError("database is locked")
        >>> isinstance(exc, GraphMemError), exc.code, exc.http_status
        (True, 'store_error', 503)
    """

    code = "store_error"
    http_status = 503


class StoreLockedError(StoreError):
    """The data folder is owned by another process (one writer per folder).

    Example:
        >>> exc = StoreLockedError("./data is in use by pid 4242")
        >>> isinstance(exc, StoreError), exc.code, exc.http_status
        (True, 'store_locked', 503)
    """

    code = "store_locked"


class MissingStoreError(StoreError):
    """The folder holds no graphmem store and creating one was not asked for.

    Example:
        >>> exc = MissingStoreError("no store in ./data: graphmem init ./data")
        >>> isinstance(exc, StoreError), exc.code, exc.http_status
        (True, 'missing_store', 503)
    """

    code = "missing_store"


class SchemaVersionError(StoreError):
    """Data written by a newer graphmem, or a migration that failed.

    Example:
        >>> exc = SchemaVersionError("schema 9 is newer than this graphmem (3)")
        >>> isinstance(exc, StoreError), exc.code, exc.http_status
        (True, 'schema_version', 503)
    """

    code = "schema_version"


class EmbeddingError(GraphMemError):
    """The embedding model could not be loaded or run.

    Example:
        >>> exc = EmbeddingError("no model at /models/x")
        >>> isinstance(exc, GraphMemError), exc.code, exc.http_status
        (True, 'embedding_error', 503)
    """

    code = "embedding_error"
    http_status = 503


class AuthError(GraphMemError):
    """No API key, or one that is unknown or revoked (``.status`` 401 or 403).

    Example:
        >>> exc = AuthError("unknown API key")
        >>> isinstance(exc, GraphMemError), exc.code, exc.http_status
        (True, 'unauthorized', 401)
    """

    code = "unauthorized"
    http_status = 401

    def __init__(self, message: str = "", status: int | None = None) -> None:
        super().__init__(message)
        self.status = status or self.http_status


class ForbiddenError(AuthError):
    """The key may not use this namespace, or its role is too low.

    Example:
        >>> exc = ForbiddenError("this key may not use namespace 'hr'")
        >>> isinstance(exc, AuthError), exc.code, exc.http_status
        (True, 'forbidden', 403)
    """

    code = "forbidden"
    http_status = 403


class UnavailableError(GraphMemError):
    """The client could not reach the service (connection refused, timed out, 503 after
    retries); nothing is known to have happened.

    Example:
        >>> exc = UnavailableError("http://127.0.0.1:8765 is unreachable")
        >>> isinstance(exc, GraphMemError), exc.code, exc.http_status
        (True, 'unavailable', 503)
    """

    code = "unavailable"
    http_status = 503


class ConfigError(GraphMemError):
    """An invalid configuration (the message names the setting).

    Example:
        >>> exc = ConfigError("GRAPHMEM_TIERS__FAST__HALF_LIFE_HOURS: must be > 0")
        >>> isinstance(exc, GraphMemError), exc.code, exc.http_status
        (True, 'config_error', 500)
    """

    code = "config_error"


class EmbeddingMismatchError(ConfigError):
    """The configured embedding model is not the one that made a namespace's vectors (another
    model, or the int8 model where the float one wrote): its queries and writes would be
    compared with vectors of another space. Nothing is written.

    Example:
        >>> exc = EmbeddingMismatchError("namespace 'ops' was embedded by another model")
        >>> isinstance(exc, ConfigError), exc.code, exc.http_status
        (True, 'embedding_mismatch', 500)
    """

    code = "embedding_mismatch"
