"""The ``graphmem`` console script: one command group, its commands in modules by what they
work on. Errors exit non-zero with one line on stderr."""

from graphmem.cli import admin, bench, lifecycle, memories, viewer  # noqa: F401 - registers
from graphmem.cli.common import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    main()
