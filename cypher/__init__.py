"""graphmem.cypher: every Cypher statement as a ``.cypher`` file, and their loader.

``load(name, dialect)`` returns the text of ``<name>.<dialect>.cypher`` when a dialect variant
exists, else ``<name>.cypher``. Files are package data read with ``importlib.resources``. Each
file opens with a ``//`` header (name, dialect, purpose, parameters, returns, mode) that
``tests/cypher`` checks against the statement.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

DIALECTS = ("neo4j", "falkordb")


@dataclass(frozen=True, slots=True)
class Statement:
    """One ``.cypher`` file: its dialect (None for both) and text, ``//`` header included.

    Example:
        >>> st = load("memory/get", "neo4j")
        >>> st.dialect, st.text.splitlines()[0]
        (None, '// name: memory/get')
        >>> st.body.startswith("//")
        False
    """

    name: str
    dialect: str | None
    text: str

    @property
    def body(self) -> str:
        """The statement without its ``//`` header and Neo4j Browser ``:param`` lines."""
        return "\n".join(line for line in self.text.splitlines()
                         if not line.lstrip().startswith(("//", ":"))).strip()


@lru_cache(maxsize=256)
def load(name: str, dialect: str | None = None) -> Statement:
    if dialect is not None and dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}")
    root = resources.files(__package__)
    for used in ([dialect] if dialect else []) + [None]:
        suffix = f".{used}.cypher" if used else ".cypher"
        node = root.joinpath(*(name + suffix).split("/"))
        if node.is_file():
            return Statement(name, used, node.read_text(encoding="utf-8"))
    raise FileNotFoundError(f"no Cypher statement {name!r} for dialect {dialect!r}")
