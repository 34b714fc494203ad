"""Stages: where one SELECT needs two stateful operators in a row, the analyzer cuts it in two
statements joined by a stage (asaql/analysis/stages.py)."""

import pytest

from asaql.analysis.bound import Field
from asaql.compiler.pipeline import compile_query
from asaql.errors import UnsupportedFeatureError
from asaql.plan.nodes import EvaluateAnalytics, JoinStreams, ReadStage, WindowAggregate


def statements(text: str):
    return compile_query(text).statements


def test_a_group_by_over_analytic_functions_is_cut_after_where():
    first, second = statements(
        "SELECT TollId, COUNT(*) AS changes INTO changes FROM Entry TIMESTAMP BY t "
        "WHERE LAG(Make) OVER (LIMIT DURATION(minute, 5)) <> Make "
        "GROUP BY TollId, TumblingWindow(minute, 5)")
    assert first.output == "#changes.1" and first.aggregation is None and first.where is not None
    assert [c.name for c in first.columns] == ["v0"]
    assert second.stage_input and second.input_name == "#changes.1" and second.where is None
    assert second.aggregation.group_by == (Field(path=("v0",)),)
    assert compile_query("SELECT COUNT(*) AS n FROM i WHERE ISFIRST(s, 5) = 1 "
                         "GROUP BY TumblingWindow(s, 10)").output_names == ("output",)


def test_aggregate_inputs_and_order_keys_are_stage_columns():
    first, second = statements(
        "SELECT SUM(x - LAG(x) OVER (LIMIT DURATION(s, 5))) AS s, "
        "TopOne() OVER (ORDER BY LAST(y) OVER (LIMIT DURATION(s, 5))) AS best "
        "FROM i GROUP BY TumblingWindow(s, 10)")
    assert [c.name for c in first.columns] == ["v0", "v1"]
    total, top = second.aggregation.aggregates
    assert total.arg == Field(path=("v0",)) and top.order_by[0].expr == Field(path=("v1",))


def test_a_group_by_over_a_join_of_two_streams_reads_the_join_as_a_stage():
    compiled = compile_query(
        "WITH Trips AS (SELECT e.TollId, x.ExitTime FROM Entry e TIMESTAMP BY t "
        "JOIN Exit x TIMESTAMP BY u ON e.TollId = x.TollId AND DATEDIFF(minute, e, x) "
        "BETWEEN 0 AND 15) "
        "SELECT TollId, COUNT(*) AS Trips INTO perBooth FROM Trips "
        "GROUP BY TollId, TumblingWindow(minute, 5)")
    producer, consumer = compiled.plan.outputs
    assert isinstance(producer.input.input, JoinStreams)
    aggregate = consumer.input.input
    assert isinstance(aggregate, WindowAggregate) and isinstance(aggregate.input, ReadStage)
    assert compiled.input_names == ("Entry", "Exit") and compiled.output_names == ("perBooth",)


def test_a_group_by_over_a_step_that_aggregates_reads_its_rows():
    compiled = compile_query(
        "WITH PerMinute AS (SELECT dev, COUNT(*) AS n FROM i TIMESTAMP BY t "
        "GROUP BY dev, TumblingWindow(minute, 1)) "
        "SELECT dev, MAX(n) AS peak INTO peaks FROM PerMinute GROUP BY dev, TumblingWindow(hour, 1)")
    assert compiled.plan.stage_names == ("#PerMinute",)
    producer, consumer = compiled.statements
    assert producer.output == "#PerMinute" and producer.aggregation is not None
    assert consumer.stage_input and consumer.aggregation.aggregates[0].arg == Field(path=("n",))


def test_an_analytic_function_over_a_step_with_one_reads_the_step_as_a_stage():
    compiled = compile_query(
        "WITH s AS (SELECT *, LAG(w) OVER (LIMIT DURATION(hour, 1)) AS pw FROM i TIMESTAMP BY t) "
        "SELECT LAG(t) OVER (LIMIT DURATION(hour, 1) WHEN pw < 2) AS start FROM s WHERE w < 2")
    producer, consumer = compiled.plan.outputs
    assert producer.output == "#s"
    assert isinstance(consumer.input.input.input, EvaluateAnalytics)
    assert isinstance(consumer.input.input.input.input, ReadStage)


def test_the_step_is_written_once_whoever_reads_it():
    compiled = compile_query(
        "WITH w AS (SELECT dev, COUNT(*) AS n FROM i GROUP BY dev, TumblingWindow(s, 1)) "
        "SELECT SUM(n) AS a INTO one FROM w GROUP BY TumblingWindow(s, 10) "
        "SELECT MAX(n) AS b INTO two FROM w GROUP BY TumblingWindow(s, 10)")
    assert [s.output for s in compiled.statements] == ["#w", "one", "two"]


def test_a_partitioned_step_is_a_stage_its_reader_combines():
    # ASA's parallelization example: counts per partition, then summed over partitions
    compiled = compile_query(
        "WITH Step1 AS (SELECT COUNT(*) AS Count, TollBoothId, PartitionId FROM Input1 "
        "PARTITION BY PartitionId GROUP BY TumblingWindow(minute, 3), TollBoothId, PartitionId) "
        "SELECT SUM(Count) AS Count, TollBoothId FROM Step1 "
        "GROUP BY TumblingWindow(minute, 3), TollBoothId")
    producer, consumer = compiled.statements
    assert producer.partition_by_partition_id and consumer.stage_input
    assert compiled.plan.outputs[1].input.input.watermark == "combined"
    # analytic functions per partition, then windows over them
    first, second = statements(
        "SELECT PartitionId, COUNT(*) AS n FROM i TIMESTAMP BY t PARTITION BY PartitionId "
        "WHERE LAG(x) OVER (LIMIT DURATION(s, 5)) > 1 GROUP BY PartitionId, TumblingWindow(s, 10)")
    assert first.partition_by_partition_id and second.stage_input


@pytest.mark.parametrize("text, message", [
    ("WITH w AS (SELECT dev, COUNT(*) AS n FROM i TIMESTAMP BY t OVER dev "
     "GROUP BY dev, TumblingWindow(s, 1)) SELECT SUM(n) AS a FROM w GROUP BY TumblingWindow(s, 10)",
     "a step with substreams"),
    ("SELECT a.PartitionId, COUNT(*) AS n FROM A a PARTITION BY PartitionId JOIN B b "
     "PARTITION BY PartitionId ON a.PartitionId = b.PartitionId AND DATEDIFF(s, a, b) "
     "BETWEEN 0 AND 5 GROUP BY a.PartitionId, TumblingWindow(s, 10)",
     "a JOIN of partitioned streams"),
])
def test_what_stages_do_not_support_yet_says_so(text, message):
    with pytest.raises(UnsupportedFeatureError, match=message):
        compile_query(text)
