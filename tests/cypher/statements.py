"""What the tests read from a statement file besides its body: the ``//`` header, the
``$parameters`` the body uses, a Browser query's ``:param`` examples, every statement's name."""

from __future__ import annotations

import re
from pathlib import Path

from graphmem import cypher

ROOT = Path(cypher.__file__).resolve().parent
HEADER_KEYS = ("name", "dialect", "purpose", "parameters", "returns", "mode")
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def names() -> list[str]:
    """Every statement file, as a path below ``cypher/`` without its suffix."""
    return sorted(p.relative_to(ROOT).as_posix()[: -len(".cypher")]
                  for p in ROOT.rglob("*.cypher"))


def header(st: cypher.Statement) -> dict[str, str]:
    """``// key: value`` lines; ``//`` lines indented further continue the previous key."""
    out: dict[str, str] = {}
    last: str | None = None
    for line in st.text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("//"):
            break
        content = stripped[2:]
        key, sep, value = content.strip().partition(":")
        if sep and key.strip().lower() in HEADER_KEYS and not content.startswith("  "):
            last = key.strip().lower()
            out[last] = value.strip()
        elif last is not None:
            out[last] += " " + content.strip()
    return out


def parameters(st: cypher.Statement) -> set[str]:
    """Parameters the statement body uses (``$name``)."""
    return set(_PARAM.findall(st.body))


def browser_params(st: cypher.Statement) -> dict[str, str]:
    """The ``:param name => value`` examples of a Browser query (values as written)."""
    pairs = (line.strip()[len(":param "):].partition("=>")
             for line in st.text.splitlines() if line.strip().startswith(":param "))
    return {key.strip(): value.strip() for key, _, value in pairs}
