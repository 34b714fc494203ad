"""Spark's JSON schema inference, done in the driver for a small input (io.SMALL_INPUT_BYTES).

Spark infers a schema with a job over every line: on a small input that job is most of a
second of a run's start (the JVM's first job). Reading the records here gives the same schema
by Spark's own rules (JsonInferSchema: integers long, beyond long a decimal of their digits,
other numbers double, text string ("" as NULL), a record's fields sorted by name and merged
field by field, arrays element by element, long and double to double, decimals widened, any
other disagreement text, NULL-only fields text, empty records dropped). Only the plain case is
taken: every line blank or one JSON object Python's parser reads as Jackson would; anything
else (a byte-order mark, bad JSON, an array, a duplicate key, deep nesting, a PartitionId that
is no number) returns None and the caller runs Spark's inference, which has the careful path
for those (io.py). tests/property checks both give the same schema on random events.
"""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import types as T

_LONG = 1 << 63
_MAX_PRECISION = 38
_JSON_SPACE = " \t\r\n"


class _Pairs(list):
    """A JSON object as its (key, value) pairs: a key given twice stays twice, as in Spark's
    inference (Python's dict would keep the last value only)."""


def inferred_in_driver(files: list[Path]) -> T.StructType | None:
    """Spark's inferred schema of the JSON-lines `files`, or None when a line is not the plain
    case (the caller then asks Spark)."""
    merged: T.DataType = T.NullType()
    for file in files:
        try:
            with open(file, encoding="utf-8", newline="") as handle:
                for line in handle:
                    text = line.strip(_JSON_SPACE)
                    if not text:
                        continue
                    if not text.startswith("{"):
                        return None
                    try:
                        record = json.loads(text, object_pairs_hook=_Pairs)
                    except (ValueError, RecursionError):
                        return None
                    if _duplicate_top_level_key(record):
                        return None
                    merged = _compatible(merged, _type_of(record))
        except (OSError, UnicodeDecodeError):
            return None
    result = _canonical(merged)
    return result if isinstance(result, T.StructType) else T.StructType([])


def _duplicate_top_level_key(record: _Pairs) -> bool:
    names = [key.lower() for key, _ in record]
    return len(set(names)) != len(names)


def _sort_key(name: str) -> bytes:
    """Java's String.compareTo: UTF-16 code units."""
    return name.encode("utf-16-be", "surrogatepass")


def _type_of(value) -> T.DataType:
    """JsonInferSchema.inferField for one parsed value."""
    if value is None:
        return T.NullType()
    if isinstance(value, bool):
        return T.BooleanType()
    if isinstance(value, int):
        if -_LONG <= value < _LONG:
            return T.LongType()
        digits = len(str(abs(value)))
        return T.DecimalType(digits, 0) if digits <= _MAX_PRECISION else T.DoubleType()
    if isinstance(value, float):
        return T.DoubleType()
    if isinstance(value, str):  # Spark takes "" for NULL (generators that write one for the other)
        return T.StringType() if value else T.NullType()
    if isinstance(value, _Pairs):
        fields = [T.StructField(key, _type_of(item), True) for key, item in value]
        fields.sort(key=lambda f: _sort_key(f.name))  # stable, as Arrays.sort of objects
        return T.StructType(fields)
    element: T.DataType = T.NullType()
    for item in value:
        element = _compatible(element, _type_of(item))
    return T.ArrayType(element, True)


def _compatible(a: T.DataType, b: T.DataType) -> T.DataType:
    """JsonInferSchema.compatibleType (after TypeCoercion.findTightestCommonType)."""
    if a == b:
        return a
    if isinstance(a, T.NullType):
        return b
    if isinstance(b, T.NullType):
        return a
    numbers = (T.LongType, T.DoubleType)
    if isinstance(a, numbers) and isinstance(b, numbers):
        return T.DoubleType()
    if isinstance(a, T.DoubleType) and isinstance(b, T.DecimalType) or \
            isinstance(a, T.DecimalType) and isinstance(b, T.DoubleType):
        return T.DoubleType()
    if isinstance(a, T.LongType) and isinstance(b, T.DecimalType):
        return _compatible(T.DecimalType(20, 0), b)
    if isinstance(a, T.DecimalType) and isinstance(b, T.LongType):
        return _compatible(a, T.DecimalType(20, 0))
    if isinstance(a, T.DecimalType) and isinstance(b, T.DecimalType):
        scale = max(a.scale, b.scale)
        whole = max(a.precision - a.scale, b.precision - b.scale)
        return T.DoubleType() if whole + scale > _MAX_PRECISION \
            else T.DecimalType(whole + scale, scale)
    if isinstance(a, T.StructType) and isinstance(b, T.StructType):
        return T.StructType(_merged_fields(a.fields, b.fields))
    if isinstance(a, T.ArrayType) and isinstance(b, T.ArrayType):
        return T.ArrayType(_compatible(a.elementType, b.elementType),
                           a.containsNull or b.containsNull)
    return T.StringType()


def _merged_fields(first: list, second: list) -> list:
    """Two name-sorted field lists merged as Spark merges them (a name in both: one field of
    the compatible type)."""
    merged, i, j = [], 0, 0
    while i < len(first) and j < len(second):
        left, right = _sort_key(first[i].name), _sort_key(second[j].name)
        if left == right:
            merged.append(T.StructField(first[i].name, _compatible(
                first[i].dataType, second[j].dataType), True))
            i, j = i + 1, j + 1
        elif left < right:
            merged.append(first[i])
            i += 1
        else:
            merged.append(second[j])
            j += 1
    return merged + first[i:] + second[j:]


def _canonical(kind: T.DataType) -> T.DataType | None:
    """JsonInferSchema.canonicalizeType: NULL-only → text, empty records (and fields with no
    name) dropped."""
    if isinstance(kind, T.ArrayType):
        element = _canonical(kind.elementType)
        return None if element is None else T.ArrayType(element, kind.containsNull)
    if isinstance(kind, T.StructType):
        fields = []
        for field in kind.fields:
            if not field.name:
                continue
            inner = _canonical(field.dataType)
            if inner is not None:
                fields.append(T.StructField(field.name, inner, field.nullable, field.metadata))
        return T.StructType(fields) if fields else None
    if isinstance(kind, T.NullType):
        return T.StringType()
    return kind
