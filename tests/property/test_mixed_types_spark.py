"""Values typed per event (asaql/spark/sources/mixed_fields.py), on random events: a field `v` whose
events hold numbers, text, bits, records, arrays or nothing, in any mix. Passed through
(`SELECT id, v`) each event's row holds its own value, whatever the other events hold, through
the JVM engine and the Python steps alike; and `v > 0` keeps exactly the events whose value is
a number above 0 or text that reads as one, setting aside as data errors those whose value
a float cannot take (text that is no number, a record, an array).

Examples: ASAQL_MIXED_TYPE_EXAMPLES (default 8); each runs two small queries twice."""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from asaql.compiler.pipeline import compile_query
from asaql.run.runner import RunOptions, run
from spark_harness import property_settings

EXAMPLES = int(os.environ.get("ASAQL_MIXED_TYPE_EXAMPLES", "8"))

scalars = st.one_of(st.integers(-10**6, 10**6), st.floats(-1e6, 1e6, allow_nan=False),
                    st.booleans(), st.none(), st.sampled_from(["1.5", "x", "", "-2", "3e2"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["a", "b"]), inner,
                                                 max_size=2)), max_leaves=4)


def _as_float(value):
    """What `v > 0` compares for an event's value: a number, a bit as 0 or 1 (T-SQL), text
    that reads as a number, else None."""
    if value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, (bool, int, float)):
        return float(value)
    try:
        return float(value.strip()) if value.strip() else None
    except ValueError:
        return None


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) \
            and not isinstance(a, bool) and math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b and type(a) is type(b)


@property_settings(EXAMPLES)
@given(st.lists(values, min_size=1, max_size=8), st.integers(-3, 3))
def test_each_event_keeps_its_own_value_through_both_engines(spark, tmp_path, drawn, number):
    # one event holds a number: `v > 0` is a comparison of numbers (a record or array field
    # compared with a number, in every event, is not what this property is about)
    drawn = [*drawn, number]
    events = [{"id": i, "t": f"2021-01-01T00:00:0{i}Z", "v": v} for i, v in enumerate(drawn)]
    work = Path(tempfile.mkdtemp(dir=tmp_path))
    source = work / "in.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    compiled = compile_query("SELECT id, v INTO whole FROM input TIMESTAMP BY t\n"
                             "SELECT id INTO positive FROM input TIMESTAMP BY t WHERE v > 0")
    for engine in ("jvm", "python"):
        outputs = {name: str(work / f"{engine}-{name}.jsonl") for name in ("whole", "positive")}
        errors = work / f"{engine}-errors.jsonl"
        run(compiled, RunOptions(inputs={"input": str(source)}, outputs=outputs,
                                 errors_path=str(errors), checkpoint=str(work / f"{engine}-ck"),
                                 engine=engine, on_data_error="drop"), spark=spark)
        rows = {r["id"]: r for r in map(json.loads, Path(outputs["whole"]).read_text()
                                        .splitlines())}
        assert sorted(rows) == [e["id"] for e in events], engine
        for event in events:
            assert _same(rows[event["id"]]["v"], event["v"]), (engine, event, rows[event["id"]])
        positive = sorted(json.loads(line)["id"] for line in
                          Path(outputs["positive"]).read_text().splitlines()) \
            if Path(outputs["positive"]).exists() else []
        assert positive == [e["id"] for e in events if (_as_float(e["v"]) or 0) > 0], engine
        refused = sorted(json.loads(line)["line"] - 1 for line in
                         errors.read_text().splitlines()) if errors.exists() else []
        expected = [e["id"] for e in events if e["v"] is not None and _as_float(e["v"]) is None
                    and _mixed(drawn)]
        assert refused == expected, engine


def _mixed(drawn) -> bool:
    """Whether the events disagree in type (else `v` has one type: no variant, and a text
    field compared with a number reads as NULL without a data error, as before)."""
    kinds = {("number" if isinstance(v, (int, float)) and not isinstance(v, bool) else
              type(v).__name__) for v in drawn if v is not None}
    return len(kinds) > 1
