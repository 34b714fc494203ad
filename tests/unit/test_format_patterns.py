""".NET format strings (FORMAT) translated when the query compiles: the Java patterns Spark
gets, and the errors at the format's or the culture's position."""

import pytest

from asaql.core.format_patterns import (CustomNumber, FormatError, StandardNumber, culture_of,
                                            translate)
from asaql.compiler.pipeline import compile_query
from asaql.errors import InvalidQueryError, UnsupportedFeatureError


def java_date(text: str, culture: str = "en-US") -> str:
    [piece] = translate(text, culture).datetime.pieces
    assert piece.kind == "java"
    return piece.text


def test_standard_numeric_formats_keep_letter_case_and_precision():
    assert translate("N").number == StandardNumber("N", 2)
    assert translate("n0").number == StandardNumber("N", 0, upper=False)
    assert translate("E").number == StandardNumber("E", 6)
    assert translate("x8").number == StandardNumber("X", 8, upper=False)
    assert translate("D5").number == StandardNumber("D", 5) and translate("D5").datetime is None
    assert translate("G").number == StandardNumber("G", None)


def test_letters_that_are_both_keep_both_readings():
    plan = translate("D")
    assert plan.number == StandardNumber("D", None)
    assert java_date("D") == "EEEE', 'MMMM' 'd', 'yyyy"
    assert java_date("D", "invariant") == "EEEE', 'dd' 'MMMM' 'yyyy"
    assert java_date("d") == "M'/'d'/'yyyy" and java_date("d", "invariant") == "MM'/'dd'/'yyyy"


def test_standard_date_formats():
    assert java_date("s") == "yyyy'-'MM'-'dd'T'HH':'mm':'ss"
    assert java_date("o") == "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'SSSSSSS'Z'"
    assert java_date("u") == "yyyy'-'MM'-'dd' 'HH':'mm':'ss'Z'"
    assert java_date("T") == "h':'mm':'ss' 'a"
    assert java_date("t", "invariant") == "HH':'mm"
    assert java_date("Y") == "MMMM' 'yyyy"


def test_custom_date_patterns_become_java_patterns_with_quoted_literals():
    assert java_date("yyyy-MM-dd") == "yyyy'-'MM'-'dd"
    assert java_date("dddd, MMMM dd, yyyy hh:mm:ss tt") == \
        "EEEE', 'MMMM' 'dd', 'yyyy' 'hh':'mm':'ss' 'a"
    assert java_date("ddd MMM d HH:mm:ss.fff") == "EEE' 'MMM' 'd' 'HH':'mm':'ss'.'SSS"
    assert java_date("'at' HH\\h") == "'at '" + "HH'h'"
    assert java_date("%d") == "d"
    # .NET has no escaped quote inside quotes: '' ends one literal and starts the next
    assert java_date("yyyy 'it''s'") == "yyyy' its'"


def test_what_java_has_no_letter_for_becomes_its_own_piece():
    pieces = translate("y/M t HH:mm:ss.FFF zzz").datetime.pieces
    assert [(p.kind, p.text, p.width) for p in pieces] == [
        ("year", "", 0), ("java", "'/'M' '", 0), ("ampm1", "", 0),
        ("java", "' 'HH':'mm':'ss", 0), ("fraction", ".", 3), ("text", " +00:00", 0)]


def test_custom_numeric_patterns_become_decimalformat_patterns():
    [section] = translate("#,##0.00").number.sections
    assert (section.java, section.scale, section.decimals) == ("#,##0.00", 1.0, 2)
    [section] = translate("0000").number.sections
    assert section.java == "0000"
    [section] = translate("0,000.0#").number.sections  # .NET groups by three wherever ',' is
    assert section.java == "0,000.0#"
    [section] = translate("#,#").number.sections
    assert section.java == "#,###"
    [section] = translate("0.0%").number.sections
    assert (section.java, section.scale, section.decimals) == ("0.0'%'", 100.0, 1)
    [section] = translate("#,##0,,").number.sections  # commas before the end: ÷ 1000 each
    assert (section.java, section.scale) == ("#,##0", 1e-6)
    [section] = translate("'Total: '#0 \"kg\"").number.sections
    assert section.java == "'Total: '0' kg'"


def test_sections_and_literals_between_digits():
    plan = translate("$#,##0.00;($#,##0.00);Zero").number
    assert isinstance(plan, CustomNumber) and len(plan.sections) == 3
    assert plan.sections[1].java == "'($'#,##0.00')'"
    assert plan.sections[2].java is None and plan.sections[2].digits == ("'Zero",)
    [section] = translate("###-##-####").number.sections
    assert section.java is None
    assert [d for d in section.digits if d != "'"] == ["#", "#", "#", "'-", "#", "#", "'-",
                                                      "#", "#", "#", "#"]


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("Q", "'Q' is not a standard numeric format"),
    ("abc", "needs a digit placeholder"),
    ("yyyy 'x", "the quote at 6 is not closed"),
    ("0.0E+0", "exponents in custom numeric formats are not supported yet"),
    ("0.#-#", "literal characters between the digits are supported in whole number formats"),
    ("ss.ffffffff", "at most seven 'f'"),
])
def test_untranslatable_formats_say_why(text, message):
    with pytest.raises(FormatError, match=None) as info:
        translate(text)
    assert message in str(info.value)


def test_cultures():
    assert culture_of(None) == "en-US" and culture_of("en-us") == "en-US"
    assert culture_of("") == "invariant"
    with pytest.raises(FormatError, match="'de-DE' is not supported"):
        culture_of("de-DE")


@pytest.mark.parametrize("query, kind, message, column", [
    ("SELECT FORMAT(x, 'Q') FROM i", InvalidQueryError, "cannot read the format 'Q'", 18),
    ("SELECT FORMAT(x, 'N2', 'fr-FR') FROM i", InvalidQueryError,
     "the culture 'fr-FR' is not supported", 24),
    ("SELECT FORMAT(x, f) FROM i", UnsupportedFeatureError,
     "a format that is not a string literal", 18),
    ("SELECT FORMAT(x, 'N', c) FROM i", UnsupportedFeatureError,
     "a culture that is not a string literal", 23),
    ("SELECT FORMAT(x) FROM i", InvalidQueryError, "takes 2 to 3 arguments", 8),
])
def test_errors_at_check_time_are_located(query, kind, message, column):
    with pytest.raises(kind) as info:
        compile_query(query)
    assert message in str(info.value)
    assert (info.value.span.line, info.value.span.column) == (1, column)


def test_a_null_format_or_culture_compiles():
    compile_query("SELECT FORMAT(x, NULL) AS a, FORMAT(x, 'N', NULL) AS b FROM i")
