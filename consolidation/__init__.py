"""graphmem.consolidation: clustering old memories into summaries, the runs, the reports."""

from graphmem.consolidation.runner import ConsolidationRun, Consolidator

__all__ = ["ConsolidationRun", "Consolidator"]
