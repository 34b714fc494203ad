"""Which files an input path stands for: shared by the Spark reader and `asaql check`'s
samples (this module imports no pyspark, so `check` stays fast)."""

from __future__ import annotations

from pathlib import Path

from asaql.inputs.path_pattern import PathPattern
from asaql.errors import ConfigurationError
from asaql.inputs.formats import FORMATS

INPUT_SUFFIXES = tuple(FORMATS)  # JSON lines, CSV, Parquet, Avro (asaql/inputs/formats.py)


class PatternedFolder(str):
    """An input folder standing for a Blob container whose files lie in the folders a path
    pattern names (`{date}/{time}`): the folder's path, as every reader of a path sees it, with
    the pattern (asaql/inputs/path_pattern.py) for those that read it."""

    pattern: PathPattern

    def __new__(cls, path: str, pattern: PathPattern):
        folder = super().__new__(cls, path)
        folder.pattern = pattern
        return folder

    def __reduce__(self):
        return PatternedFolder, (str(self), self.pattern)


def patterned(path, pattern: PathPattern | None):
    """`path` with its pattern when it is a folder (a file is read as it is)."""
    if pattern is None or not isinstance(path, str) or not Path(path).is_dir():
        return path
    return PatternedFolder(path, pattern)


def input_files(path: str) -> list[Path]:
    """The files of an input: the file itself or the folder's input files in name order (with
    a path pattern: those in the folders it names, in time order)."""
    p = Path(path)
    if p.is_file():
        return [p]
    pattern = getattr(path, "pattern", None)
    if p.is_dir() and pattern is not None:
        timed = [(pattern.time_of(f.parent.relative_to(p).as_posix()), f)
                 for f in p.glob(pattern.glob() + "/*") if f.is_file()
                 and f.suffix in INPUT_SUFFIXES]
        return [f for when, f in sorted((w, f) for w, f in timed if w is not None)]
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
