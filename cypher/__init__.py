"""graphmem.cypher: every Cypher statement as a ``.cypher`` file, and their loader.

``load(name, dialect)`` returns the text of ``<name>.<dialect>.cypher`` when a dialect variant
exists, else ``<name>.cypher``. Files are package data read with ``importlib.resources``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

DIALECTS = ("neo4j", "falkordb")
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True, slots=True)
class Statement:
    name: str
    dialect: str | None
    text: str
    header: dict[str, str]

    @property
    def parameters(self) -> set[str]:
        """Parameters the statement body uses (``$name``)."""
        body = "\n".join(line for line in self.text.splitlines()
                         if not line.lstrip().startswith("//"))
        return set(_PARAM.findall(body))


def _parse_header(text: str) -> dict[str, str]:
    header: dict[str, str] = {}
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("//"):
            break
        key, sep, value = stripped[2:].partition(":")
        if sep:
            header[key.strip().lower()] = value.strip()
    return header


def names() -> list[str]:
    """Every statement file below this package, as a relative path without suffix."""
    out: list[str] = []
    root = resources.files(__package__)

    def walk(node: resources.abc.Traversable, prefix: str) -> None:
        for child in node.iterdir():
            if child.is_dir():
                walk(child, prefix + child.name + "/")
            elif child.name.endswith(".cypher"):
                out.append(prefix + child.name[: -len(".cypher")])

    walk(root, "")
    return sorted(out)


@lru_cache(maxsize=256)
def load(name: str, dialect: str | None = None) -> Statement:
    if dialect is not None and dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}")
    root = resources.files(__package__)
    candidates = ([f"{name}.{dialect}.cypher"] if dialect else []) + [f"{name}.cypher"]
    for candidate in candidates:
        node = root.joinpath(*candidate.split("/"))
        if node.is_file():
            text = node.read_text(encoding="utf-8")
            used = candidate.rsplit(".", 2)[1] if candidate.count(".") >= 2 else None
            return Statement(name, used if used in DIALECTS else None, text, _parse_header(text))
    raise FileNotFoundError(f"no Cypher statement {name!r} for dialect {dialect!r}")
