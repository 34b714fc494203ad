"""The driver's JSON inference (asaql/spark/sources/json_inference.py, small inputs) and the JVM's
one-pass inference (jvm_inference.py, large inputs) give the schema Spark's own inference
gives, and the one pass the mixed fields the variants' job finds, on random events: numbers of every size (long, beyond long,
beyond 38 digits, fractions), text, bits, NULL, records (empty ones too, keys given twice,
keys that differ in case), arrays (empty, of NULL, of mixed values). Where it declines (a
line that is not the plain case), Spark's answer is the one used, so only its answers are
compared.

Examples: ASAQL_JSON_INFERENCE_EXAMPLES (default 25); each is one to three Spark jobs."""

from __future__ import annotations

import json
import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from asaql.spark.sources.io import _needs_clean_lines
from asaql.spark.sources.json_inference import inferred_in_driver
from asaql.spark.sources.jvm_inference import inferred_in_one_pass
from asaql.spark.sources.mixed_fields import with_mixed_as_variants, with_mixed_where
from spark_harness import property_settings

EXAMPLES = int(os.environ.get("ASAQL_JSON_INFERENCE_EXAMPLES", "25"))

class _Record(list):
    """Pairs written as one JSON object."""


scalars = st.one_of(st.integers(-10**45, 10**45), st.integers(-2**63 - 5, 2**63 + 5),
                    st.floats(-1e300, 1e300, allow_nan=False), st.booleans(), st.none(),
                    st.sampled_from(["1.5", "x", "", "2021-01-01T00:00:00Z"]))
keys = st.sampled_from(["a", "b", "B", "é", "\U0001F600", "\uFB01", ""])
# a record as its key-value pairs, so that a key may come twice (written by _text)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.lists(st.tuples(keys, inner), max_size=3).map(_Record)),
    max_leaves=6)


def _text(value) -> str:
    if isinstance(value, _Record):
        return "{" + ", ".join(json.dumps(k) + ": " + _text(v) for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_text(v) for v in value) + "]"
    return json.dumps(value)


events = st.lists(st.lists(st.tuples(st.sampled_from(["x", "y", "z", "Y"]), values),
                           max_size=3).map(_Record), min_size=1, max_size=6)


@property_settings(EXAMPLES)
@given(events, st.booleans())
def test_the_driver_infers_the_schema_spark_infers(spark, tmp_path, drawn, blank_lines):
    source = Path(tmp_path) / f"in-{abs(hash(repr(drawn)))}.jsonl"
    lines = [_text(event) for event in drawn]
    source.write_text(("\n\n" if blank_lines else "\n").join(lines) + "\n", encoding="utf-8")
    in_driver = inferred_in_driver([source])
    if in_driver is None or _needs_clean_lines(in_driver):  # Spark's careful way (io.py)
        return
    by_spark = spark.read.option("mode", "PERMISSIVE").json(str(source)).schema
    assert in_driver == by_spark, (lines, by_spark.simpleString(), in_driver.simpleString())


def test_it_declines_what_is_not_plain(tmp_path):
    """A byte-order mark, bad JSON, an array and a key twice leave it to Spark."""
    for text in ('\ufeff{"a": 1}\n', '{"a": 1,}\n', '[{"a": 1}]\n', '{"a": 1, "A": 2}\n',
                 '{"a": 1} x\n', "{'a': 1}\n"):
        source = Path(tmp_path) / "in.jsonl"
        source.write_text(text, encoding="utf-8")
        assert inferred_in_driver([source]) is None, text
    source.write_text('{"a": 1}\n\n{"b": [], "c": {}}\n', encoding="utf-8")
    assert inferred_in_driver([source]).simpleString() == "struct<a:bigint,b:array<string>>"


@property_settings(EXAMPLES)
@given(events, st.booleans(), st.lists(st.lists(st.tuples(
    st.sampled_from(["x", "y", "z", "Y"]), values), max_size=3).map(_Record), max_size=3))
def test_one_pass_gives_the_schema_and_mixed_fields_of_two_jobs(spark, tmp_path, drawn,
                                                                 blank_lines, later):
    """A large input's one job (jvm_inference.py) against Spark's inference and the mixed
    fields' job (mixed_fields.py): the same schema, the same fields as VARIANT. The events
    come twice, then others: a line that adds nothing to the lines before it is read on a
    shorter path (InferJson.addsNothing), and one after it that does add, or that has a key
    twice, still counts."""
    source = Path(tmp_path) / f"big-{abs(hash(repr((drawn, later))))}.jsonl"
    lines = [_text(event) for event in drawn + drawn + later]
    source.write_text(("\n\n" if blank_lines else "\n").join(lines) + "\n", encoding="utf-8")
    found = inferred_in_one_pass(spark, [source])
    if found is None or _needs_clean_lines(found[0]):  # declined: Spark's two jobs decide
        return
    schema = spark.read.option("mode", "PERMISSIVE").json(str(source)).schema
    assert found[0] == schema, (lines, schema.simpleString(), found[0].simpleString())
    by_spark = with_mixed_as_variants(schema, lambda probe: spark.read.schema(probe).option(
        "mode", "PERMISSIVE").json(str(source)))
    assert with_mixed_where(schema, found[1]) == by_spark, (lines, by_spark.simpleString())


def test_one_pass_reads_utf8_bytes_and_leaves_other_bytes_to_spark(spark, tmp_path):
    """A line's bytes go to Jackson's byte parser, as Spark's reader reads them: non-ASCII
    text gives Spark's schema; bytes that are not UTF-8 (which Spark's reader sets aside)
    decline, and Spark's inference decides."""
    text = Path(tmp_path) / "text.jsonl"
    text.write_bytes('{"a": 1, "b": "café"}\n{"a": 2.5, "é": [1, 2], "c": true}\n'.encode())
    found = inferred_in_one_pass(spark, [text])
    assert found is not None
    assert found[0] == spark.read.option("mode", "PERMISSIVE").json(str(text)).schema
    for bad in (b'{"a": 1, "b": "\xff\xfe x"}\n', b'{"d": {"e\xff": [1, 2]}}\n'):
        source = Path(tmp_path) / "bytes.jsonl"
        source.write_bytes(b'{"a": 1}\n' + bad)
        assert inferred_in_one_pass(spark, [source]) is None
