"""What makes a JSON-lines record malformed, as native Spark expressions over its text.

Spark's JSON parser accepts things ASA's does not (text after the object, invalid UTF-8 after
it, duplicate keys: the last one wins) and its schema inference dies on others (a duplicate key
is COLUMN_ALREADY_EXISTS, a 200-deep object an unpicklable schema). So every line is checked
here: the stream marks the line malformed with the reason, and schema inference, when Spark's
own saw such a line, reads only lines that pass. The checks cost little on a good line: the
expensive ones (a regular expression, a bracket walk) run only on the rare line a cheap test
singles out (about 1.3× the parse alone: benchmarks/record_checks.py).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.inputs.position import ELEMENT_BITS, MAX_ELEMENTS
from asaql.inputs.records import MAX_DEPTH
from asaql.jvm.engine import JSON_TEXTS, TOP_LEVEL_VALUES
from asaql.runtime import columns as C
from asaql.spark import jvm_functions
from asaql.spark.sources.ordered_files import WARMUP_LINES
from asaql.spark.text_select import literal, quoted, select_text

BOM = "\ufeff"
REPLACEMENT = "\ufffd"  # what the text reader makes of bytes that are not UTF-8
# A JSON string literal; possessive quantifiers, so Java's regex engine does not recurse per
# character (a long string would overflow its stack).
_STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'


def split_lines(files: DataFrame) -> DataFrame:
    """Whole files (`value`, `_metadata`) → one row per non-blank line: FILE, its modification
    time, LINE (1-based) and the line's text, without a CR before the LF nor a byte-order mark
    at the start of the file. A file that is one JSON array spread over several lines (ASA's
    "array" JSON format, pretty-printed) is one record at line 1 (array_elements splits it).
    Written as SQL text: one round trip to the JVM per projection (text_select.py)."""
    value = f"CASE WHEN startswith(value, {literal(BOM)}) THEN substring(value, 2, {2**31 - 1}) " \
            "ELSE value END"
    line = "_asaql_pos + 1"
    warmup = "warmup" in files.schema["_metadata"].dataType.fieldNames()  # ordered_files.py
    if warmup:
        line += f" - CASE WHEN _asaql_warmup THEN {WARMUP_LINES} ELSE 0 END"
    lines = select_text(files, [
        f"_metadata.file_path AS {quoted(C.FILE)}",
        "_metadata.file_modification_time AS _asaql_mtime",
        *(["_metadata.warmup AS _asaql_warmup"] if warmup else []),
        f"posexplode(CASE WHEN {_whole_array(value)} THEN array({value}) "
        f"ELSE split({value}, {literal(chr(10))}) END) AS (_asaql_pos, _asaql_text)",
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
    else:  # the walk's lambdas as a Column of their own (a rare fallback: no engine)
        lines = lines.select("*", F.when(F.expr(is_array), _top_level_values(
            F.col("_asaql_text"))).alias("_asaql_closes"))
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


def shape_problem(text: Column, deferred: Column | None = None, jvm: bool = False) -> Column:
    """The reason a line is not one JSON object as ASA reads it, found from its text alone;
    NULL for a line that may be one (the JSON parser then has its say). `deferred`: what to give
    instead of a reason found by a walk over the brackets (a lambda, which keeps Spark from
    compiling the whole projection: see DEFERRED)."""
    # each test is guarded by one a good line fails at once: a '{' first (no copy without the
    # leading spaces), no bracket after the first character (no count of them)
    depth = F.when(_depth(text, jvm) > MAX_DEPTH,
                   F.lit(f"nested deeper than {MAX_DEPTH} levels"))
    return (
        F.when(text.contains(REPLACEMENT)
               & F.regexp_replace(text, _STRING, '""').contains(REPLACEMENT),
               F.lit("invalid UTF-8 outside a string"))
        .when(~text.startswith("{") & ~F.ltrim(text).startswith("{"),
              F.lit("not a JSON object (an array, a number, a string, true, false or null)"))
        .when(_many_brackets(text) & (_bracket_count(text) > MAX_DEPTH),
              depth if deferred is None else deferred)
    )


DEFERRED = "\u0000deferred"
"""A reason not computed yet: the checks run first without the rare expressions Spark cannot
compile (higher-order functions with lambdas, a parse per field), which keep a whole projection
out of whole-stage code generation; a record given DEFERRED has its reason computed again with
them (asaql/spark/sources/io.py). An exact detour: the rare expression is replaced where it would have
been evaluated, so a record that never reaches one gets the same reason either way."""


def _many_brackets(text: Column) -> Column:
    """Whether the line may hold more than MAX_DEPTH opening brackets: then it has a bracket
    after its first character (a scan: a flat record has none) and more than half as many '{'
    or '['. Counted by Java's split of one character, with a limit (`_bracket_count` copies the
    line twice; `substring_index` compares bytes one call per position: each cost 3× more)."""
    half = MAX_DEPTH // 2 + 1
    return (text.contains("[") | F.substring(text, 2, 2**31 - 1).contains("{")) \
        & ((F.size(F.split(text, "\\{", half + 1)) > half)
           | (F.size(F.split(text, "\\[", half + 1)) > half))


def parse_problem(text: Column, corrupt: Column, schema: T.StructType, keys: Column,
                  filled: Column | None = None, deferred: Column | None = None,
                  jvm: bool = False) -> Column:
    """The reason for a line the JSON parser refused (`corrupt`, with `schema`) or accepted too
    kindly. `keys`: a column of the line's `object_keys`, computed once before (each use of
    the expression here would parse the line again). `filled`: how many fields of `schema` the
    parser filled (non-NULL), when the schema has one field per name ignoring case (see
    `filled_fields`): each was filled by a key of its own name, so a line with no more keys
    than that has none twice, and its keys are not compared (the common line: every key known,
    no NULL). `deferred`: as for shape_problem, instead of naming a misfit field or the
    repeated key."""
    lowered = _lower_all(keys)
    first_repeated = jvm_functions.repeated_key(keys, lowered) if jvm else \
        F.filter(keys, lambda k: F.size(F.filter(lowered, lambda x: x == F.lower(k))) > 1)[0]
    repeated = F.concat(F.lit("duplicate key '"), first_repeated, F.lit("'"))
    unexplained = F.size(keys) > 1 if filled is None else \
        (F.size(keys) > 1) & (F.size(keys) > filled)
    return (
        F.when(corrupt & text.rlike("[\\x00-\\x08\\x0a-\\x1f]"),
               F.lit("malformed JSON: a control character (U+0000 to U+001F) that is not escaped"))
        .when(corrupt & F.get_json_object(text, "$").isNull(), F.lit("malformed JSON"))
        .when(corrupt, _misfit(text, schema, jvm) if deferred is None else deferred)
        .when(unexplained & (F.size(keys) != F.size(F.array_distinct(lowered))),
              repeated if deferred is None else deferred)
        .when(~text.endswith("}") & ~F.rtrim(text).endswith("}") & ~text.rlike(r"\}\s*$"),
              F.lit("text after the JSON object"))
    )


def filled_fields(record: Column, schema: T.StructType) -> Column | None:
    """How many top-level fields of the parsed `record` are not NULL (for `parse_problem`); None
    when the schema has a name twice ignoring case (two fields could then be one key's)."""
    lowered = [f.name.lower() for f in schema.fields]
    if len(set(lowered)) != len(lowered):
        return None
    counts = [F.when(record[f.name].isNotNull(), 1).otherwise(0) for f in schema.fields]
    while len(counts) > 1:  # summed pairwise: a wide schema gives a shallow expression
        counts = [a + b for a, b in zip(counts[::2], counts[1::2])] + counts[len(counts) // 2 * 2:]
    return counts[0] if counts else F.lit(0)


def _misfit(text: Column, schema: T.StructType, jvm: bool = False) -> Column:
    """Which field of a well-formed record does not fit the inferred type: each field is parsed
    alone (only on such a line: it is rare)."""
    generic = F.lit("a field does not have the type the input's other records give it")
    if len(schema.fields) > _NAMED_FIELDS:
        return generic
    reasons = []
    for f in schema.fields:
        alone = T.StructType([f, T.StructField("_asaql_misfit", T.StringType())])
        options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_asaql_misfit"}
        parsed = jvm_functions.json_record(text, alone, options, MAX_DEPTH)["record"] if jvm \
            else F.from_json(text, alone, options)
        value = F.get_json_object(text, "$." + f.name) if f.name.isidentifier() else F.lit("?")
        if f.name == C.PARTITION_FIELD:
            why = F.concat(F.lit(f"{C.PARTITION_FIELD} '"), value, F.lit(f"' {NOT_PARTITION}"))
        else:
            why = F.concat(F.lit(f"field '{f.name}' is '"), F.substring(value, 1, 80),
                           F.lit(f"' where the input's other records have a "
                                 f"{f.dataType.simpleString()[:60]}"))
        reasons.append(F.when(parsed["_asaql_misfit"].isNotNull(), why))
    return F.coalesce(*reasons, generic)


_NAMED_FIELDS = 64  # beyond, a misfit is not named (a parse per field would bloat the plan)
NOT_PARTITION = "is not a partition number (a whole number, 0 or more)"


def object_keys(text: Column) -> Column:
    """The record's top-level keys (NULL for a line that is not an object)."""
    return F.json_object_keys(text)


def clean_lines(files: DataFrame) -> DataFrame:
    """The lines of whole files that can be one JSON object (`value`): what schema inference
    reads. A record with a PartitionId that is not a partition number is left out too, so that
    it does not widen the field's type (to text) for the good ones: a regular expression on the
    text, as a parse here would double the inference's cost."""
    lines = array_elements(split_lines(files)).where(F.col(ARRAY_PROBLEM).isNull())
    lines = lines.select("*", object_keys(F.col("_asaql_text")).alias("_asaql_keys"))
    text, keys = F.col("_asaql_text"), F.col("_asaql_keys")
    unique_keys = F.coalesce((F.size(keys) < 2)
                             | (F.size(keys) == F.size(F.array_distinct(_lower_all(keys)))),
                             F.lit(True))
    partition = ~text.contains(f'"{C.PARTITION_FIELD}"') \
        | text.rlike(rf'"{C.PARTITION_FIELD}"\s*:\s*"?\d{{1,18}}"?\s*[,}}]')
    return lines.where(shape_problem(text).isNull() & unique_keys & partition) \
        .select(text.alias("value"))


def _lower_all(keys: Column) -> Column:
    """The keys in lower case, without a lambda (higher-order functions are not compiled: a
    `transform` per line cost more than the parse)."""
    return F.split(F.lower(F.array_join(keys, _SEPARATOR)), _SEPARATOR)


_SEPARATOR = "\u0001"  # a control character: no real key holds one


def _bracket_count(text: Column) -> Column:
    """Opening brackets anywhere (strings included): a bound on the depth, cheap to count in
    bytes (`translate` made the whole read 8× slower)."""
    def without(bracket: str) -> Column:
        return F.octet_length(F.replace(text, F.lit(bracket), F.lit("")))
    return F.octet_length(text) * 2 - without("{") - without("[")


def _top_level_values(text: Column) -> Column:
    """How many times the brackets outside strings close back to the top level: 1 for one
    array or object, more for `[…] […]` (a walk: only on a line that starts with '['; with the
    engine, its TOP_LEVEL_VALUES in array_elements' SQL)."""
    return _bracket_walk(text, "closed", lambda closed, at: closed + F.when(at == 0, 1)
                         .otherwise(0))


def _depth(text: Column, jvm: bool = False) -> Column:
    """The deepest nesting of objects and arrays, outside strings."""
    if jvm:
        return jvm_functions.bracket_depth(text)
    return _bracket_walk(text, "deepest", F.greatest)


def _bracket_walk(text: Column, field: str, update) -> Column:
    """A walk over the brackets outside strings: the depth after each one (`at`), and `field`
    (from 0) updated from its value before and that depth."""
    brackets = F.regexp_replace(F.regexp_replace(text, _STRING, ""), r"[^\[\]{}]", "")

    def step(acc: Column, bracket: Column) -> Column:
        at = acc["at"] + F.when(bracket.isin("{", "["), 1).otherwise(-1)
        return F.struct(at.alias("at"), update(acc[field], at).alias(field))

    return F.aggregate(F.split(brackets, ""),
                       F.struct(F.lit(0).alias("at"), F.lit(0).alias(field)), step)[field]
