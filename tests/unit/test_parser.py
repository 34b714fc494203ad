"""The parser: ASA text → AST (spans are kept out of equality), and syntax errors in user terms."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from asaql.errors import QuerySyntaxError, Span, UnsupportedFeatureError
from asaql.syntax import ast, parse


def ident(name: str, bracketed: bool = False) -> ast.Identifier:
    return ast.Identifier(name=name, bracketed=bracketed)


def col(*parts: str) -> ast.ColumnRef:
    return ast.ColumnRef(parts=tuple(ident(p) for p in parts))


def lit(value) -> ast.Literal:
    kinds = {int: "bigint", float: "float", str: "nvarchar(max)", type(None): "null"}
    return ast.Literal(value=value, kind=kinds[type(value)])


def call(name: str, *args, **fields) -> ast.FunctionCall:
    return ast.FunctionCall(name=ident(name), args=tuple(args), **fields)


def binop(op: str, left, right) -> ast.BinaryOp:
    return ast.BinaryOp(op=op, left=left, right=right)


def stmt(text: str) -> ast.SelectStatement:
    query = parse(text)
    assert len(query.statements) == 1
    return query.statements[0]


def expr(text: str):
    """The expression of a WHERE (a SELECT item `name = …` would be ASA's alias form)."""
    return stmt(f"SELECT 1 FROM i WHERE {text}").where


def test_select_item_alias_assignment():
    item = stmt("SELECT total = a + b, c = d AS e FROM i").items
    assert item[0].alias.name == "total" and item[0].expr == binop("+", col("a"), col("b"))
    assert item[1].alias.name == "e" and item[1].expr == binop("=", col("c"), col("d"))


def syntax_error(text: str) -> QuerySyntaxError:
    with pytest.raises(QuerySyntaxError) as info:
        parse(text)
    return info.value


# ---------------------------------------------------------------- statements


def test_pass_through_query():
    query = parse("SELECT deviceId, EventTime, System.Timestamp() AS SystemTimestamp\n"
                  "INTO output\nFROM input TIMESTAMP BY EventTime")
    assert query == ast.Query(steps=(), statements=(ast.SelectStatement(
        items=(ast.SelectItem(expr=col("deviceId")),
               ast.SelectItem(expr=col("EventTime")),
               ast.SelectItem(expr=ast.SystemTimestamp(), alias=ident("SystemTimestamp"))),
        into=ident("output"),
        source=ast.InputSource(name=ident("input"),
                               timestamp_by=ast.TimestampBy(expr=col("EventTime"))),
    ),))


def test_full_select_statement():
    s = stmt("SELECT DISTINCT TOP 10 d.*, COUNT(*) AS n INTO [my out] FROM input AS d "
             "WHERE d.x > 1 GROUP BY d.k, TumblingWindow(second, 10) HAVING COUNT(*) >= 2")
    assert s.distinct and s.top == lit(10)
    assert s.items == (ast.SelectItem(expr=ast.Star(qualifier=ident("d"))),
                       ast.SelectItem(expr=call("COUNT", star=True), alias=ident("n")))
    assert s.into == ident("my out", bracketed=True)
    assert s.source == ast.InputSource(name=ident("input"), alias=ident("d"))
    assert s.where == binop(">", col("d", "x"), lit(1))
    assert s.group_by == ast.GroupBy(items=(col("d", "k"), call("TumblingWindow", col("second"), lit(10))))
    assert s.having == binop(">=", call("COUNT", star=True), lit(2))


def test_star_and_aliases_without_as():
    s = stmt("SELECT *, a b, c AS [d e] FROM input i")
    assert [item.alias for item in s.items] == [None, ident("b"), ident("d e", bracketed=True)]
    assert s.items[0].expr == ast.Star()
    assert s.source.alias == ident("i") and s.source.reference_name == ident("i")


def test_with_steps_and_several_statements():
    query = parse("WITH a AS (SELECT x FROM input), b AS (SELECT y FROM a)\n"
                  "SELECT * INTO o1 FROM a; SELECT * INTO o2 FROM b SELECT * INTO o3 FROM b;")
    assert [step.name.name for step in query.steps] == ["a", "b"]
    assert query.steps[1].query.source.name == ident("a")
    assert [s.into.name for s in query.statements] == ["o1", "o2", "o3"]


def test_union():
    s = stmt("SELECT a FROM x UNION ALL SELECT a FROM y UNION SELECT a FROM z")
    assert s.source.name == ident("x")
    assert s.union.source.name == ident("y")
    assert s.union.union.source.name == ident("z") and s.union.union.union is None


def test_timestamp_by_over_and_partition_by_in_both_orders():
    expected = ast.InputSource(
        name=ident("input"),
        timestamp_by=ast.TimestampBy(expr=col("t"), over=(col("deviceId"), col("b", "c"))),
        partition_by=col("PartitionId"))
    assert stmt("SELECT * FROM input TIMESTAMP BY t OVER deviceId, b.c PARTITION BY PartitionId").source == expected
    assert stmt("SELECT * FROM input PARTITION BY PartitionId TIMESTAMP BY t OVER deviceId, b.c").source == expected


def test_timestamp_by_a_call_then_over_substreams():
    source = stmt("SELECT * FROM input TIMESTAMP BY DATEADD(second, 1, t) OVER deviceId").source
    assert source.timestamp_by == ast.TimestampBy(
        expr=call("DATEADD", ast.NameArgument(name="second"), lit(1), col("t")), over=(col("deviceId"),))


def test_repeated_timestamp_by_is_refused():
    error = syntax_error("SELECT * FROM i TIMESTAMP BY a TIMESTAMP BY b")
    assert "TIMESTAMP BY appears twice" in error.message
    assert error.span.column == 32


def test_joins_and_applies_are_parsed():
    s = stmt("SELECT * FROM a JOIN b ON a.k = b.k INNER JOIN c ON x LEFT OUTER JOIN d TIMESTAMP BY t ON y "
             "CROSS APPLY GetArrayElements(a.arr) AS e OUTER APPLY GetRecordProperties(a.r) p")
    assert [(type(j).__name__, j.kind) for j in s.joins] == [
        ("Join", "INNER"), ("Join", "INNER"), ("Join", "LEFT"), ("Apply", "CROSS"), ("Apply", "OUTER")]
    assert s.joins[0] == ast.Join(kind="INNER", source=ast.InputSource(name=ident("b")),
                                  condition=binop("=", col("a", "k"), col("b", "k")))
    assert s.joins[2].source.timestamp_by == ast.TimestampBy(expr=col("t"))
    assert s.joins[3] == ast.Apply(kind="CROSS", call=call("GetArrayElements", col("a", "arr")),
                                   alias=ident("e"))
    assert s.joins[4].alias == ident("p")


# ---------------------------------------------------------------- expressions


def test_precedence():
    a, b, c, d = col("a"), col("b"), col("c"), col("d")
    assert expr("a OR b AND NOT c = d") == binop(
        "OR", a, binop("AND", b, ast.UnaryOp(op="NOT", operand=binop("=", c, d))))
    assert expr("a + b * c - d") == binop("-", binop("+", a, binop("*", b, c)), d)
    assert expr("a = b | c + d") == binop("=", a, binop("|", b, binop("+", c, d)))
    assert expr("a & b ^ c") == binop("^", binop("&", a, b), c)
    assert expr("-a % ~b") == binop("%", ast.UnaryOp(op="-", operand=a), ast.UnaryOp(op="~", operand=b))
    assert expr("(a + b) * c") == binop("*", binop("+", a, b), c)


def test_operators_are_normalised():
    assert expr("a != b") == binop("<>", col("a"), col("b"))
    assert expr("a <> b") == binop("<>", col("a"), col("b"))
    assert expr("a and b or not c") == binop("OR", binop("AND", col("a"), col("b")),
                                             ast.UnaryOp(op="NOT", operand=col("c")))


def test_predicates():
    a = col("a")
    assert expr("a IS NULL") == ast.IsNull(operand=a)
    assert expr("a is not null") == ast.IsNull(operand=a, negated=True)
    assert expr("a NOT LIKE 'x%'") == ast.Like(operand=a, pattern=lit("x%"), negated=True)
    assert expr("a IN (1, 2.5, 'x')") == ast.InList(operand=a, items=(lit(1), lit(2.5), lit("x")))
    assert expr("a NOT BETWEEN 1 AND 2 AND b") == binop(
        "AND", ast.Between(operand=a, low=lit(1), high=lit(2), negated=True), col("b"))


def test_literals():
    assert [expr(t) for t in ("1", "1.5", "1e3", ".5", "'it''s'", "N'x'", "NULL")] == [
        lit(1), lit(1.5), lit(1000.0), lit(0.5), lit("it's"), lit("x"), lit(None)]
    assert expr("TRUE") == col("TRUE")  # not an ASA keyword


def test_column_references_and_brackets():
    assert expr("a.b.c") == col("a", "b", "c")
    assert expr("[a b].c") == ast.ColumnRef(parts=(ident("a b", bracketed=True), ident("c")))
    assert expr("[select]") == ast.ColumnRef(parts=(ident("select", bracketed=True),))
    assert expr("[x]]y]") == ast.ColumnRef(parts=(ident("x]y", bracketed=True),))
    assert expr("selection") == col("selection")  # a keyword prefix does not make a keyword


def test_system_timestamp_spellings():
    for text in ("System.Timestamp()", "System.Timestamp", "system.TIMESTAMP ( )", "SYSTEM . timestamp"):
        assert expr(text) == ast.SystemTimestamp()
    # Timestamp is not reserved (as in ASA): elsewhere it is a field's name
    assert expr("Foo.Timestamp") == col("Foo", "Timestamp")
    assert expr("Timestamp") == col("Timestamp")
    assert expr("[System].Timestamp") == ast.ColumnRef(
        parts=(ast.Identifier(name="System", bracketed=True), ast.Identifier(name="Timestamp")))


def test_quoted_names_and_string_aliases():
    quoted = parse('SELECT "a b" AS "x""y", c \'d e\' FROM "in" Timestamp').statements[0]
    assert quoted.items[0].expr == ast.ColumnRef(parts=(ast.Identifier(
        name="a b", bracketed=True, double_quoted=True),))  # a field, or its text (binder)
    assert quoted.items[0].alias == ast.Identifier(name='x"y', bracketed=True, double_quoted=True)
    assert quoted.items[1].alias == ast.Identifier(name="d e", bracketed=True)
    assert quoted.source.alias == ast.Identifier(name="Timestamp")
    assert quoted.source.timestamp_by is None


def test_field_of_a_parenthesised_expression():
    assert expr("(LAG(x) OVER (LIMIT DURATION(minute, 1))).a.b") == ast.MemberAccess(
        operand=call("LAG", col("x"), over=ast.OverClause(limit_duration=call(
            "DURATION", col("minute"), lit(1)))),
        parts=(ast.Identifier(name="a"), ast.Identifier(name="b")))


def test_cast_and_try_cast():
    assert expr("CAST(a AS bigint)") == ast.Cast(operand=col("a"), type_name="bigint")
    assert expr("cast(a as NVARCHAR (MAX))") == ast.Cast(operand=col("a"), type_name="nvarchar(max)")
    assert expr("TRY_CAST(a AS DateTime)") == ast.Cast(operand=col("a"), type_name="datetime", try_cast=True)


def test_case():
    assert expr("CASE WHEN a > 1 THEN 'big' ELSE 'small' END") == ast.Case(
        operand=None, whens=(ast.WhenClause(condition=binop(">", col("a"), lit(1)), result=lit("big")),),
        else_=lit("small"))
    assert expr("CASE a WHEN 1 THEN 'x' WHEN 2 THEN 'y' END") == ast.Case(
        operand=col("a"), whens=(ast.WhenClause(condition=lit(1), result=lit("x")),
                                 ast.WhenClause(condition=lit(2), result=lit("y"))))


def test_function_calls():
    assert expr("COUNT(DISTINCT a)") == call("COUNT", col("a"), distinct=True)
    assert expr("TopOne()") == call("TopOne")
    assert expr("UDF.f(a, 1)") == call("UDF.f", col("a"), lit(1))
    assert expr("DATEDIFF(second, a, b)") == call("DATEDIFF", ast.NameArgument(name="second"), col("a"), col("b"))
    assert expr("Collect() WITHIN GROUP (ORDER BY a DESC, b)") == call(
        "Collect", within_group=(ast.OrderItem(expr=col("a"), descending=True), ast.OrderItem(expr=col("b"))))


def test_over_clause():
    got = expr("LAG(a, 1) OVER (PARTITION BY b, c ORDER BY d ASC LIMIT DURATION(minute, 5) WHEN a > 0)")
    assert got == call("LAG", col("a"), lit(1), over=ast.OverClause(
        partition_by=(col("b"), col("c")),
        order_by=(ast.OrderItem(expr=col("d")),),
        limit_duration=call("DURATION", col("minute"), lit(5)),
        when=binop(">", col("a"), lit(0))))
    assert expr("LAST(a) OVER /* why */ (LIMIT DURATION(hour, 1))").over.limit_duration == call(
        "DURATION", col("hour"), lit(1))
    assert "DURATION" in syntax_error("SELECT LAG(a) OVER (LIMIT foo(1)) FROM i").message


def test_comments_and_case_insensitivity():
    query = parse("-- a job\nselect /* every\ncolumn */ a -- trailing\nInTo o fRoM i;\n/* end */")
    assert query.statements[0] == stmt("SELECT a INTO o FROM i")


# ---------------------------------------------------------------- spans


def test_spans():
    s = stmt("SELECT a,\n  b.c AS d\nFROM input TIMESTAMP BY t")
    assert s.span == Span(1, 1, 3, 26)
    item = s.items[1]
    assert item.span == Span(2, 3, 2, 11)
    assert item.expr.span == Span(2, 3, 2, 6)
    assert item.expr.parts[1].span == Span(2, 5, 2, 6)
    assert item.alias.span == Span(2, 10, 2, 11)
    assert s.source.timestamp_by.span == Span(3, 12, 3, 26)
    assert stmt("SELECT COUNT(*) FROM i").items[0].expr.span == Span(1, 8, 1, 16)


# ---------------------------------------------------------------- syntax errors


@pytest.mark.parametrize("text, message, line, column", [
    ("SELECT a, FROM b", "syntax error: unexpected 'FROM', expected an expression", 1, 11),
    ("SELECT (a + 1\nFROM b", "syntax error: unexpected 'FROM', expected ')'", 2, 1),
    ("SELECT a FROM b WHERE", "syntax error: unexpected end of query, expected an expression", 1, 22),
    ("SELECT f(a\n", "syntax error: unexpected end of query, expected ')' or ','", 1, 11),
    ("SELECT a FROM", "syntax error: unexpected end of query, expected a name", 1, 14),
    ("select a from b group x", "syntax error: unexpected 'x', expected BY", 1, 23),
    ("SELECT a FROM b JOIN c", "syntax error: unexpected end of query, "
                               "expected AS, MATCH_RECOGNIZE, ON, PARTITION, TIMESTAMP or a name", 1, 23),
    ("SELECT a", "syntax error: unexpected end of query, expected ',', AS, FROM, INTO or a name", 1, 9),
    ("", "syntax error: unexpected end of query, expected SELECT or WITH", 1, 1),
    ("SELECT a\nFROM b\nWHERE a = = 1", "syntax error: unexpected '=', expected an expression", 3, 11),
])
def test_syntax_error_messages_and_positions(text, message, line, column):
    error = syntax_error(text)
    assert error.message == message
    assert (error.span.line, error.span.column) == (line, column)


def test_keywords_are_not_names():
    error = syntax_error("SELECT from FROM b")
    assert error.message.startswith("syntax error: unexpected 'from'")
    assert (error.span.line, error.span.column) == (1, 8)


@pytest.mark.parametrize("text, words, column", [
    ("SELECT 'abc FROM b", "string literal that is never closed", 8),
    ("SELECT [abc FROM b", "never closed", 8),
    ("SELECT a FROM b /* x", "comment that is never closed", 17),
    ("SELECT a @ b FROM c", "unexpected character '@'", 10),
])
def test_lexical_errors(text, words, column):
    error = syntax_error(text)
    assert words in error.message
    assert (error.span.line, error.span.column) == (1, column)


def test_error_renders_with_a_caret():
    text = "SELECT a\nFROM b WHERE )"
    rendered = syntax_error(text).render(text, "q.sql")
    assert rendered.startswith("q.sql:2:14: error: syntax error")
    assert rendered.splitlines()[-1].endswith("^")


def test_deep_nesting_does_not_overflow_the_stack():
    assert expr("(" * 3000 + "1" + ")" * 3000) == lit(1)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_parses_or_raises_a_query_error(text):
    try:
        result = parse(text)
    except (QuerySyntaxError, UnsupportedFeatureError) as error:
        assert error.span is None or (error.span.line >= 1 and error.span.column >= 1)
    else:
        assert isinstance(result, ast.Query)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(
    ["SELECT", "FROM", "a", "b.c", "[x y]", "1", ".5", "'s'", "(", ")", ",", "*", "=", "AND", "NOT",
     "IN", "BETWEEN", "CASE", "WHEN", "THEN", "END", "CAST", "AS", "OVER", "TIMESTAMP", "BY", "--", "/*",
     "*/", "\n", "System.Timestamp", "JOIN", "ON", "WITH", "UNION", ";", "INTO", "GROUP"]), max_size=30))
def test_token_soup_parses_or_raises_a_query_error(words):
    try:
        parse(" ".join(words))
    except (QuerySyntaxError, UnsupportedFeatureError):
        pass


def test_match_recognize_without_limit_duration_is_a_syntax_error_at_its_position():
    with pytest.raises(QuerySyntaxError) as info:
        parse("SELECT *\nFROM i\n  MATCH_RECOGNIZE (PARTITION BY a PATTERN (A) DEFINE A AS a > 1) AS m")
    assert (info.value.span.line, info.value.span.column) == (3, 20)


def test_match_recognize_parses_to_its_pattern_tree():
    query = parse("SELECT * FROM i TIMESTAMP BY t MATCH_RECOGNIZE (LIMIT DURATION(minute, 1) "
                  "PARTITION BY k MEASURES Last(A.x) AS a AFTER MATCH SKIP TO NEXT ROW "
                  "PATTERN ((A | B)+ .? C*) DEFINE A AS A.x = 1) AS T")
    match = query.statements[0].source.match_recognize
    assert [m.alias.name for m in match.measures] == ["a"]
    assert [d.name.name for d in match.defines] == ["A"]
    sequence = match.pattern
    assert isinstance(sequence, ast.PatternSequence) and len(sequence.items) == 3
    group, anything, tail = sequence.items
    assert group.quantifier == "+" and isinstance(group.item, ast.PatternAlternation)
    assert anything.quantifier == "?" and anything.item.name is None
    assert tail.quantifier == "*" and tail.item.name.name == "C"


def test_match_recognize_names_the_wrong_word():
    with pytest.raises(QuerySyntaxError) as info:
        parse("SELECT * FROM i MATCH_RECOGNIZE (LIMIT DURATION(minute, 1) MEASURES Last(A.x) AS a "
              "AFTER MATCH SKIP TO LAST ROW PATTERN (A) DEFINE A AS 1) AS T")
    assert "AFTER MATCH SKIP TO NEXT ROW" in info.value.message
    assert (info.value.span.line, info.value.span.column) == (1, 104)


def test_repartition_with_shard_count():
    source = parse("SELECT * FROM input PARTITION BY DeviceId INTO 10").statements[0].source
    assert source.partition_by == col("DeviceId") and source.shard_count == 10
    assert parse("SELECT * FROM i PARTITION BY PartitionId").statements[0].source.shard_count is None
    error = syntax_error("SELECT * FROM input PARTITION BY DeviceId INTO 0")
    assert "shard count" in error.message and (error.span.line, error.span.column) == (1, 48)
