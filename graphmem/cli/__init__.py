"""The ``graphmem`` console script: one command group, its commands in modules by what they
work on. Errors exit non-zero with one line on stderr."""

from graphmem.cli import (  # noqa: F401 - registers
    admin,
    agents,
    lifecycle,
    memories,
    viewer,
)
from graphmem.cli.common import _fail, main

# the benchmarks are a source checkout's, not the wheel's (issue 46): `graphmem bench` is theirs
try:
    import graphmem.bench.cli  # noqa: F401 - registers the bench group
except ModuleNotFoundError as missing:
    if missing.name != "graphmem.bench":
        raise

    @main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
    def bench() -> None:
        """Benchmarks: run them from a source checkout (make install)."""
        _fail("graphmem bench runs from a source checkout (make install); "
              "the benchmarks are not in the wheel")

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    main()
