"""The ``graphmem`` console script, run as a user runs it (a real subprocess, real model)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.model
GM = shutil.which("graphmem", path=str(Path(sys.executable).parent)) or shutil.which("graphmem")


def gm(*args: str, ok: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert GM, "the graphmem console script is not installed"
    out = subprocess.run([GM, *args], capture_output=True, text=True, input=stdin,
                         timeout=240)
    if ok:
        assert out.returncode == 0, out.stderr
    return out


def test_cli_end_to_end(tmp_path: Path) -> None:
    data, copy = str(tmp_path / "data"), str(tmp_path / "copy")
    lines = [{"content": "The deploy failed because the migration locked the users table",
              "importance": 0.8, "session_id": "s1", "source": "ops"},
             {"content": "We split migrations into batches", "session_id": "s1"},
             {"content": "Alice prefers tea in the morning", "metadata": {"kind": "pref"}}]
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    got = json.loads(gm("import", "--data", data, "--create", "-n", "ops", str(src),
                        "--json").stdout)
    assert got == {"memories": 3, "edges": 0}

    new = json.loads(gm("store", "--data", data, "-n", "ops", "--json", "--importance", "0.9",
                        "--relate", "REFERENCES:" + "x" * 3, "Runbook for deploys",
                        ok=False).stdout or "{}")
    assert new == {}  # relation to a missing id: refused, nothing written
    stored = json.loads(gm("store", "--data", data, "-n", "ops", "--json", "--importance",
                           "0.9", "Runbook: run migrations off-peak").stdout)
    assert stored["tier"] == "fast"

    hits = json.loads(gm("search", "--data", data, "-n", "ops", "--json",
                         "why did the deploy fail").stdout)
    first = hits[0]
    assert first["memory"]["content"].startswith("The deploy failed")
    assert {"semantic", "keyword", "graph"} <= set(first["terms"])
    assert first["path"]["text"] == "seed"
    deploy_id = first["memory"]["id"]
    out = gm("relate", "--data", data, "-n", "ops", stored["id"], "references", deploy_id)
    assert "REFERENCES" in out.stdout
    shown = json.loads(gm("show", "--data", data, "-n", "ops", "--json", deploy_id).stdout)
    types = {r["type"] for r in shown["relations"]}
    assert {"FOLLOWS", "REFERENCES"} <= types
    stats = json.loads(gm("stats", "--data", data, "-n", "ops", "--json").stdout)
    assert stats["memories"] == 4 and stats["edges"]["FOLLOWS"] == 1

    export = tmp_path / "export.jsonl"
    gm("export", "--data", data, "-n", "ops", str(export))
    gm("init", "--data", copy)
    gm("import", "--data", copy, "-n", "ops", str(export))
    again = gm("export", "--data", copy, "-n", "ops").stdout
    assert again == export.read_text()  # every memory and edge, exactly
    assert len(again.splitlines()) == 4 + sum(stats["edges"].values())

    # without vectors (to change the model): the import embeds them again, here the same model
    bare = gm("export", "--data", data, "-n", "ops", "--without-vectors").stdout
    assert '"embedding"' not in bare and '"context_embedding"' not in bare
    third = str(tmp_path / "third")
    gm("import", "--data", third, "--create", "-n", "ops", "-", stdin=bare)
    old = {r["id"]: r for r in map(json.loads, export.read_text().splitlines()) if "id" in r}
    for r in map(json.loads, gm("export", "--data", third, "-n", "ops").stdout.splitlines()):
        if "id" in r:
            for name in ("embedding", "context_embedding"):
                if old[r["id"]][name] is None:
                    assert r[name] is None
                else:
                    a, b = np.array(old[r["id"]][name]), np.array(r[name])
                    assert float(a @ b) > 0.9999, name


def test_cli_errors_are_one_line_and_non_zero(tmp_path: Path) -> None:
    data = str(tmp_path / "d")
    assert "created a graphmem store" in gm("init", "--data", data).stdout
    for args in (["store", "--data", data, ""],
                 ["store", "--data", data, "-n", "not a namespace", "hello"],
                 ["show", "--data", data, "no-such-id"],
                 ["search", "--data", data, "--limit", "0", "x"],
                 ["import", "--data", data, str(tmp_path / "missing.jsonl")]):
        out = gm(*args, ok=False)
        assert out.returncode != 0, args
        err = [line for line in out.stderr.splitlines() if line.startswith("graphmem: error")]
        assert len(err) == 1, out.stderr
    assert "Usage" in gm("--help").stdout


def test_cli_refuses_a_store_that_is_not_there_and_creates_nothing(tmp_path: Path) -> None:
    """A typo in --data used to create a new empty store and answer "no results"."""
    typo = tmp_path / "graphmem-dta"
    for args in (["search", "--data", str(typo), "-n", "a", "q"],
                 ["store", "--data", str(typo), "-n", "a", "a memory"],
                 ["stats", "--data", str(typo), "-n", "a"],
                 ["consolidate", "--data", str(typo), "--dry-run"],
                 ["migrate", "--from", str(typo), "--to", str(tmp_path / "copy")]):
        out = gm(*args, ok=False)
        assert out.returncode == 1, args
        assert out.stderr.startswith("graphmem: error: no graphmem store in"), out.stderr
        assert len(out.stderr.splitlines()) == 1
        assert not typo.exists() and not (tmp_path / "copy").exists(), args
    url = gm("search", "--data", "neo4j:/host:7687", "-n", "a", "q", ok=False)
    assert url.returncode == 1 and "unknown store URL 'neo4j'" in url.stderr
    assert not (Path.cwd() / "neo4j:").exists()
    stored = gm("store", "--data", str(typo), "--create", "-n", "a", "--json", "a memory")
    assert json.loads(stored.stdout)["content"] == "a memory"
    assert "found the graphmem store" in gm("init", "--data", str(typo)).stdout
    hits = json.loads(gm("search", "--data", str(typo), "-n", "a", "--json", "memory").stdout)
    assert [h["memory"]["content"] for h in hits] == ["a memory"]


def test_cli_what_agents_remember(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    base = ("--data", data, "-n", "team", "--json")
    d = json.loads(gm("store", "--create", *base, "--type", "decision",
                      "We ship on Tuesdays").stdout)
    assert (d["type"], d["tier"], d["importance"]) == ("decision", "medium", 0.7)
    c = json.loads(gm("consensus", *base, "database for the ledger", "use Postgres",
                      "--participant", "claude", "--participant", "gpt").stdout)
    x = json.loads(gm("dissent", *base, "database for the ledger", "gemini",
                      "a document store fits better", "--against", c["id"]).stdout)
    found = json.loads(gm("similar", *base, "which datastore should hold the ledger").stdout)
    assert found[0]["consensus"]["id"] == c["id"]
    assert [m["id"] for m in found[0]["dissent"]] == [x["id"]]
    cap = json.loads(gm("capture", *base, "--agent", "coder", "--tool", "Bash",
                        "--input", "make test", "--output", "2 failed", "--failed").stdout)
    assert cap["captured"] and cap["memory"]["tier"] == "fast"
    page = json.loads(gm("list", *base, "--type", "decision", "--type", "tool_usage",
                         "--limit", "1").stdout)
    assert len(page["items"]) == 1 and page["next_cursor"]
    rest = json.loads(gm("list", *base, "--type", "decision", "--type", "tool_usage",
                         "--cursor", page["next_cursor"]).stdout)
    assert {m["id"] for m in page["items"] + rest["items"]} == {d["id"], cap["memory"]["id"]}
    out = gm("supersede", "--data", data, "-n", "team", d["id"], cap["memory"]["id"])
    assert "superseded by" in out.stdout
    hist = json.loads(gm("history", *base, d["id"]).stdout)
    assert [h["event"] for h in hist] == ["created", "supersede"]
    typed = json.loads(gm("search", *base, "when do we ship", "--type", "decision").stdout)
    assert [r["memory"]["id"] for r in typed] == [d["id"]]
    before = json.loads(gm("search", *base, "ledger database", "--as-of", "2000-01-01").stdout)
    assert before == []  # nothing was known then
    fb = json.loads(gm("feedback", *base, c["id"], "--useful", "--agent", "claude").stdout)
    assert list(fb["used_by"]) == ["claude"] and fb["surprise_score"] > 0
    none = gm("feedback", *base, c["id"], ok=False)  # neither --useful nor --outcome
    assert none.returncode != 0 and "feedback needs" in none.stderr
    bad = gm("delete-all", *base, "--confirm", "nope", ok=False)
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1
    assert json.loads(gm("delete-all", *base, "--confirm", "team").stdout) == {"deleted": 4}


def test_search_reads_a_time_against_now_and_says_why(tmp_path: Path) -> None:
    """``search --now``: "last week" read as of that day lifts the memory that mentions it,
    and the plain output gives the reason in words (issue 49)."""
    data = str(tmp_path / "data")
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join(json.dumps(x) for x in [
        {"content": "Yesterday the team shipped the billing migration",
         "created_at": "2023-08-23T17:00:00+00:00"},
        {"content": "The team shipped the search migration",
         "created_at": "2023-05-03T17:00:00+00:00"}]) + "\n")
    gm("import", "--data", data, "--create", "-n", "ops", str(src))
    out = gm("search", "--data", data, "-n", "ops", "--now", "2023-08-30",
             "what did the team ship last week?").stdout
    assert out.index("billing migration") < out.index("search migration")
    assert "time: inside 2023-08-21 to 2023-08-27" in out
