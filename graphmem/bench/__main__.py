"""``python -m bench <command>``: benchmark commands (each prints a table and writes JSON)."""

from __future__ import annotations

import argparse
import sys

from graphmem.bench import ann, scale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    sub = parser.add_subparsers(dest="command", required=True)
    scale.add_arguments(sub.add_parser("scale", help=scale.__doc__.splitlines()[0]))
    ann.add_arguments(sub.add_parser("ann", help=ann.__doc__.splitlines()[0]))
    args = parser.parse_args(argv)
    return int(args.run(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
