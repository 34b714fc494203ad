"""A topic's records as Arrow batches (asaql/spark/sources/kafka_batches.py): the common path's
columns, made per batch by Arrow, hold what the record-by-record path gives — each message's
text decoded as Python decodes it ("replace" for a bad byte), one leading byte-order mark
dropped, "" for a message without a value — and the schema PySpark's worker checks."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from asaql.spark.sources.kafka_batches import JsonMessages, RecordColumns, arrow_schema
from asaql.spark.sources.kafka_source import SCHEMA

BOM = "\ufeff".encode("utf-8")
values = st.one_of(
    st.none(),
    st.text(max_size=20).map(lambda t: t.encode("utf-8")),
    st.text(max_size=20).map(lambda t: BOM + t.encode("utf-8")),
    st.text(max_size=5).map(lambda t: BOM + BOM + t.encode("utf-8")),
    st.binary(max_size=20),  # bad UTF-8 too
)
messages = st.lists(st.tuples(st.integers(-1, 2 ** 41), st.integers(0, 2 ** 40), values),
                    max_size=30)


@settings(max_examples=200, deadline=None)
@given(messages=messages)
def test_the_common_path_gives_the_rows_of_the_general_one(messages):
    schema = arrow_schema(SCHEMA)
    fast, rows = JsonMessages(schema, "kafka:t:3", 3), RecordColumns(schema)
    for stamp, offset, value in messages:
        fast.add(stamp, offset, value)
        text = "" if value is None else value.decode("utf-8", errors="replace")
        rows.add(("kafka:t:3", stamp * 1000, offset, text.removeprefix("\ufeff"), 3, None, None,
                  None, None))
    got, expected = fast.batch(), rows.batch()
    assert got.schema.equals(schema)
    assert got.to_pylist() == expected.to_pylist()
    assert len(fast) == len(rows) == 0  # the columns start empty again


def test_times_and_headers_arrive_as_spark_reads_them():
    """The arrival time in µs is the record's millisecond stamp as a UTC datetime (as the row
    path's datetime.fromtimestamp gave it), headers a map."""
    from datetime import datetime, timezone

    batch = RecordColumns(arrow_schema(SCHEMA))
    batch.add(("f", 1_609_459_200_002 * 1000, 1, "{}", 0, "why", 2, "key", {"h": "v", "n": None}))
    row = batch.batch().to_pylist()[0]
    assert row["_asaql_mtime"] == datetime(2021, 1, 1, 0, 0, 0, 2000, tzinfo=timezone.utc)
    assert row["_asaql_headers"] == [("h", "v"), ("n", None)]
