"""ASA's record, array and metadata functions as Spark Columns (asaql/spark/lowering/
scalar_functions.py has the rules all functions follow). Which metadata property a
GetMetadataPropertyValue reads comes resolved by the planner (`call.metadata_property`)."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.core.metadata import user_property_name
from asaql.errors import UnsupportedFeatureError
from asaql.plan import expressions as E
from asaql.inputs.position import ELEMENT_BITS
from asaql.runtime import columns as C
from asaql.spark.sources.kafka_input import HEADERS_COLUMN, KEY_COLUMN, PROCESSED_FIELD
from asaql.spark.sources.blob_paths import BLOB_NAME
from asaql.spark.sources.kafka_source import KAFKA_FILE_PREFIX
from asaql.spark.lowering.variants import as_variant


def _null() -> Column:
    return F.lit(None)


def _record_property(args, call, scope) -> Column:
    record, name, name_node = args[0], args[1], call.args[1]
    kind = scope.type_of(record)
    if isinstance(kind, T.VariantType):  # a record in this event, or not: its properties
        record = F.try_variant_get(record, "$", "map<string, variant>")
        return scope.typed(F.try_element_at(record, name.cast("string")), T.VariantType())
    if isinstance(kind, T.MapType):
        return F.try_element_at(record, name.cast("string"))
    if not isinstance(kind, T.StructType):
        return _null()  # not a record (or a field no event has): no property
    if isinstance(name_node, E.Literal):
        return _struct_field(record, kind, name_node.value)
    # a name known per event: pick among the record's properties. When they differ in type
    # (numbers beside a nested record), the value is a variant, written as itself and read as
    # the type of what it is compared with (expressions.py, _unwrap_variants).
    if not kind.fields:
        return _null()
    types = {f.dataType.simpleString() for f in kind.fields}
    mixed = len(types) > 1
    wanted, value = F.lower(name.cast("string")), None
    for field in kind.fields:
        match = wanted == field.name.lower()
        picked = as_variant(record[field.name], field.dataType) if mixed else record[field.name]
        value = F.when(match, picked) if value is None else value.when(match, picked)
    return scope.typed(value, T.VariantType() if mixed else kind.fields[0].dataType)


def _struct_field(record: Column, kind: T.StructType, name) -> Column:
    # property names match without regard to case, as field names do
    if not isinstance(name, str):
        return _null()
    field = next((f for f in kind.fields if f.name == name), None) or \
        next((f for f in kind.fields if f.name.lower() == name.lower()), None)
    return record[field.name] if field is not None else _null()


def _array_element(args, call, scope) -> Column:
    # 0-based; an index outside the array gives NULL
    array = variant_array(args[0], scope)
    if not isinstance(scope.type_of(array), T.ArrayType):
        return _null()
    return scope.typed(F.get(array, args[1].cast("int")), scope.type_of(array).elementType)


def _array_length(args, call, scope) -> Column:
    array = variant_array(args[0], scope)
    if not isinstance(scope.type_of(array), T.ArrayType):
        return _null()
    return F.array_size(array).cast("bigint")


def variant_array(value: Column, scope) -> Column:
    """A value typed per event, as an array of such values (NULL where the event's value is no
    array); any other value as it is."""
    if not isinstance(scope.type_of(value), T.VariantType):
        return value
    return scope.typed(F.try_variant_get(value, "$", "array<variant>"),
                       T.ArrayType(T.VariantType()))


_METADATA_COLUMNS = {"EventEnqueuedUtcTime": C.ARRIVAL, "PartitionId": C.PARTITION}


def _metadata_property(args, call, scope) -> Column:
    # the first argument is the input alias: one input per statement, nothing to choose
    prop = call.metadata_property
    frame = getattr(scope, "frame", None)
    columns = frame.columns if frame is not None else None
    if columns is not None and _METADATA_COLUMNS.get(prop, C.FILE) not in columns:
        raise UnsupportedFeatureError("GetMetadataPropertyValue() is supported in statements "
                                      "without GROUP BY so far", call.span)
    if prop in _METADATA_COLUMNS:
        return F.col(_METADATA_COLUMNS[prop])
    if prop == "BlobLastModifiedUtcTime":  # a file's time (its folder's, with a pattern)
        return F.when(~F.col(C.FILE).startswith(KAFKA_FILE_PREFIX), F.col(C.ARRIVAL))
    if prop == "BlobName":  # its path from where the path pattern starts; else its name
        own = F.url_decode(F.regexp_extract(F.col(C.FILE), "[^/]+$", 0))
        blob = F.coalesce(F.col(BLOB_NAME), own) if columns is not None \
            and BLOB_NAME in columns else own
        return F.when(~F.col(C.FILE).startswith(KAFKA_FILE_PREFIX), blob)
    if prop == "EventProcessedUtcTime":  # a topic's events carry it; a file's: this batch's
        return F.col(PROCESSED_FIELD) if columns is not None and PROCESSED_FIELD in columns \
            else F.current_timestamp()
    if prop == "EventId":  # unique and the same on a replay: where the event was read (the
        # file or topic, the line or offset, the element of a JSON array)
        return F.concat_ws(":", F.col(C.FILE), F.shiftright(F.col(C.LINE), ELEMENT_BITS),
                           F.col(C.LINE).bitwiseAND((1 << ELEMENT_BITS) - 1))
    if prop in ("Offset", "SequenceNumber"):  # the Kafka offset (NULL for a file's events)
        return F.when(F.col(C.FILE).startswith(KAFKA_FILE_PREFIX),
                      F.shiftright(F.col(C.LINE), ELEMENT_BITS))
    # the record's key and headers, read from the topic for a query that asks (plan/metadata.py)
    if prop == "PartitionKey":
        return F.col(KEY_COLUMN) if columns is not None and KEY_COLUMN in columns \
            else F.lit(None).cast("string")
    name = user_property_name(prop)
    if columns is not None and HEADERS_COLUMN in columns:
        return F.try_element_at(F.col(HEADERS_COLUMN), F.lit(name))
    return F.lit(None).cast("string")


def _json_parse(args, call, scope) -> Column:
    """JSON_PARSE(text): the record (or array, or value) the JSON text holds, as a Spark
    variant (its shape is known per event only); text that is no JSON gives NULL."""
    return F.try_parse_json(args[0].cast("string"))


RECORD_FUNCTIONS: dict = {
    "json_parse": _json_parse,
    "getrecordpropertyvalue": _record_property,
    "getarrayelement": _array_element,
    "getarraylength": _array_length,
    "getmetadatapropertyvalue": _metadata_property,
}
