"""Who may do what: the caller (``Principal``: an API key's namespaces and role) and the one
check every face makes, ``authorize`` - REST routes, MCP over HTTP and MCP on stdio alike.
A missing or bad key is an ``AuthError`` (401), a namespace or role the key does not have a
``ForbiddenError`` (403); both are branches of ``GraphMemError`` and the API maps them in
its one handler."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from graphmem.errors import AuthError, ForbiddenError

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

    def at_least(self, role: str) -> bool:
        return _RANK[self.role] >= _RANK[role]


#: the caller when the server runs without keys (loopback only)
DEV = Principal("dev", frozenset({"*"}), "admin")

#: where ``Guard`` leaves the principal of the key it verified (the ASGI scope's ``state``)
VERIFIED = "graphmem.principal"


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
    if not who.at_least(role):
        raise ForbiddenError(f"this needs the {role} role; the key is {who.role}")
    return namespace


def require_role(who: Principal, role: str) -> None:
    """A check without a namespace (runs over every namespace, metrics)."""
    if not who.at_least(role):
        raise ForbiddenError(f"this needs the {role} role; the key is {who.role}")


def bearer(authorization: str | None) -> str:
    """The key of an ``Authorization: Bearer <key>`` header, or ""."""
    if not authorization or not authorization.startswith("Bearer "):
        return ""
    return authorization[len("Bearer "):].strip()


def no_key() -> AuthError:
    return AuthError("send an API key: Authorization: Bearer <key>")


def bad_key() -> AuthError:
    return AuthError("unknown or revoked API key")
