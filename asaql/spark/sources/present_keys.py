"""Which properties an event's records hold. A Spark struct cannot tell a property the event
lacks from one it holds as NULL (the schema is the union over the events), and ASA's
GetRecordProperties lists only the properties a record has. So, for each record field a query
lists (ReadInput.listed_records), the reader notes that JSON object's keys in a hidden column,
and the APPLY keeps the properties named there."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

PREFIX = "asaql__keys:"


def keys_column(path: tuple[str, ...]) -> str:
    """The hidden column of the keys at a record field's path (ASA's names ignore case)."""
    return PREFIX + ".".join(part.lower() for part in path)


def present_keys(text: Column, schema: T.StructType, listed: tuple) -> list[Column]:
    """For each listed path that is a record in `schema`, the keys of that object in the
    event's JSON `text` (NULL when it is not an object there)."""
    columns = []
    for path in listed:
        names = _names(schema, path)
        if names is None:
            continue
        json_path = "$" + "".join("['" + name.replace("'", "\\'") + "']" for name in names)
        columns.append(F.json_object_keys(F.get_json_object(text, json_path))
                       .alias(keys_column(path)))
    return columns


def _names(schema: T.DataType, path: tuple[str, ...]) -> list[str] | None:
    """The path's field names as the events write them (the schema's case), when it leads to a
    record; None otherwise."""
    names = []
    for part in path:
        if not isinstance(schema, T.StructType):
            return None
        field = next((f for f in schema.fields if f.name.lower() == part.lower()), None)
        if field is None:
            return None
        names.append(field.name)
        schema = field.dataType
    return names if isinstance(schema, T.StructType) else None
