"""An input read by several sides of a query (a self-join), by several steps of one (a UNION of
two WITH steps), or by several queries (a self-join beside a window) is counted once: the
summary line, the --metrics lines (and the live page fed by them) and the errors file, through
the real `asaql run` on the shared session (asaql/spark/execute.py's `counting`, sink.py)."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli
from asaql.compiler.pipeline import compile_query
from asaql.pages.monitor import RunMonitor
from asaql.plan.job_graph import job_graph
from asaql.plan.policy import EventOrderingPolicy

ARRIVAL = 1_700_000_000  # the file's modification time: 2023-11-14T22:13:20Z
BROKEN = '{"k": "a", "v": '
# Line 1 is late (60 s before its arrival), line 2 is malformed, lines 3 and 4 are on time.
LINES = ('{"k": "b", "v": 3, "t": "2023-11-14T22:12:20Z"}', BROKEN,
         '{"k": "a", "v": 1, "t": "2023-11-14T22:13:17Z"}',
         '{"k": "a", "v": 2, "t": "2023-11-14T22:13:19Z"}')
SELF_JOIN = """
SELECT t1.k, t1.v INTO out FROM s t1 TIMESTAMP BY t
JOIN s t2 TIMESTAMP BY t ON t1.k = t2.k AND DATEDIFF(second, t1, t2) BETWEEN 0 AND 5
"""
UNION_OF_STEPS = """
WITH a AS (SELECT k FROM s TIMESTAMP BY t WHERE v > 1),
b AS (SELECT k FROM s TIMESTAMP BY t WHERE v <= 1)
SELECT * INTO out FROM a UNION SELECT * FROM b
"""
# two streaming queries over s: the self-join's (which counts s) and the window's
BESIDE_A_WINDOW = SELF_JOIN + """
SELECT k, COUNT(*) AS n INTO out2 FROM s TIMESTAMP BY t GROUP BY k, TumblingWindow(second, 10)
"""
ERRORS = [{"file": "in.jsonl", "line": 2, "reason": "malformed JSON", "record": BROKEN}]
METRICS = ("Read Events", "Accepted Events", "Input Events", "Malformed Events",
           "Late Input Events", "Dropped Events")


def _run(tmp_path: Path, query: str, *options: str) -> tuple[str, list, list]:
    """→ (the summary line without its paths and time, the errors file's records, the
    --metrics lines)."""
    source = tmp_path / "in.jsonl"
    source.write_text("".join(line + "\n" for line in LINES), encoding="utf-8")
    os.utime(source, (ARRIVAL, ARRIVAL))
    (tmp_path / "q.sql").write_text(query, encoding="utf-8")
    outputs = [arg for name in ("out", "out2") if f"INTO {name} " in query
               for arg in ("--output", f"{name}={tmp_path / name}.jsonl")]
    result = CliRunner().invoke(cli, [
        "run", str(tmp_path / "q.sql"), "--input", f"s={source}", *outputs,
        "--errors", str(tmp_path / "errors.jsonl"), "--metrics", str(tmp_path / "metrics.jsonl"),
        *options])
    assert result.exit_code == 0, result.stderr + result.output
    summary = result.stderr.strip().splitlines()[-1]
    errors = [json.loads(line) for line in
              (tmp_path / "errors.jsonl").read_text(encoding="utf-8").splitlines()]
    for error in errors:
        error["file"] = Path(error["file"]).name
    metrics = [json.loads(line) for line in
               (tmp_path / "metrics.jsonl").read_text(encoding="utf-8").splitlines()]
    return re.sub(r" \(set aside in [^)]*\)|; \d+ micro-batch(es)? in .*", "", summary), errors, \
        metrics


def _totals(metrics: list) -> dict:
    return {name: sum(line[name] for line in metrics) for name in METRICS}


def _counted_once(output: int | str, dropped: int = 0) -> tuple[str, dict]:
    """The summary line and the --metrics totals of LINES read once: 3 events (1 late), 1
    malformed, `dropped` of them dropped by the policy."""
    summary = (f"asaql: 3 input events, {output} output events, 0 early, 1 late, "
               f"0 out-of-order, {dropped} dropped, 1 malformed; "
               f"4 events read = {3 - dropped} accepted + {dropped} dropped + 1 malformed")
    return summary, {"Read Events": 4, "Accepted Events": 3 - dropped, "Input Events": 3,
                     "Malformed Events": 1, "Late Input Events": 1, "Dropped Events": dropped}


@pytest.mark.parametrize("options", [(), ("--engine", "python", "--step", "general")],
                         ids=["jvm-native", "python-general"])
def test_a_self_join_counts_its_input_once(spark, tmp_path, options):
    summary, errors, metrics = _run(tmp_path, SELF_JOIN, *options)
    # b's System.Timestamp is adjusted (late) and it pairs with itself; a(17 s) pairs with
    # a(17 s) and a(19 s), a(19 s) with itself
    assert (summary, _totals(metrics)) == _counted_once(4)
    assert errors == ERRORS
    # the live page's diagram: the numbers once on the input's box (its policy's with them)
    graph = job_graph(compile_query(SELF_JOIN, EventOrderingPolicy.from_options("5s", "0s"))
                      .plan)
    monitor = RunMonitor(graph)
    for line in metrics:
        monitor.on_metrics(line)
    nodes = monitor.snapshot()["nodes"]
    shown = nodes[graph.node_of("input", "s").id]
    assert (shown["Read Events"], shown["Malformed Events"], shown["Late Input Events"],
            shown.get("together")) == (4, 1, 1, None)


@pytest.mark.parametrize("options", [("--engine", "python"), ("--step", "general")],
                         ids=["python-native", "jvm-general"])
def test_a_union_of_two_steps_over_one_input_counts_it_once(spark, tmp_path, options):
    summary, errors, metrics = _run(tmp_path, UNION_OF_STEPS, *options)
    assert (summary, _totals(metrics)) == _counted_once(3)
    assert errors == ERRORS


def test_queries_sharing_an_input_count_its_policy_once(spark, tmp_path):
    """The late event is dropped by both queries' policies: counted by the one that counts the
    input, so read = accepted + dropped + malformed still holds."""
    summary, errors, metrics = _run(tmp_path, BESIDE_A_WINDOW, "--action", "drop")
    summary = re.sub(r"\d+ output events", "N output events", summary)
    assert (summary, _totals(metrics)) == _counted_once("N", dropped=1)
    assert errors == ERRORS
