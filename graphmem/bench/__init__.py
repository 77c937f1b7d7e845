"""Benchmarks: ``python -m bench scale --n 10000`` (prints a table, writes JSON)."""
