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
