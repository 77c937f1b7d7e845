"""Commands for what agents remember (ADR 0013): list, history, supersede, feedback,
delete-all, stream, summarize, capture, consensus, dissent, similar."""

from __future__ import annotations

from datetime import datetime

import click

from graphmem.cli.common import Location, _echo_json, _emit, _fail, store_command
from graphmem.models import Memory, MemoryPage

SORTS = ["created_at", "stored_at", "updated_at", "last_accessed_at", "importance"]
since_option = click.option("--since", type=click.DateTime(), default=None,
                            help="event time at or after (ISO 8601, UTC unless offset)")
until_option = click.option("--until", type=click.DateTime(), default=None,
                            help="event time before")


def _line(m: Memory) -> str:
    return (f"{m.id}  {m.created_at:%Y-%m-%d %H:%M}  [{m.tier.value}/{m.type}] "
            f"{m.content[:70]}")


def _page(page: MemoryPage, as_json: bool) -> None:
    if as_json:
        _echo_json(page.to_dict())
        return
    for m in page.items:
        click.echo(_line(m))
    if not page.items:
        click.echo("no memories")
    if page.next_cursor:
        click.echo(f"more: --cursor {page.next_cursor}")


@store_command("list")
@click.option("--type", "types", multiple=True, help="memory type; repeatable")
@click.option("--source", help="the agent / speaker")
@click.option("--session", "session_id")
@click.option("--topic")
@click.option("--tier", type=click.Choice(["fast", "medium", "slow", "glacial"]))
@click.option("--status", type=click.Choice(["active", "archived", "expired", "all"]),
              default="active", show_default=True)
@since_option
@until_option
@click.option("--sort", type=click.Choice(SORTS), default="created_at", show_default=True)
@click.option("--asc", is_flag=True, help="oldest / lowest first")
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--cursor", help="the 'more:' cursor of the page before")
def list_(data: Location, namespace: str, as_json: bool, types: tuple[str, ...],
          source: str | None, session_id: str | None, topic: str | None, tier: str | None,
          status: str, since: datetime | None, until: datetime | None, sort: str, asc: bool,
          limit: int, cursor: str | None) -> None:
    """List memories with filters, sorted, a page at a time."""
    with data.open() as mem:
        page = mem.list_page(namespace=namespace, type=list(types) or None, source=source,
                             session_id=session_id, topic=topic, tier=tier,
                             status=None if status == "all" else status, since=since,
                             until=until, sort=sort, order="asc" if asc else "desc",
                             limit=limit, cursor=cursor)
    _page(page, as_json)


@store_command()
@click.argument("memory_id")
def history(data: Location, namespace: str, as_json: bool, memory_id: str) -> None:
    """Every version of a memory's content and every change, oldest first."""
    with data.open() as mem:
        steps = mem.history(memory_id, namespace=namespace)
    if as_json:
        _echo_json([s.to_dict() for s in steps])
        return
    for s in steps:
        moved = (f" {s.from_tier.value}->{s.to_tier.value}"
                 if s.from_tier and s.to_tier and s.from_tier != s.to_tier else "")
        click.echo(f"{s.at:%Y-%m-%d %H:%M:%S}  {s.event}{moved}: {s.reason}")
        if s.content is not None:
            click.echo(f"    {s.content[:100]}")


@store_command()
@click.argument("old_id")
@click.argument("new_id")
@click.option("--reason")
def supersede(data: Location, namespace: str, as_json: bool, old_id: str, new_id: str,
              reason: str | None) -> None:
    """NEW_ID replaces OLD_ID: the old memory's validity ends, the two are linked."""
    with data.open() as mem:
        m = mem.supersede(old_id, new_id, namespace=namespace, reason=reason)
    _emit(as_json, m.to_dict(), f"{old_id} valid until {m.valid_until:%Y-%m-%d %H:%M}, "
                                f"superseded by {new_id}")


@store_command()
@click.argument("memory_id")
@click.option("--useful/--not-useful", default=None, help="whether it helped")
@click.option("--outcome", type=click.Choice(["success", "failure"]))
@click.option("--agent", help="who says it: memories several agents use are promoted")
def feedback(data: Location, namespace: str, as_json: bool, memory_id: str,
             useful: bool | None, outcome: str | None, agent: str | None) -> None:
    """How a retrieved memory served (--useful / --not-useful and/or --outcome)."""
    with data.open() as mem:
        m = mem.feedback(memory_id, namespace=namespace, useful=useful, outcome=outcome,
                         agent=agent)
    _emit(as_json, m.to_dict(), f"{m.id} [{m.tier.value}] surprise {m.surprise_score:.2f}, "
                                f"{m.success_count} successes, {m.failure_count} failures, "
                                f"used by {len(m.used_by)} agents")


@store_command("delete-all")
@click.option("--confirm", required=True, help="the namespace's name again")
def delete_all(data: Location, namespace: str, as_json: bool, confirm: str) -> None:
    """Delete every memory of a namespace (its edges and history too)."""
    with data.open() as mem:
        n = mem.delete_all(namespace=namespace, confirm=confirm)
    _emit(as_json, {"deleted": n}, f"deleted {n} memories")


@store_command()
@click.argument("agent")
@since_option
@until_option
@click.option("--limit", type=int, default=50, show_default=True)
@click.option("--cursor")
def stream(data: Location, namespace: str, as_json: bool, agent: str, since: datetime | None,
           until: datetime | None, limit: int, cursor: str | None) -> None:
    """An agent's memories in event-time order, oldest first."""
    with data.open() as mem:
        page = mem.stream(agent, namespace=namespace, since=since, until=until, limit=limit,
                          cursor=cursor)
    _page(page, as_json)


@store_command()
@click.option("--agent")
@click.option("--session", "session_id")
@since_option
@until_option
def summarize(data: Location, namespace: str, as_json: bool, agent: str | None,
              session_id: str | None, since: datetime | None, until: datetime | None) -> None:
    """An extractive summary of an agent's (or a session's) memories in a time range."""
    if agent is None and session_id is None:
        _fail("summarize needs --agent or --session")
    with data.open() as mem:
        s = mem.summarize(namespace=namespace, agent=agent, session_id=session_id,
                          since=since, until=until)
    _emit(as_json, s.to_dict(), f"{s.text or 'nothing in that range'}\n({len(s.ids)} memories)")


@store_command()
@click.option("--agent", required=True)
@click.option("--tool", required=True)
@click.option("--input", "input_", default="", help="the call's input")
@click.option("--output", default="", help="what it returned")
@click.option("--failed", is_flag=True, help="the call failed")
@click.option("--session", "session_id")
def capture(data: Location, namespace: str, as_json: bool, agent: str, tool: str,
            input_: str, output: str, failed: bool, session_id: str | None) -> None:
    """Capture one tool call as a fast-tier tool_usage memory (hooks call this)."""
    with data.open() as mem:
        m = mem.capture_tool(agent=agent, tool=tool, input=input_, output=output,
                             ok=not failed, namespace=namespace, session_id=session_id)
    _emit(as_json, {"captured": m is not None, "memory": None if m is None else m.to_dict()},
          _line(m) if m is not None else "not captured (skipped or over the cap)")


@store_command()
@click.argument("topic")
@click.argument("conclusion")
@click.option("--participant", "participants", multiple=True, help="repeatable")
@click.option("--confidence", type=float, default=0.8, show_default=True)
@click.option("--evidence", "evidence_ids", multiple=True, help="a memory id; repeatable")
def consensus(data: Location, namespace: str, as_json: bool, topic: str, conclusion: str,
              participants: tuple[str, ...], confidence: float,
              evidence_ids: tuple[str, ...]) -> None:
    """Record a debate's consensus on TOPIC."""
    with data.open() as mem:
        m = mem.record_consensus(topic, conclusion, namespace=namespace,
                                 participants=participants, confidence=confidence,
                                 evidence_ids=evidence_ids)
    _emit(as_json, m.to_dict(), _line(m))


@store_command()
@click.argument("topic")
@click.argument("agent")
@click.argument("position")
@click.option("--against", help="the consensus memory it disputes")
def dissent(data: Location, namespace: str, as_json: bool, topic: str, agent: str,
            position: str, against: str | None) -> None:
    """Record AGENT's dissenting POSITION on TOPIC."""
    with data.open() as mem:
        m = mem.record_dissent(topic, agent, position, namespace=namespace, against=against)
    _emit(as_json, m.to_dict(), _line(m))


@store_command()
@click.argument("topic")
@click.option("--limit", type=int, default=5, show_default=True)
def similar(data: Location, namespace: str, as_json: bool, topic: str, limit: int) -> None:
    """Past consensus on topics like TOPIC, with the dissent against each."""
    with data.open() as mem:
        found = mem.find_similar(topic, namespace=namespace, limit=limit)
    if as_json:
        _echo_json([r.to_dict() for r in found])
        return
    if not found:
        click.echo("no consensus on a similar topic")
    for r in found:
        click.echo(f"{r.score:7.3f}  {_line(r.consensus)}")
        for d in r.dissent:
            click.echo(f"         dissent: {d.content[:90]}")
