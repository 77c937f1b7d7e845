"""graphmem.consolidation: clustering old memories into summaries, the job, reports."""
