"""The engine: the paths that do the work, each taking one frozen ``Core`` (store port,
embedder, analyser, config, clock).

Writes (``writes``), edits (``edits``), access bookkeeping (``access``), reads
(``reads``), retrieval (``retrieval`` serves it, ``ranking`` and ``walk`` rank), maintenance
(``maintenance``, ``scheduler``), stats, export/import (``records``) and store-to-store copy
(``migrate``).
It speaks to storage only through ``graphmem.store.base``; it never imports the facade
(``graphmem.memory``) or a face (api, cli, client, bench).
"""
