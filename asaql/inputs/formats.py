"""The formats of file inputs (JSON lines, CSV, Parquet, Avro) and how each file's records
become JSON objects, one per line of the record: the shape the Spark reader parses and checks
(asaql/spark/sources/io.py), so every format keeps what the JSON-lines path guarantees (file and row of
each record, malformed records set aside with a reason). Plain Python (the csv module, pyarrow,
fastavro), no pyspark: `asaql check` reads its samples with the same code."""

from __future__ import annotations

import base64
import csv
import io
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timezone
from decimal import Decimal
from pathlib import Path

from asaql.errors import ConfigurationError

# File extension → format. `.json` is JSON lines, as ASA's "line separated" JSON input.
FORMATS = {".jsonl": "json", ".json": "json", ".csv": "csv", ".parquet": "parquet",
           ".avro": "avro"}
SUFFIXES = {name: tuple(s for s, f in FORMATS.items() if f == name)
            for name in dict.fromkeys(FORMATS.values())}
# The delimiters ASA's CSV serialization offers.
DELIMITERS = {",": "comma", ";": "semicolon", "\t": "tab", "|": "pipe", " ": "space"}

# One record: its row in the file (1-based: a line for JSON and CSV — where the record starts —
# a row for Parquet and Avro), its JSON object text (None when it could not be read), and the
# reason it is malformed (None when it is not).
Record = tuple[int, "str | None", "str | None"]


@dataclass(frozen=True)
class InputFormat:
    name: str  # json, csv, parquet, avro
    delimiter: str | None = None  # CSV: None finds it from the header row


def parse_input_format(text: str) -> InputFormat:
    """`--input-format` values: json, parquet, avro, csv or csv:DELIMITER (comma, semicolon,
    tab, pipe, space, or the character)."""
    name, _, delimiter = text.strip().lower().partition(":")
    if name not in SUFFIXES or (delimiter and name != "csv"):
        raise ConfigurationError(f"unknown input format '{text}': use json, csv, "
                                 "csv:DELIMITER, parquet or avro")
    if not delimiter:
        return InputFormat(name)
    by_name = {word: char for char, word in DELIMITERS.items()}
    char = by_name.get(delimiter, delimiter if delimiter in DELIMITERS else None)
    if char is None:
        raise ConfigurationError(f"unknown CSV delimiter '{delimiter}': use "
                                 + ", ".join(DELIMITERS.values()))
    return InputFormat(name, char)


def format_of_file(path: str | Path) -> str | None:
    return FORMATS.get(Path(path).suffix)


def resolve_format(files: list[Path], path: str,
                   declared: InputFormat | None = None) -> InputFormat:
    """The input's format: as its run declares it (--input-format), else its files'
    extension."""
    return declared or InputFormat(input_format(files, path))


def input_format(files: list[Path], path: str) -> str:
    """The one format of an input's files; a folder mixing formats is refused, naming two."""
    found: dict[str, Path] = {}
    for file in files:
        found.setdefault(format_of_file(file) or "json", file)
    if len(found) > 1:
        (one, first), (other, second) = list(found.items())[:2]
        raise ConfigurationError(
            f"input folder {path} mixes formats: {first.name} is {one}, {second.name} is "
            f"{other}; give each format its own folder")
    return next(iter(found), "json")


def records(path: str, data: bytes, fmt: str, delimiter: str | None = None) -> Iterator[Record]:
    """The records of one file's bytes in format `fmt` (not "json": its lines are read by
    Spark natively)."""
    if fmt == "csv":
        yield from _csv_records(data, delimiter)
    elif fmt == "parquet":
        yield from _parquet_records(data)
    elif fmt == "avro":
        yield from _avro_records(data)
    else:
        raise ValueError(f"no record decoder for {fmt}")


def _csv_records(data: bytes, delimiter: str | None) -> Iterator[Record]:
    """A header row, then one event per row; every value is text, as in ASA (an empty field is
    NULL). A row whose number of fields is not the header's is malformed."""
    text = data.decode("utf-8", errors="replace").lstrip("\ufeff")
    delimiter = delimiter or sniff_delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    header: list[str] | None = None
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as error:  # e.g. text after a closing quote; reading goes on after it
            raw = "\n".join(text.split("\n", reader.line_num)[start - 1:reader.line_num])
            yield start, raw[:10_000], f"malformed CSV: {error}"
            start = reader.line_num + 1
            continue
        line, start = start, reader.line_num + 1
        raw = delimiter.join(row)
        if not row or not raw.strip():
            continue
        if header is None:
            header = row
            repeated = sorted({n for n in row if row.count(n) > 1})
            if repeated:
                yield line, raw, f"the CSV header names '{repeated[0]}' twice"
                return
            continue
        if "\ufffd" in raw:
            yield line, raw, "invalid UTF-8"
        elif len(row) != len(header):
            yield line, raw, (f"{len(row)} fields where the CSV header has {len(header)} "
                              f"(delimiter {DELIMITERS.get(delimiter, repr(delimiter))})")
        else:
            yield line, json.dumps({name: value if value != "" else None
                                    for name, value in zip(header, row)},
                                   ensure_ascii=False), None


def sniff_delimiter(text: str) -> str:
    """The delimiter of a CSV text: the one of ASA's that its header row holds most often
    (space only when none of the others is there); a comma for a one-column header."""
    header = text.split("\n", 1)[0]
    counts = {d: header.count(d) for d in DELIMITERS if d != " "}
    best = max(counts, key=lambda d: counts[d])
    if counts[best]:
        return best
    return " " if header.strip().count(" ") else ","


def _parquet_records(data: bytes) -> Iterator[Record]:
    import pyarrow.parquet as pq

    row = 0
    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
        for batch in parquet.iter_batches(batch_size=4096):
            for record in batch.to_pylist():
                row += 1
                yield row, _json_object(record), None
    except Exception as error:  # noqa: BLE001 - an unreadable file is malformed input
        yield row + 1, None, f"cannot read the Parquet file{_from_row(row)}: {_short(error)}"


def _avro_records(data: bytes) -> Iterator[Record]:
    import fastavro

    row = 0
    try:
        for record in fastavro.reader(io.BytesIO(data)):
            row += 1
            if isinstance(record, dict):
                yield row, _json_object(record), None
            else:
                yield row, None, f"an Avro {type(record).__name__}, not a record"
    except Exception as error:  # noqa: BLE001 - an unreadable file is malformed input
        yield row + 1, None, f"cannot read the Avro file{_from_row(row)}: {_short(error)}"


def _from_row(row: int) -> str:
    return f" from row {row + 1} on" if row else ""


def _short(error: Exception) -> str:
    return (str(error) or type(error).__name__).splitlines()[0][:200]


def _json_object(record: dict) -> str:
    return json.dumps(record, ensure_ascii=False, default=_json_value, allow_nan=True)


def _json_value(value):
    """Values JSON has no type for, as ASA's JSON text of them: datetimes in ISO 8601 UTC."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return value.isoformat(timespec="microseconds") + "Z"
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value) if math.isfinite(value) else str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if hasattr(value, "total_seconds"):  # a duration
        return value.total_seconds()
    return str(value)


def json_records(data: bytes) -> Iterator[Record]:
    """A JSON-lines file's non-blank lines as records (asaql's control records)."""
    for number, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
        if line.strip():
            yield number, line.rstrip("\r"), None


def sample_records(file: Path, fmt: str, limit: int,
                   delimiter: str | None = None) -> Iterator[dict]:
    """Up to `limit` well-formed records of a file as dicts (check's samples, field order)."""
    with open(file, "rb") as handle:
        data = handle.read()
    for count, (_, text, problem) in enumerate(records(str(file), data, fmt, delimiter)):
        if count >= limit:
            return
        if problem is None and text is not None:
            yield json.loads(text)
