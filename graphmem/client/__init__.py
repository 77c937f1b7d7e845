"""The REST face from Python: ``GraphMemClient`` (sync) and ``AsyncGraphMemClient`` over httpx
(``http.py``), reading the server's JSON back into the facade's models (``wire.py``)."""

from graphmem.client.http import ApiAuthError, AsyncGraphMemClient, GraphMemClient

__all__ = ["ApiAuthError", "AsyncGraphMemClient", "GraphMemClient"]
