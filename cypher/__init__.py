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


HEADER_KEYS = ("name", "dialect", "purpose", "parameters", "returns", "mode")


@dataclass(frozen=True, slots=True)
class Statement:
    """One ``.cypher`` file: its dialect (None for both), text and ``//`` header
    (parameters and returns).

    Example:
        >>> st = load("memory/get", "neo4j")
        >>> st.header["parameters"], st.header["mode"]
        ('namespace (string), ids (list of string)', 'read')
        >>> st.body.startswith("//")
        False
    """

    name: str
    dialect: str | None
    text: str
    header: dict[str, str]

    @property
    def body(self) -> str:
        """The statement without its ``//`` header and Neo4j Browser ``:param`` lines."""
        return "\n".join(line for line in self.text.splitlines()
                         if not line.lstrip().startswith(("//", ":"))).strip()

    @property
    def parameters(self) -> set[str]:
        """Parameters the statement body uses (``$name``)."""
        return set(_PARAM.findall(self.body))

    @property
    def browser_params(self) -> dict[str, str]:
        """The ``:param name => value`` examples of a Browser query (values as written)."""
        pairs = (line.strip()[len(":param "):].partition("=>")
                 for line in self.text.splitlines() if line.strip().startswith(":param "))
        return {key.strip(): value.strip() for key, _, value in pairs}


def _parse_header(text: str) -> dict[str, str]:
    """``// key: value`` lines; ``//`` lines indented further continue the previous key."""
    header: dict[str, str] = {}
    last: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped.startswith("//"):
            break
        content = stripped[2:]
        key, sep, value = content.strip().partition(":")
        if sep and key.strip().lower() in HEADER_KEYS and not content.startswith("  "):
            last = key.strip().lower()
            header[last] = value.strip()
        elif last is not None:
            header[last] += " " + content.strip()
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
    for used in ([dialect] if dialect else []) + [None]:
        suffix = f".{used}.cypher" if used else ".cypher"
        node = root.joinpath(*(name + suffix).split("/"))
        if node.is_file():
            text = node.read_text(encoding="utf-8")
            return Statement(name, used, text, _parse_header(text))
    raise FileNotFoundError(f"no Cypher statement {name!r} for dialect {dialect!r}")
