"""WITH steps, UNION and the SELECT forms ASA has (or has not): binding and its errors."""

import pytest

from asaql.analysis.bound import Field
from asaql.compiler.pipeline import compile_query
from asaql.errors import InvalidQueryError, UnknownNameError, UnsupportedFeatureError
from asaql.plan.nodes import WindowAggregate


def error(text: str, kind=InvalidQueryError):
    with pytest.raises(kind) as info:
        compile_query(text)
    return info.value


STEP = "WITH s AS (SELECT a, b + 1 AS c FROM input TIMESTAMP BY t WHERE a > 0) "


def test_select_over_a_step_reads_its_columns_and_both_wheres():
    [statement] = compile_query(STEP + "SELECT c, s.a INTO o FROM s WHERE c < 9").statements
    assert statement.input_name == "input" and statement.timestamp_by == Field(path=("t",))
    assert [c.name for c in statement.columns] == ["c", "a"]
    assert statement.where.op == "AND"


def test_group_by_over_a_step_uses_the_step_expressions():
    compiled = compile_query(STEP + "SELECT a, SUM(c) AS total INTO o FROM s "
                             "GROUP BY a, TumblingWindow(second, 5)")
    [write] = compiled.plan.outputs
    aggregate = write.input.input
    assert isinstance(aggregate, WindowAggregate)
    assert aggregate.aggregates[0].arg.op == "+"


def test_union_gives_one_statement_per_branch_to_the_same_output():
    compiled = compile_query("SELECT a INTO o FROM x UNION SELECT a FROM y UNION ALL SELECT a FROM z")
    assert [s.output for s in compiled.statements] == ["o", "o", "o"]
    assert [s.input_name for s in compiled.statements] == ["x", "y", "z"]


def test_union_branches_need_the_same_columns():
    e = error("SELECT a, b INTO o FROM x UNION SELECT a FROM y")
    assert "same columns" in str(e) and e.span.line == 1 and e.span.column == 33


def test_unknown_step_column_suggests():
    e = error(STEP + "SELECT cc INTO o FROM s", UnknownNameError)
    assert "has no column 'cc'" in str(e) and "did you mean 'c'" in e.hint


def test_step_errors():
    assert "cannot have INTO" in str(error("WITH s AS (SELECT a INTO o FROM i) SELECT a FROM s"))
    assert "defined twice" in str(error("WITH s AS (SELECT a FROM i), s AS (SELECT a FROM i) "
                                        "SELECT a FROM s"))
    assert "TIMESTAMP BY applies to inputs" in str(error(STEP + "SELECT c FROM s TIMESTAMP BY c"))
    windowed = "WITH w AS (SELECT a, COUNT(*) AS n FROM i GROUP BY a, TumblingWindow(s, 1)) "
    # a GROUP BY over a step that aggregates reads the step's rows as a stage
    assert compile_query(windowed + "SELECT n, COUNT(*) AS c FROM w "
                         "GROUP BY n, TumblingWindow(s, 5)").plan.stage_names == ("#w",)
    stamped = "WITH s AS (SELECT a, System.Timestamp() AS ts FROM i) "
    e = error(stamped + "SELECT a, MAX(ts) FROM s GROUP BY a, TumblingWindow(s, 5)",
              UnsupportedFeatureError)
    assert "System.Timestamp() of step 's'" in str(e)


def test_distinct_and_top_are_not_asa():
    assert "no DISTINCT" in str(error("SELECT DISTINCT a FROM i"))
    assert "no TOP" in str(error("SELECT TOP 3 a FROM i"))


def test_windowed_step_read_with_where_filters_its_rows():
    [statement] = compile_query(
        "WITH w AS (SELECT a, COUNT(*) AS n FROM i GROUP BY a, TumblingWindow(s, 1) HAVING n > 1) "
        "SELECT a INTO o FROM w WHERE n < 5").statements
    assert statement.aggregation.having.op == "AND"


def compile_with(text: str, references=("Ref",)):
    return compile_query(text, references=references)


def test_reference_join_keys_and_residual():
    [s] = compile_with("SELECT e.a, r.b FROM i e JOIN Ref r ON r.k = e.a + 1 AND r.valid = 1 "
                       "AND e.x > 2").statements
    [join] = s.laterals
    assert join.alias == "r" and not join.left
    assert len(join.keys) == 1 and join.keys[0][0].op == "+"
    assert join.residual.op == "AND"


def test_join_errors():
    e = error("SELECT a FROM i JOIN j ON i.a = j.a")
    assert "needs DATEDIFF" in str(e) and "--reference j=PATH" in str(e)
    error("SELECT i.a FROM i CROSS APPLY GetArrayElements(i.xs) AS e "
          "JOIN k ON DATEDIFF(second, i, k) BETWEEN 0 AND 5", UnsupportedFeatureError)
    with pytest.raises(InvalidQueryError, match="reference data: it can only be joined"):
        compile_with("SELECT a FROM Ref")
    with pytest.raises(InvalidQueryError, match="no TIMESTAMP BY"):
        compile_with("SELECT a FROM i JOIN Ref r TIMESTAMP BY t ON i.a = r.a")
    with pytest.raises(InvalidQueryError, match="APPLY takes GetArrayElements"):
        compile_with("SELECT a FROM i CROSS APPLY UPPER(i.a) AS x")
    # APPLY over a step that aggregates reads the step's rows as a stage
    assert compile_with("WITH w AS (SELECT COUNT(*) AS n FROM i GROUP BY TumblingWindow(s, 1)) "
                        "SELECT n FROM w CROSS APPLY GetArrayElements(w.n) AS x"
                        ).plan.stage_names == ("#w",)


def test_star_with_a_reference_join_adds_its_fields():
    [s] = compile_with("SELECT *, r.* FROM i JOIN Ref r ON i.a = r.a").statements
    assert [getattr(c, "alias", "?") for c in s.columns] == [None, "r", "r"]


def test_group_by_over_a_partitioned_step_combines_partitions_unless_it_groups_them():
    step = "WITH s AS (SELECT PartitionId, v FROM input PARTITION BY PartitionId) "
    combined = compile_query(step + "SELECT SUM(v) AS t INTO o FROM s "
                                    "GROUP BY TumblingWindow(second, 5)").statements
    assert [st.partition_by_partition_id for st in combined] == [False]
    per_partition = compile_query(step + "SELECT PartitionId, SUM(v) AS t INTO o FROM s "
                                         "GROUP BY PartitionId, TumblingWindow(second, 5)")
    assert [st.partition_by_partition_id for st in per_partition.statements] == [True]
    # a PARTITION BY of its own still needs PartitionId in GROUP BY
    assert "GROUP BY must include PartitionId" in error(
        "SELECT SUM(v) AS t INTO o FROM input PARTITION BY PartitionId "
        "GROUP BY TumblingWindow(second, 5)").message


def test_repartition_by_another_column_reads_one_stream():
    statements = compile_query("WITH r AS (SELECT * FROM input PARTITION BY DeviceId INTO 4) "
                               "SELECT DeviceId, COUNT(*) AS n INTO o FROM r "
                               "GROUP BY DeviceId, TumblingWindow(second, 5)").statements
    assert [st.partition_by_partition_id for st in statements] == [False]


def test_check_reports_every_broken_column_of_a_statement():
    from asaql.compiler.check import check_query

    report = check_query("SELECT nosuch(a) AS x, b AS y, FOO(c) AS z, b AS y\n"
                         "INTO o FROM input TIMESTAMP BY t")
    assert [(d.span.line, d.span.column) for d in report.errors] == [(1, 8), (1, 32), (1, 50)]
    assert "used twice" in report.errors[-1].message
    with pytest.raises(UnknownNameError) as first:  # a run stops at the first
        compile_query("SELECT nosuch(a) AS x, FOO(c) AS z INTO o FROM input")
    assert first.value.span.column == 8 and len(first.value.also) == 1


def test_having_without_group_by_filters_like_where():
    statement, = compile_query("SELECT * INTO o FROM i WHERE a > 1 HAVING t > 27").statements
    assert statement.where == compile_query(
        "SELECT * INTO o FROM i WHERE a > 1 AND t > 27").statements[0].where
    with pytest.raises(UnsupportedFeatureError) as info:
        compile_query("SELECT * INTO o FROM i HAVING COUNT(*) > 27")
    assert "with aggregates but without GROUP BY" in info.value.message
