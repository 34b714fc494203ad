"""The JVM engine's cut of a file into lines (asaql_lines, jvm/…/read/TextLines.scala) against
Spark's `split(text, '\\n')`, which the read used before and still uses without the engine:
random texts of line breaks, carriage returns, ASCII, multi-byte characters and bytes that
are not UTF-8 (a lone continuation byte, a cut sequence, an encoded surrogate, an overlong
form), empty lines and none, give the same lines. Runs of sixteen ASCII bytes and of ten bytes
that are not ASCII take the engine's check of UTF-8 eight bytes at a time and its runs of
bytes that are not ASCII.

Examples: ASAQL_TEXT_LINES_EXAMPLES (default 8); each is one Spark job over 40 texts."""

from __future__ import annotations

import os

from hypothesis import given
from hypothesis import strategies as st

from asaql.jvm.engine import TEXT_LINES
from spark_harness import property_settings

EXAMPLES = int(os.environ.get("ASAQL_TEXT_LINES_EXAMPLES", "8"))
PIECES = (b"\n", b"\n", b"\r", b"a", b"{\"k\": 1}", b" ", "é".encode(), "😀".encode(),
          b"0123456789abcdef", "ééééé".encode(),
          b"\xff", b"\x80", b"\xe2\x82", b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80")
texts = st.lists(st.lists(st.sampled_from(PIECES), max_size=12).map(b"".join),
                 min_size=40, max_size=40)


@property_settings(EXAMPLES)
@given(texts)
def test_the_engine_cuts_the_lines_spark_splits(spark, data):
    frame = spark.createDataFrame([(bytearray(text),) for text in data], "text binary") \
        .selectExpr("CAST(text AS string) AS text")
    # compared as bytes (hex): Python would decode both sides' bad bytes alike
    rows = frame.selectExpr(f"transform({TEXT_LINES}(text), line -> hex(line)) AS cut",
                            "transform(split(text, '\\n'), line -> hex(line)) AS split").collect()
    assert [row.cut for row in rows] == [row.split for row in rows]
    assert frame.selectExpr(f"{TEXT_LINES}(text)").schema[0].dataType == \
        frame.selectExpr("split(text, '\\n')").schema[0].dataType
