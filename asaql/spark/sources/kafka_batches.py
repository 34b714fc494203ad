"""A topic partition's records handed to Spark as Arrow record batches, not rows.

A Python data source's rows are converted by PySpark value by value (a converter call per
field: a datetime made and taken apart again per record); a `pyarrow.RecordBatch` goes to the
JVM as it is. So the reader fills plain columns (the arrival time as microseconds) and makes a
batch of them every BATCH_ROWS records, typed exactly as PySpark's worker expects the
source's schema (it compares the first batch's Arrow schema with its own).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

# Spark's own default batch size (spark.sql.execution.arrow.maxRecordsPerBatch)
BATCH_ROWS = 10_000


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema PySpark's data source worker checks batches against (UTC times)."""
    return to_arrow_schema(schema, timezone="UTC")


class RecordColumns:
    """Rows in the source's column order, gathered as columns; timestamps as µs since the
    epoch, maps as dicts."""

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self.columns: list[list] = [[] for _ in schema]

    def add(self, row: tuple) -> None:
        for column, value in zip(self.columns, row):
            column.append(value)

    def __len__(self) -> int:
        return len(self.columns[0])

    def batch(self) -> pa.RecordBatch:
        """The rows added since the last batch, as one; the columns start empty again."""
        arrays = [_array(field.type, values) for field, values in zip(self.schema, self.columns)]
        self.columns = [[] for _ in self.schema]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _array(kind: pa.DataType, values: list) -> pa.Array:
    if pa.types.is_timestamp(kind):
        return pa.array(values, pa.int64()).cast(kind)
    if pa.types.is_map(kind):
        return pa.array([None if v is None else list(v.items()) for v in values], kind)
    return pa.array(values, kind)


class JsonMessages:
    """The common case's columns (JSON messages, neither key nor headers asked for): per
    message only its time, offset and bytes are kept, and the text is made per batch by Arrow
    (UTF-8 checked in C; a batch with a bad byte decoded message by message, with U+FFFD as
    Python's "replace" gives). The other columns are the partition's constants or NULL."""

    def __init__(self, schema: pa.Schema, file: str, partition: int):
        self.schema, self.file, self.partition = schema, file, partition
        self.stamps: list[int] = []
        self.offsets: list[int] = []
        self.values: list[bytes | None] = []

    def add(self, stamp_ms: int, offset: int, value: bytes | None) -> None:
        self.stamps.append(stamp_ms)
        self.offsets.append(offset)
        self.values.append(value)

    def __len__(self) -> int:
        return len(self.offsets)

    def batch(self) -> pa.RecordBatch:
        count = len(self.offsets)
        kinds = [field.type for field in self.schema]
        arrival = pc.multiply(pa.array(self.stamps, pa.int64()), 1000).cast(kinds[1])
        arrays = [pa.array([self.file] * count, kinds[0]), arrival,
                  pa.array(self.offsets, kinds[2]), _texts(self.values),
                  pa.array([self.partition] * count, kinds[4]),
                  *[pa.nulls(count, kind) for kind in kinds[5:]]]
        self.stamps, self.offsets, self.values = [], [], []
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)


def _texts(values: list) -> pa.Array:
    """Each message's text: "" for none, a leading byte-order mark dropped."""
    raw = pa.array(values, pa.binary())
    try:
        texts = raw.cast(pa.string())
    except pa.ArrowInvalid:
        texts = pa.array([None if v is None else v.decode("utf-8", errors="replace")
                          for v in values], pa.string())
    texts = pc.fill_null(texts, "")
    if pc.any(pc.starts_with(texts, "\ufeff")).as_py():
        texts = pc.replace_substring_regex(texts, "^\ufeff", "", max_replacements=1)
    return texts
