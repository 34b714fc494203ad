"""Writers of `.csv`, `.json` and `.parquet` file outputs (asaql/outputs/formats.py), each exactly
once across a kill through the journal the `.jsonl` outputs use (output_journal.py)."""

from __future__ import annotations

import os
from pathlib import Path

from asaql.outputs.formats import Columns, csv_text, output_format, write_json_array, write_parquet
from asaql.spark.sinks.locks import PortableLock
from asaql.spark.sinks.output_journal import Committed, JournaledFile


class CsvOutput:
    """Appends CSV rows; the first append to an empty file starts with the header row (after a
    restart cut the file back to nothing, too)."""

    def __init__(self, path: str, journal: str, fresh: bool, committed: Committed):
        self.path = Path(path)
        self.file = JournaledFile(path, journal, fresh, committed)
        self.columns: list[str] | None = None

    def describe(self, columns: Columns) -> None:
        self.columns = self.columns or [name for name, _ in columns]

    def append(self, text: str, query: int, batch_id: int) -> None:
        lines = [line for line in text.split("\n") if line]
        self.file.append(csv_text(lines, self.columns, header=self._empty()), query, batch_id)

    def append_files(self, parts: list[Path], query: int, batch_id: int) -> None:
        """CSV part files Spark wrote without a header (sink.py, write_file)."""
        head = csv_text([], self.columns, header=True).encode("utf-8") if self._empty() else b""
        self.file.append_files(parts, query, batch_id, head)

    @property
    def journal(self) -> Path:
        return self.file.journal

    def _empty(self) -> bool:
        return not self.path.exists() or os.path.getsize(self.path) == 0


class RebuiltOutput:
    """A `.json` array or a `.parquet` file: the rows are journaled in the checkpoint as JSON
    lines, and the file is rebuilt from them whenever rows are added and at every start."""

    def __init__(self, path: str, fmt: str, journal: str, fresh: bool, committed: Committed):
        self.path = Path(path)
        self.fmt = fmt
        self.rows = Path(journal).with_suffix(".rows.jsonl")
        self.file = JournaledFile(str(self.rows), journal, fresh, committed)
        self.columns: Columns | None = None
        self.lock = PortableLock()
        if self.fmt == "json":
            self.rebuild()

    def describe(self, columns: Columns) -> None:
        """The output's columns (their order, and their types for Parquet): known once the
        query is lowered; the file is written then, empty or with the rows committed."""
        if self.columns is None:
            self.columns = columns
            self.rebuild()

    def append(self, text: str, query: int, batch_id: int) -> None:
        self.file.append(text, query, batch_id)
        self.rebuild()

    def rebuild(self) -> None:
        with self.lock:
            if self.fmt == "json":
                write_json_array(self.rows, self.path)
            else:
                write_parquet(self.rows, self.path, self.columns)


def file_output(path: str, journal: str, fresh: bool, committed: Committed):
    """The exactly-once writer of a file output, by the path's extension."""
    fmt = output_format(path)
    if fmt == "csv":
        return CsvOutput(path, journal, fresh, committed)
    if fmt in ("json", "parquet"):
        return RebuiltOutput(path, fmt, journal, fresh, committed)
    return JournaledFile(path, journal, fresh, committed)
