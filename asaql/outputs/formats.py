"""The formats of file outputs, named by the path's extension: `.jsonl` (JSON lines), `.csv`
(a header row, then one row per line), `.json` (one JSON array), `.parquet` (one Parquet file,
datetimes as timestamps). Any other path is a folder of JSON-lines part files.

Each writer is exactly once across a kill, through the journal of asaql/spark/sinks/output_journal.py:
- `.jsonl` and `.csv` are appended to, each append journaled (a restart cuts the appends of
  micro-batches Spark did not commit);
- `.json` and `.parquet` cannot be appended to: the rows are appended (journaled) to a JSON-lines
  file in the checkpoint, and the output is rebuilt from it after each micro-batch that added
  rows — written aside, then renamed, so a reader sees a whole file, and a restart rebuilds it
  from the rows that were committed. The rebuild reads every row so far: these two formats
  suit outputs that fit in memory; a large one belongs in `.jsonl`, `.csv` or a folder.
No pyspark here (output_paths.py checks the paths before Spark starts).
"""

from __future__ import annotations

import csv
import io
import json
import os
from datetime import datetime, timezone
from pathlib import Path

FILE_FORMATS = {".jsonl": "jsonl", ".csv": "csv", ".json": "json", ".parquet": "parquet"}

# (name, Spark type as simpleString) of an output's columns
Columns = list[tuple[str, str]]


def output_format(path: str) -> str | None:
    """The format of a file output; None for a folder output."""
    return FILE_FORMATS.get(Path(path).suffix)


def csv_text(lines: list[str], columns: list[str] | None, header: bool) -> str:
    """JSON lines (each a row's object, nulls kept) → CSV rows; `columns` in order (else the
    first row's keys). Text as it is, NULL as an empty field, other values as their JSON text
    (datetimes are already ASA's text in the lines)."""
    rows = [json.loads(line) for line in lines]
    if columns is None:
        columns = list(rows[0]) if rows else []
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    if header:
        writer.writerow(columns)
    for row in rows:
        writer.writerow([_csv_value(row.get(name)) for name in columns])
    return out.getvalue()


def _csv_value(value) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def write_json_array(rows_file: Path, target: Path) -> None:
    """The rows of a JSON-lines file as one JSON array, one row per line."""
    lines = _lines(rows_file)
    text = "[\n" + ",\n".join(lines) + ("\n" if lines else "") + "]\n"
    replace_file(target, text.encode("utf-8"))


def write_parquet(rows_file: Path, target: Path, columns: Columns | None) -> None:
    """The rows of a JSON-lines file as one Parquet file; datetime columns (ASA's text in the
    lines) as timestamps in UTC."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [json.loads(line) for line in _lines(rows_file)]
    if columns is None:
        columns = [(name, "") for name in (rows[0] if rows else {})]
    types = _arrow_types()
    arrays, fields = [], []
    for name, kind in columns:
        values = [row.get(name) for row in rows]
        arrow_type = types.get(kind.split("(")[0])
        if kind.startswith("timestamp"):
            values = [None if v is None else _parse_asa_datetime(v) for v in values]
            arrow_type = pa.timestamp("us", tz="UTC")
        try:
            array = pa.array(values, type=arrow_type)
        except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed values: their JSON text
            array = pa.array([None if v is None else json.dumps(v) for v in values], pa.string())
        if pa.types.is_null(array.type):
            array = array.cast(pa.string())  # every value NULL: a text column
        arrays.append(array)
        fields.append(pa.field(name, array.type))
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), buffer)
    replace_file(target, buffer.getvalue())


def _arrow_types() -> dict:
    """Spark's simple types → Arrow's; other types (records, arrays) are inferred."""
    import pyarrow as pa

    return {"bigint": pa.int64(), "int": pa.int32(), "smallint": pa.int16(),
            "tinyint": pa.int8(), "double": pa.float64(), "float": pa.float32(),
            "string": pa.string(), "boolean": pa.bool_(), "decimal": pa.float64(),
            "date": pa.date32()}


def _parse_asa_datetime(text: str) -> datetime:
    """'2021-01-01T08:00:03.9460000Z' (as asaql writes datetimes) → an aware datetime."""
    stamp = text.rstrip("Z")
    if "." in stamp:
        whole, fraction = stamp.split(".", 1)
        stamp = f"{whole}.{fraction[:6]}"
    moment = datetime.fromisoformat(stamp)
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment


def _lines(rows_file: Path) -> list[str]:
    if not rows_file.exists():
        return []
    text = rows_file.read_text(encoding="utf-8")
    return [line for line in text.split("\n") if line.strip()]


def replace_file(target: Path, data: bytes) -> None:
    """Written aside, then renamed: a reader sees the old file or the new one, whole."""
    target.parent.mkdir(parents=True, exist_ok=True)
    aside = target.with_name(f".{target.name}.asaql-tmp")
    aside.write_bytes(data)
    os.replace(aside, target)
