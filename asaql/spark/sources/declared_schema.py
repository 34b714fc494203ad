"""CREATE TABLE at read time: each declared column converted to its ASA type, and the reason an
event does not conform (a value that does not convert) for the errors output.

ASA drops such events and reports a data conversion error; asaql sets them aside as malformed
with the field, the declared type and the value, like any malformed event (nothing is lost
silently). A declared column the event lacks is NULL; fields not declared are kept as read.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_NUMERIC = (*_INTEGRAL, T.FloatType, T.DoubleType, T.DecimalType)
_SPARK_TYPES = {"bigint": T.LongType(), "float": T.DoubleType(), "nvarchar(max)": T.StringType(),
                "datetime": T.TimestampType(), "bit": T.BooleanType()}


def target_type(read: T.DataType | None, asa_type: str) -> T.DataType:
    """The Spark type of a declared column: a record or an array keeps the shape it was read
    with (a string when no event has it as one)."""
    if asa_type == "record":
        return read if isinstance(read, (T.StructType, T.MapType)) else T.StringType()
    if asa_type == "array":
        return read if isinstance(read, T.ArrayType) else T.ArrayType(T.StringType())
    return _SPARK_TYPES[asa_type]


def declared_struct(schema: T.StructType, declared: tuple[tuple[str, str], ...]) -> T.StructType:
    """The payload's schema once declared columns are converted (and added where missing)."""
    if not declared:
        return schema
    types = {name.lower(): asa_type for name, asa_type in declared}
    fields = [T.StructField(f.name, target_type(f.dataType, types[f.name.lower()]))
              if f.name.lower() in types else f for f in schema.fields]
    present = {f.name.lower() for f in schema.fields}
    fields += [T.StructField(name, target_type(None, asa_type))
               for name, asa_type in declared if name.lower() not in present]
    return T.StructType(fields)


def converted(value: Column, read: T.DataType | None, asa_type: str) -> Column:
    """The value as `asa_type`, NULL where it does not convert; `read`: its type as read
    (None: no event has the field)."""
    if read is None:
        return F.lit(None).cast(target_type(None, asa_type))
    if isinstance(read, T.VariantType):  # events disagree in type: each value as its text
        value, read = F.try_variant_get(value, "$", "string"), T.StringType()
    if asa_type == "bigint":
        if isinstance(read, _INTEGRAL):
            return value.cast("bigint")
        if isinstance(read, _NUMERIC):  # 2.0 is a bigint, 2.5 is not
            return F.when(value == F.floor(value), value.cast("bigint"))
        if isinstance(read, T.StringType):  # "12", or "3.0" read beside other texts
            number = F.trim(value).try_cast("double")
            return F.coalesce(F.trim(value).try_cast("bigint"),
                              F.when(number == F.floor(number), number.cast("bigint")))
        return F.lit(None).cast("bigint")
    if asa_type == "float":
        return value.cast("double") if isinstance(read, _NUMERIC) else \
            _try_cast(value, read, "double")
    if asa_type == "nvarchar(max)":
        if isinstance(read, (T.StructType, T.ArrayType, T.MapType)):
            return F.to_json(value)
        return value.cast("string")
    if asa_type == "datetime":
        if isinstance(read, (T.TimestampType, T.TimestampNTZType)):
            return value.cast("timestamp")
        return F.try_to_timestamp(value.cast("string")) if isinstance(read, T.StringType) \
            else F.lit(None).cast("timestamp")
    if asa_type == "bit":
        if isinstance(read, T.BooleanType):
            return value
        if isinstance(read, _NUMERIC):
            return F.when(value == 1, True).when(value == 0, False)
        if isinstance(read, T.StringType):
            lowered = F.lower(F.trim(value))
            return F.when(lowered.isin("true", "1"), True).when(lowered.isin("false", "0"), False)
        return F.lit(None).cast("boolean")
    if asa_type == "record" and isinstance(read, (T.StructType, T.MapType)) or \
            asa_type == "array" and isinstance(read, T.ArrayType):
        return value
    return F.lit(None).cast(target_type(None, asa_type))  # no record or array


def _try_cast(value: Column, read: T.DataType, target: str) -> Column:
    if isinstance(read, T.StringType):
        return F.trim(value).try_cast(target)
    return F.lit(None).cast(target)  # a record, an array or a bit is no number


def conform(fields: dict[str, tuple[Column, T.DataType | None]],
            declared: tuple[tuple[str, str], ...]) -> tuple[dict[str, Column], Column]:
    """`fields`: lower-case name → (the value as read, its type). → (lower-case declared name
    → converted value, the reason the event does not conform or NULL)."""
    values, reasons = {}, []
    for name, asa_type in declared:
        value, read = fields.get(name.lower(), (None, None))
        result = converted(value, read, asa_type)
        values[name.lower()] = result
        if read is not None:
            shown = F.to_json(F.array(value)) if isinstance(read, (T.StructType, T.ArrayType)) \
                else value.cast("string")
            reasons.append(F.when(value.isNotNull() & result.isNull(), F.concat(
                F.lit(f"field '{name}' is not a {asa_type} as CREATE TABLE declares: "),
                F.coalesce(shown, F.lit("?")))))
    return values, (F.coalesce(*reasons) if reasons else F.lit(None).cast("string"))
