"""Running a compiled query: the runner, the checkpoint's manifest, and where a run reads and
writes."""
