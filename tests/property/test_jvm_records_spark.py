"""The JVM engine's record parse (asaql_json_record, jvm/…/JsonRecord.scala) against the Python
steps' expressions: every row of `read_events` — payload, file, position, arrival time,
partition, the malformed-record reason and raw text — the same both ways, on random lines
(records with keys twice in other cases, deep nesting, fields of another type, text after the
object, arrays, broken JSON, replacement characters, bad arrival times and partitions) and on
a fixed set of edge cases; and the input's partitions found the four ways (the Python
patterns, the engine's byte scan, the driver's scan of a small input, the schema's job). The
engine only vouches for records the checks cannot fault; a record it does not vouch for takes
the checks, so a difference here is a wrong vouch.

Examples: ASAQL_JVM_RECORD_EXAMPLES (default 12); each reads one small folder twice."""

from __future__ import annotations

import json
import os

from hypothesis import example, given
from hypothesis import strategies as st
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.spark.sources.input_partitions import discover_partitions
from asaql.spark.sources.io import (SMALL_INPUT_BYTES, infer_payload_schema, read_events,
                                   survey_input)
from asaql.spark.sources.jvm_inference import inferred_in_one_pass
from asaql.spark.jvm_functions import arrival_text, engine_problem, partition_digits
from spark_harness import property_settings

EXAMPLES = int(os.environ.get("ASAQL_JVM_RECORD_EXAMPLES", "12"))
KEYS = ("a", "A", "b", "é", "É", "nested", "EventEnqueuedUtcTime", "PartitionId", "x y")
EDGE_CASES = [
    '{"a": 1, "b": "x"}', '{"a": 1, "A": 2}', '{"a": 1} trailing', '{"a": 1}}',
    '{"a": 1} {"b": 2}', '  {"a": 1}', '{"a": 1}  ', '{"a": "x\u0001y"}', '{"é": 1, "É": 2}',
    '[{"a": 1}, {"a": 2}]', '[]', '[1, 2]', '"text"', '42', 'null', '{"a": ', '{"a": 1.5}',
    '{"nested": {"c": [1, 2, {"d": 3}]}}', '{"nested": 5}', '{"nested": [1, 2]}',
    '{"nested": ' + '{"k":' * 63 + '1' + '}' * 63 + '}',
    '{"nested": ' + '{"k":' * 64 + '1' + '}' * 64 + '}', '{"n": ' + '[' * 70 + ']' * 70 + '}',
    '{"EventEnqueuedUtcTime": "nope", "a": 1}', '{"EventEnqueuedUtcTime": "2021-01-01T00:00:05Z"}',
    '{"PartitionId": 1.5}', '{"PartitionId": 3}', '{"PartitionId": -3}', '{"a": 1, "a": 1}',
    '{"b": "\ufffd"}', '{"a": NaN}', "{'a': 1}", '{"a": 1,}', '\t{"a": 1}', '{"a": 1e400}',
]

scalars = st.one_of(st.integers(-10**20, 10**20), st.floats(allow_nan=False), st.booleans(),
                    st.none(), st.text(max_size=6), st.sampled_from(["\ufffd", "2021-01-01T00:00:01Z"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=3)),
    max_leaves=8)
records = st.lists(st.tuples(st.sampled_from(KEYS), values), min_size=1, max_size=5)
MUTATIONS = ("none", "none", "none", "lead", "trail", "cut", "array", "deep", "control")


@st.composite
def lines(draw) -> str:
    pairs = draw(records)  # a key may come twice, in another case
    text = "{" + ", ".join(f"{json.dumps(k)}: {json.dumps(v)}" for k, v in pairs) + "}"
    mutation = draw(st.sampled_from(MUTATIONS))
    if mutation == "lead":
        return " " + text
    if mutation == "trail":
        return text + draw(st.sampled_from([" ", " x", "}", " {}"]))
    if mutation == "cut":
        return text[:draw(st.integers(1, max(1, len(text) - 1)))]
    if mutation == "array":
        return f"[{text}, {text}]"
    if mutation == "deep":
        depth = draw(st.integers(60, 68))
        return text[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}"
    if mutation == "control":
        return text[:-1] + ', "c": "\u0002"}'
    return text


def _rows(spark, folder, schema, control, jvm: bool) -> list[str]:
    events = read_events(spark, str(folder), schema, str(control), batch=True, jvm=jvm)
    # as JSON text written by Spark: an arrival time like 25265 (the year) is no Python datetime
    return sorted(row[0] for row in events.select(F.to_json(F.struct("*"))).collect())


def _same_rows_both_ways(spark, folder, control):
    schema = infer_payload_schema(spark, str(folder))
    python = _rows(spark, folder, schema, control, jvm=False)
    jvm = _rows(spark, folder, schema, control, jvm=True)
    assert python == jvm, [row for row in set(python) ^ set(jvm)][:6]
    by_spark = discover_partitions(spark, str(folder), in_driver=False)
    assert by_spark == discover_partitions(spark, str(folder), jvm=True, in_driver=False)
    if not any(f.read_bytes().lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")
               for f in folder.iterdir()):  # the driver's scan: JSON lines (partition_scan.py)
        assert discover_partitions(spark, str(folder), in_driver=True) == by_spark
        # a large input's come with its schema, from the same job (jvm_inference.py)
        one_pass = inferred_in_one_pass(spark, sorted(folder.iterdir()), partitions=True)
        if one_pass is not None:  # else a line declined: the partitions' own job
            assert one_pass[2] == by_spark
    return schema


def test_the_engine_is_loaded_and_in_the_plan(spark, tmp_path):
    assert engine_problem(spark) is None
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text('{"a": 1}\n', encoding="utf-8")
    schema = infer_payload_schema(spark, str(tmp_path / "in"))
    events = read_events(spark, str(tmp_path / "in"), schema, str(tmp_path), batch=True, jvm=True)
    plan = events._jdf.queryExecution().analyzed().toString()
    assert "asaql_json_record" in plan
    assert events.select(F.col("a")).collect()[0][0] == 1


def test_edge_cases_read_the_same_through_the_engine(spark, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_text("\n".join(EDGE_CASES) + "\n", encoding="utf-8")
    (folder / "b.jsonl").write_bytes(b'{"a": 1, "b": "\xff\xfe"}\n{"a": 2}\xff\n{"b": "ok"}\r\n\n  \n')
    _same_rows_both_ways(spark, folder, tmp_path)


@property_settings(EXAMPLES)
@given(st.lists(lines(), min_size=1, max_size=12), st.lists(lines(), max_size=6))
def test_random_lines_read_the_same_through_the_engine(spark, tmp_path_factory, first, second):
    work = tmp_path_factory.mktemp("jvm-records")
    folder = work / "in"
    folder.mkdir()
    (folder / "part-0.jsonl").write_text("\n".join(first) + "\n", encoding="utf-8")
    if second:
        (folder / "part-1.jsonl").write_text("\n".join(second) + "\n", encoding="utf-8")
    _same_rows_both_ways(spark, folder, work)


def test_a_partition_id_that_is_a_list_in_every_record_is_a_reason_not_a_failure(spark, tmp_path):
    """(found by the random lines above: the cast of a list to a partition number failed the
    whole query's analysis; schema inference keeps a list there when a nested record's
    PartitionId is a number)"""
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_text('{"PartitionId": [1], "n": {"PartitionId": 2}, "v": 1}\n'
                                    '{"v": 2}\n', encoding="utf-8")
    _same_rows_both_ways(spark, folder, tmp_path)
    schema = infer_payload_schema(spark, str(folder))
    rows = read_events(spark, str(folder), schema, str(tmp_path), batch=True, jvm=True) \
        .orderBy("v").collect()
    assert rows[0]["asaql__error"] == \
        "PartitionId '[1]' is not a partition number (a whole number, 0 or more)"
    assert rows[1]["asaql__error"] is None and rows[1]["asaql__partition"] == 0


# a key, a colon and a value with what may surround them: near misses of the two patterns
_KEY_VALUE = st.tuples(
    st.sampled_from(['"PartitionId"', '"EventEnqueuedUtcTime"', '"x"', '"PartitionId', "{"]),
    st.sampled_from(["", " ", "\t", "\x0b", "\n ", "\xa0"]), st.sampled_from([":", "", "::"]),
    st.sampled_from(["", " ", "\r"]), st.sampled_from(['"', "", '""']),
    st.sampled_from(["7", "12", "123456789012345678", "1234567890123456789", "-3", "1.5", "",
                     "2021-01-01T00:00:05Z", "x", "é", '\\"']),
    st.sampled_from(['"', ""]), st.sampled_from(["", " ", "\f"]),
    st.sampled_from([",", "}", "", " ]", '"'])).map("".join)


DISCOVERY_EDGES = [
    '{"PartitionId":1234567890123456789}', '{"PartitionId": 123456789012345678}',
    '{"PartitionId"\x0b:\x0b7,', '{"PartitionId"\xa0: 7}', '{"PartitionId": "12" }',
    '{"PartitionId": ""}', '{"PartitionId": 7"}', '{"x": "\\"PartitionId\\": 5,", "PartitionId": 2}',
    '{"PartitionId": -3, "PartitionId": 4}', '{"PartitionId":\r\n 9\f}', '"PartitionId"',
    '{"EventEnqueuedUtcTime": "", "EventEnqueuedUtcTime" :"2021-01-01T00:00:05Z"}',
    '{"EventEnqueuedUtcTime": "unterminated', '"EventEnqueuedUtcTime"\r:\r"é"']


@property_settings(EXAMPLES * 4)
@example(DISCOVERY_EDGES)
@given(st.lists(st.lists(_KEY_VALUE, min_size=1, max_size=4).map("".join), min_size=1,
                max_size=20))
def test_the_discovery_finds_what_its_patterns_find(spark, texts):
    """asaql_partition_digits and asaql_arrival_text against the two patterns they replace
    (asaql/spark/sources/io.py's discover_partitions), on texts made of the pieces they look at."""
    frame = spark.createDataFrame([(t,) for t in texts], "value string")
    patterns = frame.select(
        F.regexp_extract("value", r'"PartitionId"\s*:\s*"?(\d{1,18})"?\s*[,}]', 1),
        F.regexp_extract("value", r'"EventEnqueuedUtcTime"\s*:\s*"([^"]+)"', 1)).collect()
    engine = frame.select(F.coalesce(partition_digits(F.col("value")), F.lit("")),
                          F.coalesce(arrival_text(F.col("value")), F.lit(""))).collect()
    assert [tuple(r) for r in engine] == [tuple(r) for r in patterns], texts


def test_a_large_inputs_partitions_come_with_its_schema_when_asked(spark, tmp_path):
    """Above the driver's limit the schema is one Spark job, which finds the partitions too
    (io.survey_input): the same as their own job, and only when a statement waits for them."""
    folder = tmp_path / "in"
    folder.mkdir()
    line = ('{{"deviceId": "d{0}", "PartitionId": {1}, "EventEnqueuedUtcTime": "{2}", '
            '"pad": "{3}"}}\n')
    for number in range(3):
        (folder / f"part-{number}.jsonl").write_text("".join(
            line.format(i % 7, i % 5, f"2024-01-01T00:{number:02d}:{i % 60:02d}.{i % 1000:03d}Z",
                        "x" * 40) for i in range(4000)), encoding="utf-8")
    assert sum(f.stat().st_size for f in folder.iterdir()) > SMALL_INPUT_BYTES
    by_their_job = discover_partitions(spark, str(folder), jvm=True, in_driver=False)
    assert len(by_their_job) == 5
    assert survey_input(spark, str(folder), partitions=True).partitions == by_their_job
    assert survey_input(spark, str(folder)).partitions is None


# Flat records (asaql/engine/read/FlatRecord.scala): under a flat schema the engine reads the
# common record in its own loop. The schema is given, as a run's is after its first micro-batch:
# later events may carry any type in a field (inferred over them, a field of several types
# would be a variant, which the loop does not read). Each key leans to its field's type and
# sometimes takes another: a string where a number is, a number too large for a long.
FLAT_SCHEMA = ("n bigint, i int, f double, s string, t boolean, PartitionId bigint, "
               "EventEnqueuedUtcTime string")
FLAT_KEYS = {"n": st.integers(-2**40, 2**40), "i": st.integers(-2**31, 2**31 - 1),
             "f": st.floats(allow_nan=False), "s": st.text(max_size=5), "t": st.booleans(),
             "PartitionId": st.integers(-2, 9), "EventEnqueuedUtcTime": st.sampled_from(
                 ["2021-01-01T00:00:01Z", "2021-01-01T00:00:02.5Z", "nope"])}
ODD_VALUES = st.one_of(st.none(), st.integers(-10**20, 10**20), st.text(max_size=3),
                       st.floats(), st.booleans(), st.lists(st.integers(), max_size=2),
                       st.sampled_from(["1e400", "-0", "01", "NaN", "2147483648", "{}"]))
FLAT_EDGES = [
    '{"n": 1, "s": "x"}', '{"n": 1, "n": 2}', '{"n": 1, "N": 2}', '{"n": 1} {"s": "2"}',
    '{"n": 1}}', '{"n": 1,}', '{}', ' {"n": 1}', '{"n": 1} ', '{"f": 1e400}', '{"f": -0.0}',
    '{"f": 12}', '{"n": 99999999999999999999}', '{"n": 1.0}', '{"t": null, "s": null}',
    '{"s": 5}', '{"s": "tab\\tand \\"quote\\" \\u0041"}', '{"s": "é"}', '{"f": "5"}',
    '{"t": "true"}', '{"other": 1}', '{"n": 01}', '{"f": NaN}', "{'n': 1}", '{"s": "\\ud800"}',
    '{"i": 2147483648}', '{"i": -2147483648, "t": false}', '{"s": {"k": 1}}', '{"f": [1]}',
    '{"i": 1.5}', '{"n": 2.0e3}', '{"t": 1}', '{"PartitionId": 3, "EventEnqueuedUtcTime": '
    '"2021-01-01T00:00:05Z"}',
]


@st.composite
def flat_line(draw) -> str:
    keys = draw(st.lists(st.sampled_from(sorted(FLAT_KEYS)), min_size=0, max_size=6))
    pairs = []
    for key in keys:
        odd = draw(st.integers(0, 3)) == 0
        value = draw(ODD_VALUES if odd else FLAT_KEYS[key])
        raw = odd and value in ("1e400", "-0", "01", "NaN", "2147483648", "{}")
        text = value if raw else json.dumps(value, ensure_ascii=draw(st.booleans()))
        pairs.append(f'"{key}"{draw(st.sampled_from([":", ": ", " : "]))}{text}')
    text = "{" + ", ".join(pairs) + "}"
    return draw(st.sampled_from([text] * 6 + [text + " ", " " + text, text[:-1], text + "}"]))


def _same_rows_under_the_flat_schema(spark, folder, control) -> list[str]:
    schema = T.StructType.fromDDL(FLAT_SCHEMA)
    python = _rows(spark, folder, schema, control, jvm=False)
    assert python == _rows(spark, folder, schema, control, jvm=True)
    return python


def test_flat_edge_cases_read_the_same_through_the_engine(spark, tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.jsonl").write_text("\n".join(FLAT_EDGES) + "\n", encoding="utf-8")
    rows = [json.loads(row) for row in _same_rows_under_the_flat_schema(spark, folder, tmp_path)]
    # the loop's own values (the common record) and the doubts it leaves to the checks
    assert {"n": 1, "s": "x"}.items() <= next(r for r in rows if r.get("s") == "x").items()
    assert any(r.get("s") == 'tab\tand "quote" A' and "asaql__error" not in r for r in rows)
    assert sum("asaql__error" in r for r in rows) >= 10


@property_settings(EXAMPLES)
@given(st.lists(flat_line(), min_size=1, max_size=15))
def test_random_flat_records_read_the_same_through_the_engine(spark, tmp_path_factory, texts):
    work = tmp_path_factory.mktemp("flat-records")
    folder = work / "in"
    folder.mkdir()
    (folder / "part-0.jsonl").write_text("\n".join(texts) + "\n", encoding="utf-8")
    _same_rows_under_the_flat_schema(spark, folder, work)
