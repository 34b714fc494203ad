"""JSON-lines records from whole files: their lines, a JSON array's elements, and the lines
schema inference reads. What makes a record malformed: record_checks.py."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from asaql.inputs.position import ELEMENT_BITS, MAX_ELEMENTS
from asaql.jvm.engine import JSON_TEXTS, TEXT_LINES, TOP_LEVEL_VALUES
from asaql.runtime import columns as C
from asaql.spark.sources.ordered_files import WARMUP_LINES
from asaql.spark.sources.record_checks import (lower_all, object_keys, shape_problem,
                                                top_level_values)
from asaql.spark.text_select import literal, quoted, select_text

BOM = "\ufeff"


def split_lines(files: DataFrame, jvm: bool = False) -> DataFrame:
    """Whole files (`value`, `_metadata`) → one row per non-blank line: FILE, its modification
    time, LINE (1-based) and the line's text, without a CR before the LF nor a byte-order mark
    at the start of the file. A file that is one JSON array spread over several lines (ASA's
    "array" JSON format, pretty-printed) is one record at line 1 (array_elements splits it).
    Written as SQL text: one round trip to the JVM per projection (text_select.py). `jvm`:
    the engine cuts the lines (TextLines.scala: Spark's split, without its detour through
    Java strings)."""
    value = f"CASE WHEN startswith(value, {literal(BOM)}) THEN substring(value, 2, {2**31 - 1}) " \
            "ELSE value END"
    line = "_asaql_pos + 1"
    warmup = "warmup" in files.schema["_metadata"].dataType.fieldNames()  # ordered_files.py
    if warmup:
        line += f" - CASE WHEN _asaql_warmup THEN {WARMUP_LINES} ELSE 0 END"
    cut = f"{TEXT_LINES}({value})" if jvm else f"split({value}, {literal(chr(10))})"
    lines = select_text(files, [
        f"_metadata.file_path AS {quoted(C.FILE)}",
        "_metadata.file_modification_time AS _asaql_mtime",
        *(["_metadata.warmup AS _asaql_warmup"] if warmup else []),
        f"posexplode(CASE WHEN {_whole_array(value)} THEN array({value}) "
        f"ELSE {cut} END) AS (_asaql_pos, _asaql_text)",
    ])
    # CRLF files: drop the '\r' (a regular expression per line cost ~1 s per million)
    text = f"CASE WHEN endswith(_asaql_text, {literal(chr(13))}) " \
           "THEN substring(_asaql_text, 1, length(_asaql_text) - 1) ELSE _asaql_text END"
    return select_text(lines, [quoted(C.FILE), "_asaql_mtime", f"{line} AS {quoted(C.LINE)}",
                               f"{text} AS _asaql_text"]) \
        .where("trim(_asaql_text) != ''")


def _whole_array(value: str) -> str:
    """A file that starts with '[' and whose first line does not end the array: one array
    spread over lines. A first line ending in ']' is a line of its own (JSON lines of arrays,
    or a one-line array: the same events either way). Spark's parser would read only the
    first of several arrays in a text, so the whole text is never parsed as one on trust."""
    first_line = f"rtrim(substring_index({value}, {literal(chr(10))}, 1))"
    return f"(startswith(ltrim({value}), '[') AND NOT endswith({first_line}, ']'))"


def array_elements(lines: DataFrame, jvm: bool = False) -> DataFrame:
    """Lines (`_asaql_text`, LINE) → one row per event: a line holding a JSON array gives one
    per element (ASA reads a message or blob holding an array of objects as those objects),
    any other line itself. LINE becomes the event's position (asaql/inputs/position.py):
    the line's, or a CSV/Avro message's record (ELEMENT, from the Kafka source), or the array
    element's. ARRAY_PROBLEM: why the line or element is no event (a malformed or empty array,
    a null element); the others (a number, a string, a nested array) are found by
    shape_problem like any line that is not an object. `jvm`: the bracket walk by the JVM
    engine (RecordText.scala), which keeps the projection in whole-stage code generation.
    Written as SQL text, as split_lines."""
    is_array = "coalesce(startswith(ltrim(_asaql_text), '['), false)"
    source_element = quoted(ELEMENT) if ELEMENT in lines.columns else "CAST(NULL AS int)"
    others = [quoted(c) for c in lines.columns if c not in ("_asaql_text", C.LINE, ELEMENT)]
    if jvm:
        closes = f"{TOP_LEVEL_VALUES}(_asaql_text)"
    else:  # the walk's lambdas in a projection of their own (a rare fallback: no engine)
        lines = select_text(lines, ["*", f"CASE WHEN {is_array} THEN "
                                    f"{top_level_values('_asaql_text')} END AS _asaql_closes"])
        closes = "_asaql_closes"
    # parsed once, only for a line that starts with '[' (the common line pays a prefix test)
    parse = f"{JSON_TEXTS}(_asaql_text)" if jvm \
        else "from_json(_asaql_text, 'array<string>')"
    with_elements = select_text(lines, [
        *others, quoted(C.LINE), "_asaql_text", f"{source_element} AS {quoted(ELEMENT)}",
        f"{is_array} AS _asaql_is_array",
        f"CASE WHEN {is_array} THEN {parse} END AS _asaql_elements",
        *([closes] if not jvm else [])])
    line_problem = (
        "CASE WHEN _asaql_is_array AND _asaql_elements IS NULL "
        f"THEN {literal('malformed JSON: an array that does not parse')} "
        # the parser stops at the array's end: what follows would be lost unseen
        f"WHEN _asaql_is_array AND (NOT endswith(rtrim(_asaql_text), ']') OR {closes} > 1) "
        f"THEN {literal('text after the JSON array')} "
        "WHEN _asaql_is_array AND size(_asaql_elements) = 0 "
        f"THEN {literal('an empty JSON array: no event in it')} END")
    checked = select_text(with_elements, [
        *others, quoted(C.LINE), quoted(ELEMENT), "_asaql_text", "_asaql_elements",
        f"{line_problem} AS _asaql_line_problem",
        f"(_asaql_is_array AND ({line_problem}) IS NULL) AS _asaql_usable"])
    # only flags go past the explode: a whole-file array is not copied once per element
    exploded = select_text(checked, [
        *others, quoted(C.LINE), quoted(ELEMENT), "_asaql_line_problem", "_asaql_usable",
        "posexplode(CASE WHEN _asaql_usable THEN _asaql_elements ELSE array(_asaql_text) END) "
        "AS (_asaql_pos, _asaql_text)"])
    index = "CASE WHEN _asaql_usable THEN _asaql_pos END"
    problem = (
        "coalesce(_asaql_line_problem, CASE WHEN _asaql_usable THEN CASE "
        f"WHEN _asaql_pos >= {MAX_ELEMENTS} "
        f"THEN {literal(f'an array of more than {MAX_ELEMENTS} events')} "
        f"WHEN _asaql_text IS NULL THEN {literal('a null array element, not a JSON object')} "
        "END END)")
    where = f"CAST({quoted(C.LINE)} AS bigint) * {1 << ELEMENT_BITS} " \
        f"+ CAST(coalesce({index} + 1, {quoted(ELEMENT)} + 1, 0) AS bigint)"
    text = "coalesce(_asaql_text, CASE WHEN _asaql_usable THEN 'null' END)"  # as sent
    return select_text(exploded, [*others, f"{where} AS {quoted(C.LINE)}",
                                  f"{text} AS _asaql_text", f"{problem} AS {ARRAY_PROBLEM}"])


ELEMENT = "_asaql_element"  # the record's index in its Kafka message (CSV, Avro), if several
ARRAY_PROBLEM = "_asaql_array_problem"


def clean_lines(files: DataFrame) -> DataFrame:
    """The lines of whole files that can be one JSON object (`value`): what schema inference
    reads. A record with a PartitionId that is not a partition number is left out too, so that
    it does not widen the field's type (to text) for the good ones: a regular expression on the
    text, as a parse here would double the inference's cost."""
    lines = array_elements(split_lines(files)).where(f"{ARRAY_PROBLEM} IS NULL")
    lines = select_text(lines, ["_asaql_text", f"{object_keys('_asaql_text')} AS _asaql_keys"])
    unique_keys = "coalesce(size(_asaql_keys) < 2 OR size(_asaql_keys) = size(array_distinct(" \
        f"{lower_all('_asaql_keys')})), true)"
    partition = f"(NOT contains(_asaql_text, {literal(chr(34) + C.PARTITION_FIELD + chr(34))}) " \
        f"OR rlike(_asaql_text, {literal(_PARTITION_NUMBER)}))"
    return lines.where(f"({shape_problem('_asaql_text')}) IS NULL AND {unique_keys} "
                       f"AND {partition}").select(F.col("_asaql_text").alias("value"))


_PARTITION_NUMBER = rf'"{C.PARTITION_FIELD}"\s*:\s*"?\d{{1,18}}"?\s*[,}}]'
