"""The fields a run's events have, from the schema Spark inferred, as the plain dictionaries
`asaql check` reads from a sample (asaql/analysis/sample_schema.py's Sample): so a run reports
a field no event has as check does, one finding in one form (asaql/cli/options.py)."""

from __future__ import annotations

from pyspark.sql import types as T

from asaql.runtime import columns as C


def schema_sample(schema: T.StructType | None) -> dict | None:
    """Sample's fields, names and kinds; None when nothing is known yet (no schema, or none of
    its fields: an empty folder a --follow run waits on), so no field is reported missing."""
    fields = [f for f in (schema.fields if schema is not None else ()) if f.name not in C.INTERNAL]
    if not fields:
        return None
    sample = {"fields": {}, "names": {}, "kinds": {}}
    for field in fields:
        sample["names"].setdefault(field.name.lower(), field.name)
        sample["fields"][field.name.lower()] = _nested(field.dataType)
        _note_kinds(sample["kinds"], (field.name.lower(),), field.dataType)
    return sample


def _note_kinds(kinds: dict, path: tuple[str, ...], kind: T.DataType) -> None:
    kinds[path] = _kind(kind)
    if isinstance(kind, T.StructType):
        for field in kind.fields:
            _note_kinds(kinds, (*path, field.name.lower()), field.dataType)


def _kind(kind: T.DataType) -> str:
    if isinstance(kind, T.StructType):
        return "record"
    if isinstance(kind, T.ArrayType):
        return "array"
    if isinstance(kind, T.BooleanType):
        return "bit"
    if isinstance(kind, T.NumericType):
        return "number"
    # a field Spark read as text: its values were text, or mixed (inference widens to text)
    return "text" if isinstance(kind, T.StringType) else "other"


def _nested(kind: T.DataType) -> dict:
    if not isinstance(kind, T.StructType):
        return {}  # a value or an array: every path below it is accepted (has_path)
    return {f.name.lower(): _nested(f.dataType) for f in kind.fields}
