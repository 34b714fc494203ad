"""Which files an input path stands for: shared by the Spark reader and `asaql check`'s
samples (this module imports no pyspark, so `check` stays fast)."""

from __future__ import annotations

from pathlib import Path

from asaql.errors import ConfigurationError
from asaql.inputs.formats import FORMATS

INPUT_SUFFIXES = tuple(FORMATS)  # JSON lines, CSV, Parquet, Avro (asaql/inputs/formats.py)


def input_files(path: str) -> list[Path]:
    """The files of an input: the file itself or the folder's input files in name order."""
    p = Path(path)
    if p.is_file():
        return [p]
    if p.is_dir():
        return sorted(f for f in p.iterdir() if f.is_file() and f.suffix in INPUT_SUFFIXES)
    raise ConfigurationError(f"input not found: {path}")


def admission_ties(files: list[Path]) -> list[list[Path]]:
    """Groups of files with the same modification time to the millisecond: Spark's file source
    admits files in modification-time order (milliseconds) and leaves such a group in the
    order the directory lists it, so a replay that splits the group across micro-batches
    (--max-files-per-trigger) may read its events in either order."""
    by_time: dict[int, list[Path]] = {}
    for file in files:
        by_time.setdefault(file.stat().st_mtime_ns // 1_000_000, []).append(file)
    return [sorted(group) for group in by_time.values() if len(group) > 1]
