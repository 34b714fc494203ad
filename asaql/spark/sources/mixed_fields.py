"""Fields whose events disagree in type, read as each event's own value (ASA types values per
event: its Data Types page, "each record of a column can have a different type").

Spark's JSON inference gives a field one type for the whole input and, where events disagree
(a number in one, text in another; a record in one, an array in another), widens it to text:
one odd event would turn every other event's number into text, its record into NULL fields.
Every disagreement ends in text, so only the fields inferred as text (or arrays holding text)
can hide one: they are read once more as variants, and `schema_of_variant_agg` tells which
hold more than one type. Those become VARIANT in the payload schema: each event keeps its
value, written as itself, and an expression reads it by the type its use asks for
(asaql/spark/lowering/expressions.py's `_unwrap_variants`, the aggregates)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.core.value_kinds import value_kind
from asaql.runtime import columns as C
from asaql.spark.text_select import quoted

Path = tuple[str, ...]


def with_mixed_as_variants(schema: T.StructType,
                           read: Callable[[T.StructType], DataFrame]) -> T.StructType:
    """`schema` with its mixed fields (at any depth of records) as VARIANT. `read(schema)`: the
    input's events read with that schema (one Spark job over the candidates only)."""
    candidates = [path for path in _candidates(schema, ())]
    if not candidates:
        return schema
    probe = _probe_schema(candidates)
    columns = [F.expr(f"schema_of_variant_agg({_reference(path)})").alias(f"c{i}")
               for i, path in enumerate(candidates)]
    found = read(probe).select(*columns).collect()[0]
    mixed = {path for path, kind in zip(candidates, found) if _is_mixed(kind)}
    return _replaced(schema, mixed, ()) if mixed else schema


def mixed_in_records(schema: T.StructType, records: Iterable[dict]) -> T.StructType:
    """`with_mixed_as_variants` asked of the records themselves, in the driver: for a small
    input, reading its records here costs less than a Spark job (about 0.8 s of a run's start).
    The same answer: a candidate is mixed when two events' values disagree in type anywhere
    inside it, as schema_of_variant_agg merges them (numbers with numbers, records field by
    field, arrays element by element, NULL with anything; tests/property checks the two
    agree)."""
    candidates = list(_candidates(schema, ()))
    merged: dict[Path, object] = {}
    mixed: set[Path] = set()
    for record in records:
        for path in candidates:
            if path in mixed:
                continue
            kind = _merge(merged.get(path), _kind_of(_value_at(record, path)))
            if kind is _MIXED:
                mixed.add(path)
            merged[path] = kind
        if len(mixed) == len(candidates):
            break
    return _replaced(schema, mixed, ()) if mixed else schema


def with_mixed_where(schema: T.StructType, mixed_at: Callable[[Path], bool]) -> T.StructType:
    """`schema` with the candidates `mixed_at` says are mixed as VARIANT (the one-pass
    inference has seen it: asaql/spark/sources/jvm_inference.py)."""
    mixed = {path for path in _candidates(schema, ()) if mixed_at(path)}
    return _replaced(schema, mixed, ()) if mixed else schema


_MIXED = object()  # two values of a field that disagree in type


def _value_at(record, path: Path):
    for part in path:
        record = record.get(part) if isinstance(record, dict) else None
    return record


def _kind_of(value):
    """A value's type as schema_of_variant sees it: None (NULL), its family's name, or a
    record's fields / an array's element type, nested."""
    kind = value_kind(value)
    if kind == "record":
        fields = {key: _kind_of(item) for key, item in value.items()}
        return _MIXED if any(kind is _MIXED for kind in fields.values()) \
            else ("record", fields)
    if kind == "array":
        element = None
        for item in value:
            element = _merge(element, _kind_of(item))
            if element is _MIXED:
                return _MIXED
        return ("array", element)
    return kind


def _merge(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a is _MIXED or b is _MIXED:
        return _MIXED
    if isinstance(a, str) or isinstance(b, str):
        return a if a == b else _MIXED
    if a[0] != b[0]:
        return _MIXED
    if a[0] == "array":
        element = _merge(a[1], b[1])
        return _MIXED if element is _MIXED else ("array", element)
    fields = dict(a[1])
    for key, kind in b[1].items():
        fields[key] = _merge(fields.get(key), kind)
        if fields[key] is _MIXED:
            return _MIXED
    return ("record", fields)


def _candidates(kind: T.DataType, path: Path):
    """The paths (through records only) of the text fields and of the arrays holding text; not
    the arrival time and the partition, whose values have their own checks (record_checks.py: a
    PartitionId that is no whole number makes the event malformed)."""
    if isinstance(kind, T.StructType):
        for field in kind.fields:
            if not path and field.name.lower() in (C.ARRIVAL_FIELD.lower(), C.PARTITION_FIELD.lower()):
                continue
            if isinstance(field.dataType, T.StringType) or (
                    isinstance(field.dataType, T.ArrayType) and _holds_text(field.dataType)):
                yield (*path, field.name)
            else:
                yield from _candidates(field.dataType, (*path, field.name))


def _holds_text(kind: T.DataType) -> bool:
    if isinstance(kind, T.StringType):
        return True
    if isinstance(kind, T.ArrayType):
        return _holds_text(kind.elementType)
    if isinstance(kind, T.StructType):
        return any(_holds_text(f.dataType) for f in kind.fields)
    return False


def _probe_schema(paths: list[Path]) -> T.StructType:
    """Only the candidates, each as VARIANT, inside the records that hold them."""
    tree: dict = {}
    for path in paths:
        level = tree
        for part in path[:-1]:
            level = level.setdefault(part, {})
        level[path[-1]] = None
    return _struct(tree)


def _struct(tree: dict) -> T.StructType:
    return T.StructType([T.StructField(name, T.VariantType() if sub is None else _struct(sub))
                         for name, sub in tree.items()])


def _reference(path: Path) -> str:
    return ".".join(quoted(part) for part in path)


def _is_mixed(kind: str | None) -> bool:
    """schema_of_variant_agg's merged type: VARIANT where two events' values disagree (the
    field's own type, or one inside its arrays and records)."""
    return kind is not None and "VARIANT" in kind


def _replaced(kind: T.DataType, mixed: set[Path], path: Path) -> T.DataType:
    if not isinstance(kind, T.StructType):
        return kind
    return T.StructType([
        T.StructField(f.name, T.VariantType() if (*path, f.name) in mixed
                      else _replaced(f.dataType, mixed, (*path, f.name)), f.nullable, f.metadata)
        for f in kind.fields])
