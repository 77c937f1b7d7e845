"""``graphmem viewer``: the Memory Viewer over a store, on loopback, with a key for the session."""

from __future__ import annotations

import click

from graphmem.cli.common import Location, stops_cleanly_on_sigterm, store_command


@store_command(ns=False, as_json=False)
@click.option("--port", type=int, default=8766, show_default=True)
@click.option("--namespace", "-n", "namespaces", multiple=True, default=["*"],
              show_default=True, help="namespaces the session key may see (repeatable)")
@click.option("--role", type=click.Choice(["reader", "writer", "admin"]), default="admin",
              show_default=True, help="the session key's role (admin may approve runs)")
def viewer(data: Location, port: int, namespaces: tuple[str, ...], role: str) -> None:
    """Open the Memory Viewer on 127.0.0.1 over the store at --data.

    A key is created for this session, printed once (never put in the URL) and revoked
    when the viewer stops.
    """
    import uvicorn

    from graphmem.api.app import create_app
    from graphmem.api.keys import KeyStore
    from graphmem.api.server import stream_closing_protocol
    from graphmem.api.settings import Settings

    settings = Settings.from_env(host="127.0.0.1", port=port, data=data.target,
                                 scheduler=False)
    with stops_cleanly_on_sigterm(), data.open() as mem:  # SIGTERM revokes the key too
        records = mem.key_records() if settings.keys_in_store else None
        keys = KeyStore(records if records is not None else settings.keys_path())
        key_id, key = keys.create(list(namespaces), role, "graphmem viewer session")
        try:
            app = create_app(settings, memory=mem)
            click.echo(f"Memory Viewer: http://127.0.0.1:{port}/viewer  (API docs: /docs)")
            click.echo(f"Sign in with this {role} key; it is revoked when you stop the viewer "
                       "(Ctrl+C):")
            click.echo(key)
            # an open page keeps its live event stream: Ctrl+C closes it, not waits for it
            uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning",
                        http=stream_closing_protocol())
        finally:
            keys.revoke(key_id)
