"""The fields a sample input gives (JSON lines, CSV, Parquet or Avro), read without Spark: `asaql check
--input ALIAS=PATH` names the columns a query reads that no event of the sample has."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from asaql.core.value_kinds import value_kind
from asaql.errors import ConfigurationError
from asaql.inputs.files import input_files
from asaql.inputs.formats import InputFormat, resolve_format, sample_records
from asaql.inputs.records import json_file_records

MAX_EVENTS = 10_000  # enough to see the fields of a sample; a check stays fast


@dataclass
class Sample:
    fields: dict[str, dict] = field(default_factory=dict)  # lower-case name → nested fields
    names: dict[str, str] = field(default_factory=dict)  # lower-case name → as first spelled
    # lower-case path → what its values are: "number", "text", "bit", "record", "array", or
    # "mixed" when events disagree (a check warns of text compared with a number)
    kinds: dict[tuple[str, ...], str] = field(default_factory=dict)


def sample_fields(path: str) -> Sample | None:
    """The fields of the sample's events (up to MAX_EVENTS), read from the files `asaql run`
    reads for PATH; None when PATH does not exist."""
    try:
        files = input_files(path)
    except ConfigurationError:
        return None
    try:
        fmt = resolve_format(files, path)
    except ConfigurationError:  # a folder of mixed formats: `run` says so
        return None
    sample = Sample()
    seen = 0
    for file in files:
        for record in _records(file, fmt):
            _merge(sample.fields, record)
            _note_kinds(sample.kinds, record, ())
            for name in record:
                sample.names.setdefault(str(name).lower(), str(name))
            seen += 1
            if seen >= MAX_EVENTS:
                return sample
    return sample


def has_path(fields: dict[str, dict], path: tuple[str, ...]) -> bool:
    """Whether the sample has the field path; below a field that is not a record in the
    sample (a value, or an array) every path is accepted."""
    level = fields
    for part in path:
        if part.lower() not in level:
            return False
        level = level[part.lower()]
        if not level:
            return True
    return True


def _records(file: Path, fmt: InputFormat):
    try:
        if fmt.name != "json":  # CSV, Parquet, Avro: decoded as `run` decodes them
            yield from sample_records(file, fmt.name, MAX_EVENTS, fmt.delimiter)
            return
        # a malformed record is skipped, as `run` sets it aside; an array's objects are records
        yield from json_file_records(file, MAX_EVENTS)
    except OSError:
        return


def _merge(fields: dict[str, dict], record: dict) -> None:
    for name, value in record.items():
        nested = fields.setdefault(str(name).lower(), {})
        if isinstance(value, dict):
            _merge(nested, value)


def note_kind(kinds: dict, path: tuple[str, ...], kind: str | None) -> None:
    if kind is not None:
        kinds[path] = kind if kinds.get(path, kind) == kind else "mixed"


def _note_kinds(kinds: dict, record: dict, prefix: tuple[str, ...]) -> None:
    for name, value in record.items():
        path = (*prefix, str(name).lower())
        note_kind(kinds, path, value_kind(value))
        if isinstance(value, dict):
            _note_kinds(kinds, value, path)
