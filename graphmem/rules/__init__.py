"""Pure rules: plain values and a clock in, decisions out; no store, no model, no I/O.

Tier selection and decay (``tiers``), promotion / demotion / eviction / expiry
(``dynamics``), retrieval arithmetic (``fusion``, ``scoring``), the text analyser and BM25
(``text``, ``bm25``) and input checks (``validation``). Everything above may import this
layer; it imports only ``graphmem.models``, ``graphmem.config`` and ``graphmem.errors``.
"""
