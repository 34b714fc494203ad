"""Reference data joins and APPLY on real Spark streaming queries, against nested loops.

Each example is a random reference table (keys with NULLs and duplicates) and a random event
log, and one query with six outputs: an INNER join with an equality key and a residual
condition, a LEFT join with WHERE, a join without equality (a range condition), OUTER APPLY
over an array, and GROUP BY over a join (duplicate keys count once per match) and over CROSS
APPLY. Every output must hold exactly the rows the nested-loop definition gives
(compared as multisets: joins add no order of their own).

Examples: ASAQL_JOIN_EXAMPLES (default 6); each costs one Spark run.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, note
from hypothesis import strategies as st

from asaql.testing import golden
from spark_harness import property_settings, run_case, write_case

EXAMPLES = int(os.environ.get("ASAQL_JOIN_EXAMPLES", "6"))

QUERY = """
SELECT e.seq, r.v INTO inner_rows FROM input e TIMESTAMP BY t
JOIN Ref r ON e.k = r.k AND r.flag = 1

SELECT e.seq, r.v, r.k INTO left_rows FROM input e TIMESTAMP BY t
LEFT JOIN Ref r ON r.k = e.k
WHERE e.seq % 2 = 0

SELECT e.seq, r.v INTO range_rows FROM input e TIMESTAMP BY t
JOIN Ref r ON r.v BETWEEN e.lo AND e.lo + 2

SELECT e.seq, a.ArrayIndex AS i, a.ArrayValue AS x INTO apply_rows FROM input e TIMESTAMP BY t
OUTER APPLY GetArrayElements(e.tags) AS a

SELECT r.k, COUNT(*) AS n, SUM(r.v) AS total INTO grouped_join FROM input e TIMESTAMP BY t
JOIN Ref r ON e.k = r.k
GROUP BY r.k, TumblingWindow(minute, 5)

SELECT COUNT(*) AS n, SUM(a.ArrayValue) AS total INTO grouped_apply FROM input e TIMESTAMP BY t
CROSS APPLY GetArrayElements(e.tags) AS a
WHERE a.ArrayIndex < 2
GROUP BY TumblingWindow(minute, 5)
"""

keys = st.one_of(st.none(), st.integers(0, 3))
table = st.lists(st.fixed_dictionaries({"k": keys, "v": st.integers(0, 9),
                                        "flag": st.integers(0, 1)}), min_size=1, max_size=8)
events = st.lists(st.fixed_dictionaries({
    "k": keys, "lo": st.integers(-1, 9),
    "tags": st.one_of(st.none(), st.lists(st.integers(0, 5), max_size=3))}),
    min_size=1, max_size=25)


def expected(rows: list[dict], log: list[dict]) -> dict[str, list[dict]]:
    out = {"inner_rows": [], "left_rows": [], "range_rows": [], "apply_rows": [],
           "grouped_join": [], "grouped_apply": []}
    per_key: dict = {}
    elements = [x for e in log for i, x in enumerate(e["tags"] or []) if i < 2]
    if elements:
        out["grouped_apply"].append({"n": len(elements), "total": sum(elements)})
    for e in log:
        for r in rows:
            if e["k"] is not None and e["k"] == r["k"] and r["flag"] == 1:
                out["inner_rows"].append({"seq": e["seq"], "v": r["v"]})
            if e["lo"] <= r["v"] <= e["lo"] + 2:
                out["range_rows"].append({"seq": e["seq"], "v": r["v"]})
        if e["seq"] % 2 == 0:
            matches = [r for r in rows if e["k"] is not None and r["k"] == e["k"]]
            out["left_rows"] += [{"seq": e["seq"], "v": r["v"], "k": r["k"]} for r in matches] \
                or [{"seq": e["seq"], "v": None, "k": None}]
        for r in rows:
            if e["k"] is not None and e["k"] == r["k"]:
                n, total = per_key.get(r["k"], (0, 0))
                per_key[r["k"]] = (n + 1, total + r["v"])
        tags = e["tags"] or []
        out["apply_rows"] += [{"seq": e["seq"], "i": i, "x": x} for i, x in enumerate(tags)] \
            or [{"seq": e["seq"], "i": None, "x": None}]
    out["grouped_join"] = [{"k": k, "n": n, "total": total} for k, (n, total) in per_key.items()]
    return out


@property_settings(EXAMPLES, derandomize=True, also_suppress=[HealthCheck.data_too_large])
@given(rows=table, log=events)
def test_reference_joins_and_apply_match_nested_loops(spark, tmp_path_factory, rows, log):
    # from 00:00:01: every event in the one 5-minute window the oracle assumes (an event at
    # 00:00:00 would close the window (23:55, 00:00], as windows are (start, end])
    log = [{"seq": i, **e, "t": f"2021-01-01T00:00:{i + 1:02d}Z",
            "EventEnqueuedUtcTime": f"2021-01-01T00:00:{i + 1:02d}Z", "PartitionId": 0}
           for i, e in enumerate(log)]
    note(f"reference: {rows}\nevents: {log}")
    folder = write_case(tmp_path_factory.mktemp("join"), QUERY,
                        {"": [("events.jsonl", log)]}, references={"Ref": rows})
    actual = run_case(folder, spark)
    want = expected(rows, log)
    for name, rows_ in want.items():
        assert golden.canonical(actual[name], False) == golden.canonical(rows_, False), name


def test_an_empty_reference_table_matches_nothing(spark, tmp_path):
    """Schema on read: the fields the query names read as NULL; LEFT keeps every event."""
    log = [{"seq": i, "k": 1, "lo": 0, "tags": [i], "t": f"2021-01-01T00:00:0{i}Z",
            "EventEnqueuedUtcTime": f"2021-01-01T00:00:0{i}Z"} for i in range(2)]
    actual = run_case(write_case(tmp_path / "case", QUERY, {"": [("events.jsonl", log)]},
                                 references={"Ref": []}), spark)
    assert actual["inner_rows"] == [] and actual["range_rows"] == [] and \
        actual["grouped_join"] == []
    assert actual["left_rows"] == [{"seq": 0, "v": None, "k": None}]
    assert sorted(r["seq"] for r in actual["apply_rows"]) == [0, 1]
