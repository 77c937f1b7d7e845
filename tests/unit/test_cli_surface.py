"""The CLI's surface: commands grouped in modules, every command that answers takes --json,
every store command takes --data DIR|URL and --create."""

from __future__ import annotations

import click
from click.testing import CliRunner

from graphmem.cli import main

#: long-running servers and commands whose output is itself a file format
NO_JSON = {"serve", "viewer", "mcp", "demo", "export", "report", "bench"}


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}
    for name, cmd in group.commands.items():
        full = f"{prefix}{name}"
        if isinstance(cmd, click.Group) and name != "bench":
            out |= _commands(cmd, full + " ")
        else:
            out[full] = cmd
    return out


def test_every_command_that_answers_takes_json() -> None:
    commands = _commands(main)
    assert {"store", "search", "init", "keys create", "config show", "approve"} <= set(commands)
    missing = [n for n, c in commands.items() if n.split()[0] not in NO_JSON
               and "--json" not in {o for p in c.params for o in getattr(p, "opts", [])}]
    assert not missing, missing


def test_store_commands_take_a_location_and_create() -> None:
    for name in ("store", "search", "show", "stats", "maintain", "consolidate", "reports",
                 "import", "export", "mark", "relate", "approve", "rollback", "mcp"):
        cmd = _commands(main)[name]
        opts = {o for p in cmd.params for o in getattr(p, "opts", [])}
        assert {"--data", "--create"} <= opts, name
        help_text = CliRunner().invoke(main, [name, "--help"]).output
        assert "DIR|URL" in help_text, name
