"""Values typed per event as Spark variants: each written as itself (a number as a number, a
record as its JSON object). Spark casts no record, array or map to VARIANT: to_variant_object
builds those."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

NESTED = (T.StructType, T.ArrayType, T.MapType)


def as_variant(value: Column, kind: T.DataType | None) -> Column:
    """`value` (of Spark type `kind`) as a variant; a NULL of no type casts from a typed NULL."""
    if isinstance(kind, NESTED):
        return F.to_variant_object(value)
    if isinstance(kind, T.NullType):
        return F.lit(None).cast("variant")
    return value.cast("variant")


def with_float_numbers(value: Column) -> Column:
    """A variant read from JSON holds a number with a fraction as a decimal, which Spark writes
    without its trailing zeros (21.0 as 21): as ASA types it, a float (written 21.0, as every
    other float is). Its other values as they are."""
    decimal = F.schema_of_variant(value).startswith("DECIMAL")
    return F.when(decimal, F.try_variant_get(value, "$", "double").cast("variant")) \
        .otherwise(value)


def variant_text(value: Column) -> Column:
    """A value typed per event as text: a text as itself, anything else as its JSON (a record
    as its object), as Spark's inference would have widened the field for all events."""
    return F.when(F.schema_of_variant(value) == "STRING",
                  F.try_variant_get(value, "$", "string")).otherwise(F.to_json(value))


def variant_type_name(value: Column) -> Column:
    """ASA's GetType of a value typed per event: its own type's name (NULL for NULL)."""
    kind = F.schema_of_variant(value)
    return (F.when(value.isNull() | F.is_variant_null(value), F.lit(None).cast("string"))
            .when(kind == "STRING", "nvarchar(max)").when(kind == "BOOLEAN", "bit")
            .when(kind.isin("BIGINT", "INT", "SMALLINT", "TINYINT"), "bigint")
            .when(kind.startswith("OBJECT"), "record").when(kind.startswith("ARRAY"), "array")
            .otherwise("float"))


def unwrap_variants(left: Column, right: Column, scope: Scope, op: str,
                     span) -> tuple[Column, Column]:
    """A value typed per event (a variant: a field whose events disagree in type, a property
    of a record whose properties differ in type) beside a typed one is read as that type:
    text as text, anything else as a number. A value that is not one (text that is no number,
    a record compared with a number) is NULL, and a data error: ASA stops the job when an
    implicit conversion fails, and so does asaql by default (`--on-data-error`), as for a failed
    CAST."""
    kinds = [scope.type_of(side) for side in (left, right)]
    variant = [isinstance(kind, T.VariantType) for kind in kinds]
    if variant[0] == variant[1]:
        return left, right
    other = kinds[1] if variant[0] else kinds[0]
    target = "string" if isinstance(other, T.StringType) else \
        "timestamp" if isinstance(other, T.TimestampType) else \
        "boolean" if isinstance(other, T.BooleanType) else "double"
    what = "arithmetic" if op in ("+", "-", "*", "/", "%") else "the comparison"
    read = read_variant_as(left if variant[0] else right, target, f"{what} '{op}'", span, scope)
    return (read, right) if variant[0] else (left, read)


def read_variant_as(value: Column, target: str, needer: str, span, scope: Scope) -> Column:
    """A variant read as `target` (a Spark type name); a value that is not one is NULL and a
    data error naming what needed it (`needer`: "the comparison '>'", "MIN") and where."""
    read = F.try_variant_get(value, "$", target)
    where = f" (line {span.line}, column {span.column})" if span else ""
    scope.record_failure(
        value.isNotNull() & ~F.is_variant_null(value) & read.isNull(),
        F.concat(F.lit("the value "), F.to_json(value), F.lit(
            f" is not a {_ASA_NAMES[target]} as {needer} needs{where}")))
    return read


_ASA_NAMES = {"string": "nvarchar(max)", "timestamp": "datetime", "boolean": "bit",
              "double": "float"}
