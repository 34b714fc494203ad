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
