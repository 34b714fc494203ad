"""The two ways of finding the fields whose events disagree in type (asaql/spark/sources/mixed_fields.py)
give the same schema on random events: Spark's job (`schema_of_variant_agg` over the text
fields read as variants, for large inputs) and the driver's reading of the records (small
inputs). Fields `a`, `b` and `c.d` hold numbers, text, bits, records, arrays or nothing.

Examples: ASAQL_MIXED_DETECTION_EXAMPLES (default 25); each is one Spark job and one inference."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from asaql.inputs.records import json_file_records
from asaql.spark.sources.mixed_fields import mixed_in_records, with_mixed_as_variants
from spark_harness import property_settings

EXAMPLES = int(os.environ.get("ASAQL_MIXED_DETECTION_EXAMPLES", "25"))

scalars = st.one_of(st.integers(-10**20, 10**20), st.floats(-1e300, 1e300, allow_nan=False),
                    st.booleans(), st.none(), st.sampled_from(["1.5", "x", ""]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "d"]), inner,
                                                 max_size=2)), max_leaves=5)
events = st.lists(st.fixed_dictionaries({}, optional={
    "a": values, "b": values, "c": st.fixed_dictionaries({}, optional={"d": values})}),
    min_size=1, max_size=6)


@property_settings(EXAMPLES)
@given(events)
def test_the_driver_finds_the_mixed_fields_spark_finds(spark, tmp_path, drawn):
    source = Path(tmp_path) / f"in-{abs(hash(json.dumps(drawn)))}.jsonl"
    source.write_text("".join(json.dumps({"id": i, **e}) + "\n" for i, e in enumerate(drawn)))
    schema = spark.read.option("mode", "PERMISSIVE").json(str(source)).schema
    by_spark = with_mixed_as_variants(schema, lambda probe: spark.read.schema(probe).option(
        "mode", "PERMISSIVE").json(str(source)))
    in_driver = mixed_in_records(schema, json_file_records(source, sys.maxsize))
    assert in_driver == by_spark, (drawn, schema.simpleString())
