"""How ``GraphMemStore`` (``graphmem.integrations.langgraph``) lays LangGraph's items onto
graphmem memories, without LangGraph: namespace tuples as graphmem namespaces, keys as
memory ids, values as metadata, and LangGraph's filter semantics.

A namespace tuple becomes ``<prefix>:<label>:<label>...`` with every character of a label
outside ``A-Za-z0-9_-`` written as ``@`` and the two hex digits of each of its UTF-8 bytes
(``@`` itself is ``@40``): injective, and readable for plain labels. A name over 128
characters becomes ``<prefix>@`` and 48 hex digits of the tuple's SHA-256 (the tuple itself is
kept in each memory's metadata). A key becomes the memory id as it is when it is 1-64
characters of ``A-Za-z0-9_-`` starting with a letter or digit, else ``h:`` and 40 hex digits
of its SHA-256 (``:`` never occurs in a plain key, so the two forms never meet).

Example:
    >>> encode_namespace(("users", "u1", "memories"))
    'lg:users:u1:memories'
    >>> encode_namespace(("a:b", "ü"))
    'lg:a@3Ab:@C3@BC'
    >>> decode_namespace("lg:a@3Ab:@C3@BC")
    ('a:b', 'ü')
    >>> key_id("prefs"), key_id("a key")[:10]
    ('prefs', 'h:8fa3aab2')
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from graphmem.errors import ConfigError, ValidationError

DEFAULT_PREFIX = "lg"
_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,15}")
_PLAIN = re.compile(r"[A-Za-z0-9_-]")
_PLAIN_KEY = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_ESCAPED = re.compile(r"@([0-9A-F]{2})")
#: what graphmem's text checks refuse but ``json.dumps(ensure_ascii=False)`` leaves raw
_RAW_IN_JSON = re.compile(r"[\x7f\ud800-\udfff]")
#: the metadata fields an item is kept in (each one flat, as graphmem metadata is)
VALUE, KEY, NAMESPACE, TTL, INDEXED = "lg_value", "lg_key", "lg_namespace", "lg_ttl", "lg_indexed"
MAX_NAME = 128


def check_prefix(prefix: str) -> str:
    if not isinstance(prefix, str) or not _PREFIX.fullmatch(prefix):
        raise ConfigError(f"invalid prefix {prefix!r}: 1-16 characters of letters, digits, "
                          "_ and - starting with a letter or digit")
    return prefix


def _escape(label: str) -> str:
    return "".join(c if _PLAIN.fullmatch(c) else
                   "".join(f"@{b:02X}" for b in c.encode("utf-8", "surrogatepass"))
                   for c in label)


def encode_namespace(labels: tuple[str, ...], prefix: str = DEFAULT_PREFIX) -> str:
    """The graphmem namespace of a LangGraph namespace tuple (see the module's doc)."""
    name = ":".join([prefix, *(_escape(label) for label in labels)])
    if len(name) <= MAX_NAME:
        return name
    return f"{prefix}@{hashlib.sha256(dumps(list(labels)).encode()).hexdigest()[:48]}"


def decode_namespace(name: str, prefix: str = DEFAULT_PREFIX) -> tuple[str, ...] | None:
    """The tuple of a readable name of this prefix; None for a hashed one or another's."""
    head, _, rest = name.partition(":")
    if head != prefix or not rest:
        return None
    return tuple(_ESCAPED.sub(lambda m: chr(int(m.group(1), 16)), part)
                 .encode("latin-1").decode("utf-8", "surrogatepass")
                 for part in rest.split(":"))


def owns(name: str, prefix: str = DEFAULT_PREFIX) -> bool:
    """Whether a graphmem namespace is one this prefix's store writes."""
    return name.startswith((prefix + ":", prefix + "@"))


def key_id(key: str) -> str:
    """The memory id of a key (see the module's doc)."""
    if _PLAIN_KEY.fullmatch(key):
        return key
    return "h:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:40]


def dumps(value: Any) -> str:
    """Compact JSON that graphmem's text checks accept (DEL and lone surrogates escaped)."""
    try:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"a LangGraph value must be JSON: {exc}") from None
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def item_metadata(labels: tuple[str, ...], key: str, value: Mapping[str, Any],
                  ttl: float | None) -> dict[str, Any]:
    """The metadata a LangGraph item is kept in: the value whole, its key and namespace
    (whether it is indexed, ``INDEXED``, is the store's to add)."""
    if not isinstance(value, Mapping):
        raise ValidationError(f"a LangGraph value is a dict, got {type(value).__name__}")
    return {VALUE: dumps(dict(value)), KEY: dumps(key), NAMESPACE: dumps(list(labels)), TTL: ttl}


def is_item(metadata: Mapping[str, Any]) -> bool:
    return isinstance(metadata.get(VALUE), str) and isinstance(metadata.get(KEY), str)


def parse_item(metadata: Mapping[str, Any]) -> tuple[tuple[str, ...], str, dict[str, Any]]:
    """(namespace, key, value) back from ``item_metadata``'s fields."""
    return (tuple(json.loads(metadata[NAMESPACE])), json.loads(metadata[KEY]),
            json.loads(metadata[VALUE]))


def content(texts: list[str], id: str, max_chars: int = 8000) -> str:
    """The memory's content: the indexed texts, then the id in brackets - it makes the
    content unique in the namespace (graphmem merges exact twins; two keys never are)."""
    clean = _RAW_IN_JSON.sub(" ", "\n".join(texts))
    clean = re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", " ", clean)[:max_chars]
    return f"{clean}\n[{id}]" if clean.strip() else f"[{id}]"


def matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    """LangGraph's filter: every field equal (nested dicts and lists compared deeply) or
    satisfying its operators ($eq, $ne, $gt, $gte, $lt, $lte).

    Example:
        >>> matches({"kind": "fact", "n": 3}, {"kind": "fact", "n": {"$gt": 2}})
        True
        >>> matches({"kind": "fact"}, {"kind": {"$ne": "fact"}})
        False
    """
    return not filter or all(_compare(value.get(k), f) for k, f in filter.items())


def _compare(item: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        if any(k.startswith("$") for k in wanted):
            return all(_operator(item, op, arg) for op, arg in wanted.items())
        return isinstance(item, dict) and all(_compare(item.get(k), v)
                                              for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (isinstance(item, list | tuple) and len(item) == len(wanted)
                and all(_compare(i, w) for i, w in zip(item, wanted, strict=True)))
    return bool(item == wanted)


def _operator(item: Any, op: str, arg: Any) -> bool:
    if op == "$eq":
        return bool(item == arg)
    if op == "$ne":
        return bool(item != arg)
    if op not in ("$gt", "$gte", "$lt", "$lte"):
        raise ValidationError(f"unsupported filter operator {op!r}")
    try:
        a, b = float(item), float(arg)
    except (TypeError, ValueError):
        raise ValidationError(f"filter {op} compares numbers, got {item!r} and {arg!r}"
                              ) from None
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]
