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

from collections.abc import Callable

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.runtime import columns as C

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


def _candidates(kind: T.DataType, path: Path):
    """The paths (through records only) of the text fields and of the arrays holding text; not
    the arrival time and the partition, whose values have their own checks (records.py: a
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
    return ".".join("`" + part.replace("`", "``") + "`" for part in path)


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
