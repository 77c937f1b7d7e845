"""The ``graphmem`` console script: one command group, its commands in modules by what they
work on. Errors exit non-zero with one line on stderr."""

from graphmem.cli import (  # noqa: F401 - registers
    admin,
    agents,
    bench,
    lifecycle,
    memories,
    viewer,
)
from graphmem.cli.common import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    main()
