"""Benchmarks behind ``graphmem bench ...`` (each prints a table and writes JSON)."""
