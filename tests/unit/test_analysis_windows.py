"""Windows(…): several windows in one GROUP BY, one statement per window writing one output, and
System.Window().Id; their errors at their positions."""

import pytest

from asaql.analysis.windows import HoppingWindow, SnapshotWindow, TumblingWindow
from asaql.compiler.pipeline import compile_query
from asaql.errors import InvalidQueryError
from asaql.syntax import ast

S = 1_000_000
HEAD = "SELECT dev, COUNT(*) AS n FROM i TIMESTAMP BY t GROUP BY dev, "


def error(text: str) -> InvalidQueryError:
    with pytest.raises(InvalidQueryError) as info:
        compile_query(text)
    return info.value


def test_one_statement_per_window_with_its_id():
    statements = compile_query(
        "SELECT System.Window().Id, dev, COUNT(*) AS n INTO o FROM i TIMESTAMP BY t "
        "GROUP BY dev, Windows(Window('a', TumblingWindow(s, 10)), "
        "Window('B', HoppingWindow(Duration(s, 20), Hop(s, 10))), Window('c', System.Timestamp())) "
        "HAVING COUNT(*) > 1").statements
    assert [s.output for s in statements] == ["o", "o", "o"]
    assert [s.aggregation.window for s in statements] == [
        TumblingWindow(10 * S), HoppingWindow(20 * S, 10 * S), SnapshotWindow()]
    assert [s.columns[0] for s in statements][0].name == "Id"
    assert [s.columns[0].expr.value for s in statements] == ["a", "B", "c"]
    assert all(s.aggregation.having is not None for s in statements)


def test_window_id_is_null_without_ids_or_without_windows():
    for group_by in ("Windows(TumblingWindow(s, 10), TumblingWindow(s, 20))",
                     "TumblingWindow(s, 10)"):
        for statement in compile_query("SELECT System.Window().Id AS w, COUNT(*) AS n FROM i "
                                       f"GROUP BY {group_by}").statements:
            assert statement.columns[0].expr == ast.Literal(value=None, kind="null")


@pytest.mark.parametrize("group_by, message, at", [
    ("Windows(Window('a', TumblingWindow(s, 1)), TumblingWindow(s, 2))", "or none", "Windows"),
    ("Windows(Window('a', TumblingWindow(s, 1)), Window('A', TumblingWindow(s, 2)))",
     "used twice", "'A'"),
    ("Windows(Windows(TumblingWindow(s, 1)))", "cannot be nested", "Windows(Tumbling"),
    ("Window('a', TumblingWindow(s, 1))", "member of Windows", "Window"),
    ("Windows(Window(1, TumblingWindow(s, 1)))", "a text literal", "Window(1"),
    ("Windows(dev)", "expected a window", "dev)"),
    ("Windows(TumblingWindow(s, 1)), TumblingWindow(s, 2)", "only one window", "TumblingWindow(s, 2"),
])
def test_windows_errors_name_their_position(group_by, message, at):
    e = error(HEAD + group_by)
    assert message in str(e)
    assert e.span.column == len(HEAD) + group_by.index(at) + 1


def test_system_window_belongs_in_the_select_of_a_group_by():
    assert "SELECT of a GROUP BY" in str(error("SELECT System.Window().Id FROM i"))
    assert "one field, Id" in str(error("SELECT System.Window().Name, COUNT(*) AS n FROM i "
                                        "GROUP BY TumblingWindow(s, 1)"))


def test_a_field_of_a_function_result():
    [statement] = compile_query(
        "SELECT GetArrayElement(a, 0).x.y AS v FROM i").statements
    assert statement.columns[0].expr.path == ("x", "y")


def test_system_timestamp_beside_a_window_is_a_key_and_alone_a_snapshot_window():
    from asaql.analysis.bound import EventTimestamp, GroupRef
    for group_by in ("dev, System.Timestamp(), TumblingWindow(s, 10)",
                     "dev, TumblingWindow(s, 10), System.Timestamp()"):
        (statement,) = compile_query("SELECT System.Timestamp() AS t, dev, COUNT(*) AS n FROM i "
                                     f"GROUP BY {group_by}").statements
        assert statement.aggregation.window == TumblingWindow(10 * S)
        assert isinstance(statement.aggregation.group_by[1], EventTimestamp)
        # the SELECT's System.Timestamp() is the window end, not the key
        assert not isinstance(statement.columns[0].expr, GroupRef)
    (statement,) = compile_query(HEAD + "System.Timestamp()").statements
    assert statement.aggregation.window == SnapshotWindow()
    assert len(statement.aggregation.group_by) == 1
