"""Who may do what: ``identify``, the one place a request's API key becomes its caller
(``Principal``: the key's namespaces and role), and ``authorize``, the one check every face
makes - REST routes, MCP over HTTP and MCP on stdio alike. A missing or bad key is an
``AuthError`` (401), a namespace or role the key does not have a ``ForbiddenError`` (403);
both are branches of ``GraphMemError`` and the API maps them in its one handler."""

from __future__ import annotations

from collections.abc import Collection, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphmem.errors import AuthError, ForbiddenError

if TYPE_CHECKING:
    from graphmem.api.keys import KeyStore

ROLES = ("reader", "writer", "admin")
_RANK = {r: i for i, r in enumerate(ROLES)}


@dataclass(frozen=True, slots=True)
class Principal:
    """An API key's grant. ``"*"`` in ``namespaces`` allows every namespace.

    Example:
        >>> who = Principal("k1", frozenset({"ops"}), "reader")
        >>> authorize(who, "ops")
        'ops'
        >>> authorize(who, "ops", "writer")
        Traceback (most recent call last):
        ...
        graphmem.errors.ForbiddenError: this needs the writer role; the key is reader
    """

    key_id: str
    namespaces: frozenset[str]
    role: str

    def may_use(self, namespace: str) -> bool:
        return "*" in self.namespaces or namespace in self.namespaces


#: the caller when the server runs without keys (loopback only)
DEV = Principal("dev", frozenset({"*"}), "admin")

#: where ``identify`` leaves the principal of the key it verified (the ASGI scope's ``state``)
VERIFIED = "graphmem.principal"


def identify(scope: MutableMapping[str, Any], keys: KeyStore | None, *, open: bool = False
             ) -> Principal:
    """The caller of a request (its ASGI ``scope``): the ``Authorization: Bearer`` key
    verified once, its verdict kept in the scope's state for the rest of the request (the
    outer guard, the MCP mount and the routes' ``principal`` all ask here); ``AuthError``
    without a valid key. ``open``: the server runs without keys (loopback only).

    Example:
        >>> scope = {"headers": [(b"authorization", b"Bearer k1")]}
        >>> class OneKey:
        ...     def verify(self, key): return DEV if key == "k1" else None
        >>> identify(scope, OneKey()).key_id, scope["state"][VERIFIED].key_id
        ('dev', 'dev')
        >>> identify({"headers": []}, OneKey())
        Traceback (most recent call last):
        ...
        graphmem.errors.AuthError: send an API key: Authorization: Bearer <key>
    """
    if open:
        return DEV
    state = scope.setdefault("state", {})
    who: Principal | None = state.get(VERIFIED)
    if who is None:
        header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
        key = header[len("Bearer "):].strip() if header.startswith("Bearer ") else ""
        if not key:
            raise AuthError("send an API key: Authorization: Bearer <key>")
        who = keys.verify(key) if keys is not None else None
        if who is None:
            raise AuthError("unknown or revoked API key")
        state[VERIFIED] = who
    return who


def authorize(who: Principal | None, namespace: str, role: str = "reader", *,
              served: Collection[str] = ("*",)) -> str:
    """``namespace`` when ``who`` may use it with at least ``role`` (and this server serves
    it: ``served``, the MCP command line's allow-list); else ``ForbiddenError``. ``None``
    is an unauthenticated caller on a transport without keys (MCP on stdio): only
    ``served`` decides there."""
    if "*" not in served and namespace not in served:
        raise ForbiddenError(f"this server does not serve namespace {namespace!r}")
    if who is None:
        return namespace
    if not who.may_use(namespace):
        raise ForbiddenError(f"this key may not use namespace {namespace!r}")
    require_role(who, role)
    return namespace


def require_role(who: Principal, role: str) -> None:
    """A check without a namespace (runs over every namespace, metrics)."""
    if _RANK[who.role] < _RANK[role]:
        raise ForbiddenError(f"this needs the {role} role; the key is {who.role}")
