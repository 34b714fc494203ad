"""Query text that once broke `asaql check` (issue 13): one test per defect, each asserting the
located message or the decoded text; the CLI path too. No Spark."""

from __future__ import annotations

import codecs

import pytest
from click.testing import CliRunner

from asaql.cli import cli
from asaql.compiler.check import check_query
from asaql.errors import AsaqlError
from asaql.syntax.query_text import QueryFileError, decode_query, read_query_file
from asaql.syntax import recovery
from asaql.syntax.limits import MAX_EXPRESSION_DEPTH

QUERY = "SELECT deviceId\nINTO alerts\nFROM input\nWHERE temperature > 25\n"


def only_error(text: str):
    errors = check_query(text).errors
    assert len(errors) == 1, [e.message for e in errors]
    return errors[0]


# ------------------------------------------------------------------ encodings


@pytest.mark.parametrize("data", [
    QUERY.encode("utf-8"),
    codecs.BOM_UTF8 + QUERY.encode("utf-8"),
    QUERY.encode("utf-16"),  # with its byte-order mark, in the machine's order
    codecs.BOM_UTF16_LE + QUERY.encode("utf-16-le"),
    codecs.BOM_UTF16_BE + QUERY.encode("utf-16-be"),
], ids=["utf-8", "utf-8-bom", "utf-16", "utf-16-le-bom", "utf-16-be-bom"])
def test_utf8_with_or_without_bom_and_utf16_with_bom_decode_to_the_same_query(data):
    assert decode_query(data) == QUERY
    assert not check_query(decode_query(data)).errors


@pytest.mark.parametrize("data, offset", [
    (b"SELECT a INTO b FROM c WHERE d = '\xe9t\xe9'", 34),  # Latin-1, not UTF-8
    (codecs.BOM_UTF8 + "SELECT 'é".encode("utf-8")[:-1], 11),  # a BOM, then cut in a character
    (codecs.BOM_UTF8[:2], 0),  # a byte-order mark cut short
    (codecs.BOM_UTF16_LE + "SELECT".encode("utf-16-le")[:-1], 12),  # UTF-16 with an odd length
], ids=["latin-1", "bom-then-cut-character", "cut-bom", "utf-16-odd-length"])
def test_undecodable_bytes_are_an_error_naming_the_file_and_byte_offset(data, offset):
    with pytest.raises(QueryFileError) as caught:
        decode_query(data, "q.sql")
    assert caught.value.message.startswith("q.sql is not valid UTF-")
    assert f"offset {offset} " in caught.value.message


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_every_line_end_gives_the_same_line_and_column(line_end):
    text = "SELECT a\nINTO b\nFROM c\nWHERE d > \nSELECT e INTO f FROM g".replace("\n", line_end)
    error = only_error(text)
    assert (error.span.line, error.span.column) == (4, 10)
    rendered = error.render(text, "q.sql")
    assert " 4 | WHERE d > \n" in rendered + "\n"


# ------------------------------------------------------------------ characters and recovery


def test_a_non_ascii_letter_outside_a_string_is_a_located_error():
    text = "SELECT a INTO b FROM c\nSELECT straße INTO d FROM e\nSELECT f INTO g FROM h"
    error = only_error(text)
    assert error.message == "syntax error: unexpected character 'ß'"
    assert (error.span.line, error.span.column) == (2, 12)
    assert check_query("SELECT 'straße' AS s INTO o FROM i").errors == []


def test_recovery_parses_each_part_of_the_text_a_bounded_number_of_times(monkeypatch):
    """Linear: with many broken statements, the characters parsed (up to the error, when a
    parse fails) stay a small multiple of the text (the old recovery parsed the whole text
    again after each error)."""
    broken = "SELECT a INTO o FROM i WHERE\n"
    good = "SELECT a INTO o FROM i WHERE a > 1\n"
    text = (good * 20 + broken) * 30
    parsed = []
    real = recovery.parse_slice

    def counting(lines, start, end, rule="query"):
        try:
            result = real(lines, start, end, rule)
        except AsaqlError as error:
            parsed.append(lines.offset(error.span.line, error.span.column) - start)
            raise
        parsed.append(end - start)
        return result

    monkeypatch.setattr(recovery, "parse_slice", counting)
    tree, errors = recovery.parse_all(text)
    assert len(errors) == 30 and len(tree.statements) == 600
    assert sum(parsed) <= 4 * len(text)


def test_recovery_goes_on_past_a_broken_with_step():
    text = ("WITH s1 AS (SELECT a FROM i WHERE), s2 AS (SELECT a FROM i),\n"
            "s3 AS (SELECT FROM i)\nSELECT a INTO o FROM s2\nSELECT a INTO p FROM i WHERE\n")
    tree, errors = recovery.parse_all(text)
    assert [(e.span.line, e.span.column) for e in errors] == [(1, 34), (2, 15), (4, 29)]
    assert [s.name.name for s in tree.steps] == ["s2"]
    assert len(tree.statements) == 1


# ------------------------------------------------------------------ depth and numbers


@pytest.mark.parametrize("expression", [
    "~" * 1000 + "a",
    " + ".join(["a"] * 3000),
    "NOT " * 400 + "a = 1",
    "ABS(" * 500 + "a" + ")" * 500,
], ids=["unary", "binary-chain", "not", "calls"])
def test_an_expression_nested_too_deep_is_a_located_error(expression):
    error = only_error(f"SELECT 1 AS x INTO o FROM i\nWHERE {expression}")
    assert error.message == \
        f"syntax error: expression nested too deep (limit {MAX_EXPRESSION_DEPTH} levels)"
    assert error.span.line == 2


def test_an_expression_just_within_the_limit_checks_clean():
    chain = " OR ".join(f"a = {i}" for i in range(MAX_EXPRESSION_DEPTH - 5))
    assert check_query(f"SELECT a INTO o FROM i WHERE {chain}").errors == []


@pytest.mark.parametrize("literal, message", [
    ("9" * 4301, "integer literal out of range for bigint"),
    ("9223372036854775808", "integer literal out of range for bigint"),
    ("1e309", "number out of range for float"),
])
def test_numbers_beyond_bigint_or_double_are_a_located_error(literal, message):
    error = only_error(f"SELECT a INTO o FROM i\nWHERE x = {literal}")
    assert message in error.message
    assert (error.span.line, error.span.column) == (2, 11)
    assert error.span.end_column == 11 + len(literal)


def test_the_largest_bigint_is_a_number():
    assert check_query("SELECT 9223372036854775807 AS n, 0009 AS m INTO o FROM i").errors == []


# ------------------------------------------------------------------ through the CLI


def test_check_reads_utf16_and_cr_only_files_and_refuses_undecodable_ones(tmp_path):
    runner = CliRunner()
    utf16 = tmp_path / "utf16.sql"
    utf16.write_bytes("SELECT a\rINTO b\rFROM c\rWHERE ß\r".encode("utf-16"))
    result = runner.invoke(cli, ["check", str(utf16)])
    assert result.exit_code == 1, result.output
    assert f"{utf16}:4:7: error: syntax error: unexpected character 'ß'" in result.output
    assert " 4 | WHERE ß\n   |       ^" in result.output

    latin1 = tmp_path / "latin1.sql"
    latin1.write_bytes("SELECT 'é' INTO b FROM c".encode("latin-1"))
    result = runner.invoke(cli, ["check", str(latin1)])
    assert result.exit_code == 2
    assert result.output.startswith(f"error: {latin1} is not valid UTF-8 text: the bytes at "
                                    "offset 8 (e9 27 20 49)")
    assert "Traceback" not in result.output


def test_a_golden_case_query_is_read_through_the_same_decoder(tmp_path):
    (tmp_path / "query.sql").write_bytes(codecs.BOM_UTF8 + b"SELECT a\r\nINTO b FROM c\r\n")
    assert read_query_file(tmp_path / "query.sql") == "SELECT a\nINTO b FROM c\n"
    with pytest.raises(QueryFileError, match="cannot read query file"):
        read_query_file(tmp_path / "missing.sql")


def test_a_group_by_error_over_a_with_step_is_located():
    """A step that aggregates is read as a stage, whose columns had no position."""
    text = ("WITH PerMinute AS (\n"
            "    SELECT dev, COUNT(*) AS n FROM input TIMESTAMP BY t\n"
            "    GROUP BY dev, TumblingWindow(minute, 1)\n"
            ")\n"
            "SELECT n, MAX(n) AS peak INTO peaks FROM PerMinute\n"
            "GROUP BY dev, TumblingWindow(minute, 5)\n")
    error = only_error(text)
    assert error.message == "'n' must be in GROUP BY or inside an aggregate"
    assert (error.span.line, error.span.column) == (5, 8)
