"""How much of a file input one micro-batch reads."""

from __future__ import annotations

# Without --max-files-per-trigger, a micro-batch takes files up to this size: the native step
# caches a micro-batch of several files for its two passes, and 10,000,000 events (1.5 GB, 100
# files) in one ran the 2 GB JVM out of memory; bounded, memory stays as at 1,000,000.
MAX_BYTES_PER_TRIGGER = 256 << 20


def trigger_limit(max_files_per_trigger: int | None) -> dict[str, str]:
    """A file stream's read limit: the user's files per micro-batch, else MAX_BYTES_PER_TRIGGER
    (Spark takes one or the other)."""
    if max_files_per_trigger:
        return {"maxFilesPerTrigger": str(int(max_files_per_trigger))}
    return {"maxBytesPerTrigger": str(MAX_BYTES_PER_TRIGGER)}
