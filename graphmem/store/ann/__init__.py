"""The vector layer of the embedded store: one index per namespace."""
