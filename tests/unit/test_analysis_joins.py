"""JOINs of two streams in the analyzer and the plan: the DATEDIFF bound in its ASA forms, keys
and residual, ASA's rules for partitions and substreams, and errors at their positions."""

import pytest

from asaql.analysis.joins import StreamJoin
from asaql.compiler.pipeline import compile_query
from asaql.errors import InvalidQueryError, UnsupportedFeatureError
from asaql.plan.explain import explain_plan
from asaql.plan.nodes import ApplyEventOrdering, JoinStreams, ReadStage

S = 1_000_000
HEAD = "SELECT a.x, b.y FROM A a TIMESTAMP BY t JOIN B b TIMESTAMP BY u ON "


def join_of(text: str) -> StreamJoin:
    [statement] = compile_query(text).statements
    [join] = [j for j in statement.laterals if isinstance(j, StreamJoin)]
    return join


def error(text: str, kind=InvalidQueryError):
    with pytest.raises(kind) as info:
        compile_query(text)
    return info.value


@pytest.mark.parametrize("on, lower, upper", [
    ("DATEDIFF(minute, a, b) BETWEEN 0 AND 15", 0, 15 * 60 * S),
    ("DATEDIFF(second, a, b) BETWEEN -2 AND 10", -2 * S, 10 * S),
    ("DATEDIFF(second, b, a) BETWEEN -10 AND 2", -2 * S, 10 * S),  # the other order: negated
    ("DATEDIFF(ss, a, b) >= 1 AND DATEDIFF(ss, a, b) <= 5", S, 5 * S),
    ("5 >= DATEDIFF(ss, a, b) AND DATEDIFF(ss, a, b) > 1", S + 1, 5 * S),
    ("DATEDIFF(ms, a, b) < 10 AND DATEDIFF(ms, a, b) >= 0", 0, 10_000 - 1),
    ("DATEDIFF(second, A, B) = 3", 3 * S, 3 * S),  # input names instead of aliases
])
def test_the_time_bound_is_elapsed_time_between_the_system_timestamps(on, lower, upper):
    join = join_of(HEAD + on)
    assert (join.lower_us, join.upper_us) == (lower, upper)


def test_keys_residual_and_the_right_input():
    join = join_of("SELECT a.x FROM A a TIMESTAMP BY t LEFT OUTER JOIN B b TIMESTAMP BY u "
                   "ON a.k = b.k AND b.v > a.v AND DATEDIFF(minute, a, b) BETWEEN 0 AND 15")
    assert join.left and join.input_name == "B" and join.alias == "b"
    assert [(k.path, v.path) for k, v in join.keys] == [(("k",), ("k",))]
    assert join.residual.op == ">"
    assert join.timestamp_by.path == ("u",)


def test_the_plan_reads_both_inputs_with_their_own_policy():
    compiled = compile_query(HEAD + "a.k = b.k AND DATEDIFF(minute, a, b) BETWEEN 0 AND 15")
    node = compiled.plan.outputs[0].input.input
    assert isinstance(node, JoinStreams) and node.watermark == "combined"
    assert isinstance(node.input, ApplyEventOrdering) and isinstance(node.right, ApplyEventOrdering)
    assert compiled.input_names == ("A", "B")
    assert "0s ≤ ts(b) − ts(left) ≤ 15m" in explain_plan(compiled.plan)


def test_a_self_join_names_each_side_by_its_alias():
    join = join_of("SELECT a.x FROM I a TIMESTAMP BY t JOIN I b TIMESTAMP BY t "
                   "ON DATEDIFF(second, a, b) BETWEEN 1 AND 5")
    assert (join.input_name, join.lower_us) == ("I", S)


def test_partitioned_and_substream_joins_follow_asas_rules():
    node = compile_query(
        "SELECT a.x FROM A a TIMESTAMP BY t PARTITION BY PartitionId "
        "JOIN B b TIMESTAMP BY u PARTITION BY PartitionId ON a.PartitionId = b.PartitionId "
        "AND DATEDIFF(s, a, b) BETWEEN 0 AND 5").plan.outputs[0].input.input
    assert node.watermark == "partition"
    node = compile_query(
        "SELECT a.x FROM A a TIMESTAMP BY t OVER dev JOIN B b TIMESTAMP BY u OVER dev "
        "ON a.dev = b.dev AND DATEDIFF(s, a, b) BETWEEN 0 AND 5").plan.outputs[0].input.input
    assert node.watermark == "substream"


@pytest.mark.parametrize("on, message", [
    ("a.k = b.k", "needs DATEDIFF in ON"),
    ("DATEDIFF(second, a, b) <= 5", "bounded on both sides"),
    ("DATEDIFF(second, a, b) BETWEEN 5 AND 1", "leave no time for a match"),
    ("DATEDIFF(day, a, b) BETWEEN 0 AND 8", "at most seven days"),
    ("DATEDIFF(second, a, b) BETWEEN 0 AND b.n", "integer constants"),
    ("DATEDIFF(month, a, b) BETWEEN 0 AND 1", "the unit of a JOIN's DATEDIFF"),
    ("(DATEDIFF(second, a, b) BETWEEN 0 AND 5 OR a.k = b.k)", "a condition of its own in ON"),
    ("DATEDIFF(second, a, a) BETWEEN 0 AND 5", "compares the two inputs"),
])
def test_time_bound_errors(on, message):
    assert message in str(error(HEAD + on))


@pytest.mark.parametrize("text, message", [
    ("SELECT a.x FROM A a TIMESTAMP BY t OVER dev JOIN B b TIMESTAMP BY u "
     "ON DATEDIFF(s, a, b) BETWEEN 0 AND 5", "for all inputs of a query or for none"),
    ("SELECT a.x FROM A a TIMESTAMP BY t OVER dev JOIN B b TIMESTAMP BY u OVER dev "
     "ON DATEDIFF(s, a, b) BETWEEN 0 AND 5", "must match the OVER column 'dev'"),
    ("SELECT a.x FROM A a TIMESTAMP BY t PARTITION BY PartitionId JOIN B b TIMESTAMP BY u "
     "ON DATEDIFF(s, a, b) BETWEEN 0 AND 5", "both PARTITION BY PartitionId, or neither"),
    ("SELECT a.x FROM A a TIMESTAMP BY t PARTITION BY PartitionId JOIN B b TIMESTAMP BY u "
     "PARTITION BY PartitionId ON DATEDIFF(s, a, b) BETWEEN 0 AND 5", "a.PartitionId = b.PartitionId"),
    ("SELECT a.x FROM A a JOIN A a ON DATEDIFF(s, a, a) BETWEEN 0 AND 5", "used twice"),
])
def test_partition_and_substream_rules(text, message):
    assert message in str(error(text))


@pytest.mark.parametrize("text", [
    "SELECT a.x FROM A a TIMESTAMP BY t CROSS APPLY GetArrayElements(a.xs) AS e "
    "JOIN B b TIMESTAMP BY u ON DATEDIFF(s, a, b) BETWEEN 0 AND 5",
    "WITH s AS (SELECT x FROM A TIMESTAMP BY t OVER x) "
    "SELECT s.x FROM s JOIN B b ON DATEDIFF(s, s, b) BETWEEN 0 AND 5",
])
def test_what_joins_do_not_support_yet_says_so(text):
    assert "not supported yet" in str(error(text, UnsupportedFeatureError))


@pytest.mark.parametrize("text, left, right", [
    # a step on the left, an input on the right
    ("WITH s AS (SELECT x FROM A TIMESTAMP BY t WHERE x > 1) "
     "SELECT s.x FROM s JOIN B b TIMESTAMP BY u ON DATEDIFF(s, s, b) BETWEEN 0 AND 5",
     ReadStage, ApplyEventOrdering),
    # an input on the left, a step that aggregates on the right (ASA's "last event in window")
    ("WITH w AS (SELECT MAX(t) AS m FROM A TIMESTAMP BY t GROUP BY TumblingWindow(minute, 10)) "
     "SELECT A.x FROM A TIMESTAMP BY t JOIN w ON DATEDIFF(minute, A, w) BETWEEN 0 AND 10 "
     "AND A.t = w.m", ApplyEventOrdering, ReadStage),
    # two steps
    ("WITH s AS (SELECT x FROM A), w AS (SELECT x, COUNT(*) AS n FROM B "
     "GROUP BY x, TumblingWindow(s, 5)) "
     "SELECT s.x, w.n FROM s JOIN w ON s.x = w.x AND DATEDIFF(s, s, w) BETWEEN 0 AND 5",
     ReadStage, ReadStage),
])
def test_a_step_joined_with_a_stream_is_read_as_a_stage(text, left, right):
    compiled = compile_query(text)
    join = next(n for w in compiled.plan.outputs for n in _nodes(w) if isinstance(n, JoinStreams))
    assert isinstance(join.input, left) and isinstance(join.right, right)
    assert compiled.plan.stage_names and not any(
        name.startswith("#") for name in compiled.output_names)


def test_a_step_in_a_join_has_no_timestamp_by():
    e = error("WITH s AS (SELECT x FROM A) SELECT b.x FROM B b JOIN s TIMESTAMP BY t "
              "ON DATEDIFF(s, b, s) BETWEEN 0 AND 5")
    assert "already have their System.Timestamp" in str(e)


def _nodes(node):
    yield node
    for child in node.children:
        yield from _nodes(child)


def test_analytic_functions_beside_a_join_read_the_left_input_through_a_stage():
    compiled = compile_query(
        "SELECT a.x, LAG(a.x) OVER (LIMIT DURATION(s, 5)) AS p, b.y, * FROM A a TIMESTAMP BY t "
        "PARTITION BY PartitionId JOIN B b TIMESTAMP BY u PARTITION BY PartitionId "
        "ON a.PartitionId = b.PartitionId AND DATEDIFF(s, a, b) BETWEEN 0 AND 5 "
        "WHERE LAG(a.x) OVER (LIMIT DURATION(s, 5)) > 1")
    producer, consumer = compiled.statements
    assert producer.input_name == "A" and producer.partition_by_partition_id
    assert not producer.laterals and producer.where is None
    assert [c.name for c in producer.columns[1:]] == ["asaql_analytic_0"]
    assert consumer.stage_input and consumer.input_name == producer.output
    assert "asaql_analytic_0" in repr(consumer.where) and "asaql_analytic_0" in repr(consumer.columns[1])
    # the stage has one watermark: the JOIN over it combines partitions; `*` hides the column
    assert not consumer.laterals[0].partition_by_partition_id
    assert consumer.columns[3].hidden == ("asaql_analytic_0",)


def test_an_analytic_function_beside_a_join_reads_the_left_input_only():
    e = error("SELECT LAG(b.y) OVER (LIMIT DURATION(s, 5)) AS p FROM A a JOIN B b "
              "ON DATEDIFF(s, a, b) BETWEEN 0 AND 5")
    assert "evaluated before JOIN" in str(e)


THREE = HEAD + "a.k = b.k AND DATEDIFF(s, a, b) BETWEEN 0 AND 5 LEFT JOIN C c TIMESTAMP BY v ON "


def test_a_third_stream_joins_with_the_input_or_a_stream_joined_before():
    [statement] = compile_query(THREE + "c.k = a.k AND DATEDIFF(s, a, c) BETWEEN 1 AND 2"
                                ).statements
    b, c = statement.laterals
    assert (b.anchor, c.anchor, c.lower_us, c.upper_us) == (None, None, S, 2 * S)
    assert [(k.path, v.path) for k, v in c.keys] == [(("k",), ("k",))]
    [statement] = compile_query(THREE + "c.k = b.k AND DATEDIFF(s, c, b) BETWEEN -2 AND -1"
                                ).statements
    c = statement.laterals[1]
    # relative to b; an equality with b's fields is tested after the step, with the residual
    assert (c.anchor, c.lower_us, c.upper_us, c.keys) == ("b", S, 2 * S, ())
    assert c.residual.op == "="
    plan = explain_plan(compile_query(THREE + "DATEDIFF(s, b, c) BETWEEN 0 AND 3").plan)
    assert "0s ≤ ts(c) − ts(b) ≤ 3s" in plan and "passes its time + 8s" in plan


def test_a_third_stream_may_be_bounded_to_several_inputs_before_it():
    # ASA's three-way example: E within 5 s after TS (both ways) and before TE (one way)
    [statement] = compile_query(THREE + "DATEDIFF(s, a, c) BETWEEN 0 AND 5 "
                                "AND DATEDIFF(second, b, c) < 0").statements
    c = statement.laterals[1]
    assert (c.anchor, c.lower_us, c.upper_us) == (None, 0, 5 * S)
    assert c.other_bounds == (("b", None, -1),)


@pytest.mark.parametrize("on, message", [
    ("DATEDIFF(s, a, c) < 5 AND DATEDIFF(s, b, c) > 0", "bounded on both sides"),
    ("c.k = a.k", "needs DATEDIFF"),
])
def test_a_third_streams_bound_relates_it_with_one_input_before_it(on, message):
    assert message in str(error(THREE + on))


def test_a_third_stream_needs_its_own_alias():
    assert "used twice" in str(error(
        HEAD + "DATEDIFF(s, a, b) BETWEEN 0 AND 5 JOIN C b ON DATEDIFF(s, a, b) BETWEEN 0 AND 5"))
