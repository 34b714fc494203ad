"""What makes a JSON-lines record malformed, as SQL text over its text.

Spark's JSON parser accepts things ASA's does not (text after the object, invalid UTF-8 after
it, duplicate keys: the last one wins) and its schema inference dies on others (a duplicate key
is COLUMN_ALREADY_EXISTS, a 200-deep object an unpicklable schema). So every line is checked
here: the stream marks the line malformed with the reason, and schema inference, when Spark's
own saw such a line, reads only lines that pass. The checks cost little on a good line: the
expensive ones (a regular expression, a bracket walk) run only on the rare line a cheap test
singles out (about 1.3× the parse alone: benchmarks/record_checks.py).

Each check is SQL text over SQL texts (a column's name, or an expression), so that a read's
whole reason is one expression the JVM parses in one round trip: built as PySpark Columns it
was about 400 round trips a run, paid by every run however few its events (text_select.py).
"""

from __future__ import annotations

from pyspark.sql import types as T

from asaql.inputs.records import MAX_DEPTH
from asaql.jvm.engine import BRACKET_DEPTH, ISO_TIMESTAMP, REPEATED_KEY
from asaql.runtime import columns as C
from asaql.spark.jvm_functions import json_record
from asaql.spark.text_select import literal, quoted

REPLACEMENT = "\ufffd"  # what the text reader makes of bytes that are not UTF-8
# A JSON string literal; possessive quantifiers, so Java's regex engine does not recurse per
# character (a long string would overflow its stack).
_STRING = r'"[^"\\]*+(?:\\.[^"\\]*+)*+"'
NOT_PARTITION = "is not a partition number (a whole number, 0 or more)"
# regular expressions, as Java reads them
_CONTROL_CHARACTER = r"[\x00-\x08\x0a-\x1f]"
_CLOSED_AT_END = r"\}\s*$"
_NOT_BRACKET = r"[^\[\]{}]"
_OPENING = (r"\{", r"\[")
_QUOTE = "'"
_EMPTY_JSON_STRING = '""'

DEFERRED = "\u0000deferred"
"""A reason not computed yet: the checks run first without the rare expressions Spark cannot
compile (higher-order functions with lambdas, a parse per field), which keep a whole projection
out of whole-stage code generation; a record given DEFERRED has its reason computed again with
them (asaql/spark/sources/io.py). An exact detour: the rare expression is replaced where it would
have been evaluated, so a record that never reaches one gets the same reason either way."""


def shape_problem(text: str, deferred: str | None = None, jvm: bool = False) -> str:
    """The reason a line is not one JSON object as ASA reads it, found from its text alone;
    NULL for a line that may be one (the JSON parser then has its say). `deferred`: what to give
    instead of a reason found by a walk over the brackets (see DEFERRED)."""
    # each test is guarded by one a good line fails at once: a '{' first (no copy without the
    # leading spaces), no bracket after the first character (no count of them)
    depth = f"CASE WHEN {_depth(text, jvm)} > {MAX_DEPTH} " \
            f"THEN {literal(f'nested deeper than {MAX_DEPTH} levels')} END"
    return (
        f"CASE WHEN contains({text}, {literal(REPLACEMENT)}) AND contains(regexp_replace("
        f"{text}, {literal(_STRING)}, {literal(_EMPTY_JSON_STRING)}), {literal(REPLACEMENT)}) "
        f"THEN {literal('invalid UTF-8 outside a string')} "
        f"WHEN NOT startswith({text}, '{{') AND NOT startswith(ltrim({text}), '{{') THEN "
        f"{literal('not a JSON object (an array, a number, a string, true, false or null)')} "
        f"WHEN {_many_brackets(text)} AND {_bracket_count(text)} > {MAX_DEPTH} "
        f"THEN {depth if deferred is None else deferred} END")


def _many_brackets(text: str) -> str:
    """Whether the line may hold more than MAX_DEPTH opening brackets: then it has a bracket
    after its first character (a scan: a flat record has none) and more than half as many '{'
    or '['. Counted by Java's split of one character, with a limit (`_bracket_count` copies the
    line twice; `substring_index` compares bytes one call per position: each cost 3× more)."""
    half = MAX_DEPTH // 2 + 1
    return (f"((contains({text}, '[') OR contains(substring({text}, 2, {2**31 - 1}), '{{')) "
            f"AND (size(split({text}, {literal(_OPENING[0])}, {half + 1})) > {half} "
            f"OR size(split({text}, {literal(_OPENING[1])}, {half + 1})) > {half}))")


def _bracket_count(text: str) -> str:
    """Opening brackets anywhere (strings included): a bound on the depth, cheap to count in
    bytes (`translate` made the whole read 8× slower)."""
    return f"(octet_length({text}) * 2 - octet_length(replace({text}, '{{', '')) " \
           f"- octet_length(replace({text}, '[', '')))"


def parse_problem(text: str, corrupt: str, schema: T.StructType, keys: str,
                  filled: str | None = None, deferred: str | None = None,
                  jvm: bool = False) -> str:
    """The reason for a line the JSON parser refused (`corrupt`, with `schema`) or accepted too
    kindly. `keys`: a column of the line's `object_keys`, computed once before (each use of
    the expression here would parse the line again). `filled`: how many fields of `schema` the
    parser filled (non-NULL), when the schema has one field per name ignoring case (see
    `filled_fields`): each was filled by a key of its own name, so a line with no more keys
    than that has none twice, and its keys are not compared (the common line: every key known,
    no NULL). `deferred`: as for shape_problem, instead of naming a misfit field or the
    repeated key."""
    lowered = lower_all(keys)
    first_repeated = f"{REPEATED_KEY}({keys}, {lowered})" if jvm else \
        f"filter({keys}, _asaql_k -> size(filter({lowered}, _asaql_x -> _asaql_x = " \
        "lower(_asaql_k))) > 1)[0]"
    repeated = f"concat({literal('duplicate key ' + _QUOTE)}, {first_repeated}, " \
               f"{literal(_QUOTE)})"
    unexplained = f"size({keys}) > 1" if filled is None else \
        f"(size({keys}) > 1 AND size({keys}) > {filled})"
    control = literal("malformed JSON: a control character (U+0000 to U+001F) "
                      "that is not escaped")
    return (
        f"CASE WHEN {corrupt} AND rlike({text}, {literal(_CONTROL_CHARACTER)}) "
        f"THEN {control} "
        f"WHEN {corrupt} AND get_json_object({text}, '$') IS NULL THEN 'malformed JSON' "
        f"WHEN {corrupt} THEN {_misfit(text, schema, jvm) if deferred is None else deferred} "
        f"WHEN {unexplained} AND size({keys}) != size(array_distinct({lowered})) "
        f"THEN {repeated if deferred is None else deferred} "
        f"WHEN NOT endswith({text}, '}}') AND NOT endswith(rtrim({text}), '}}') "
        f"AND NOT rlike({text}, {literal(_CLOSED_AT_END)}) "
        f"THEN 'text after the JSON object' END")


def arrival_time(names: set[str], jvm: bool):
    """EventEnqueuedUtcTime when the record has it, else the file's modification time: the
    value, and a function of the value's column (computed once) giving the reason it is bad;
    each SQL text. With the engine (`jvm`), the ISO form events carry is read in generated
    code (IsoTimestamp.scala), anything else by Spark's own cast."""
    if C.ARRIVAL_FIELD not in names:
        return "CAST(NULL AS timestamp)", lambda value: "CAST(NULL AS string)"
    raw = f"_asaql_rec.{C.ARRIVAL_FIELD}"
    before, after = literal(f"{C.ARRIVAL_FIELD} '"), literal("' is not a datetime")
    value = f"{ISO_TIMESTAMP if jvm else 'try_to_timestamp'}(CAST({raw} AS string))"
    return value, lambda value: (
        f"CASE WHEN {raw} IS NOT NULL AND {value} IS NULL "
        f"THEN concat({before}, CAST({raw} AS string), {after}) END")


def partition_id(names: set[str], schema: T.StructType):
    """The record's PartitionId, and a function of its column giving the reason it is bad;
    each SQL text."""
    if C.PARTITION_FIELD not in names:
        return "CAST(NULL AS bigint)", lambda value: "CAST(NULL AS string)"
    raw = f"_asaql_rec.{C.PARTITION_FIELD}"
    kind = next(f.dataType for f in schema.fields if f.name == C.PARTITION_FIELD)
    before, after = literal(f"{C.PARTITION_FIELD} '"), literal(f"' {NOT_PARTITION}")
    if isinstance(kind, (T.StructType, T.ArrayType, T.MapType)):  # never a partition number
        return "CAST(NULL AS bigint)", lambda value: (
            f"CASE WHEN {raw} IS NOT NULL THEN concat({before}, to_json({raw}), {after}) END")

    def error(value: str) -> str:
        # 1.5 would cast to 1, and 1e30 to NULL: a partition number is a whole number, 0 or more
        exact = f"coalesce(CAST({raw} AS double) = CAST({value} AS double), false)"
        return f"CASE WHEN {raw} IS NOT NULL AND ({value} IS NULL OR NOT {exact} " \
               f"OR {value} < 0) THEN concat({before}, CAST({raw} AS string), {after}) END"
    return f"CAST({raw} AS bigint)", error


def filled_fields(record: str, schema: T.StructType) -> str | None:
    """How many top-level fields of the parsed `record` are not NULL (for `parse_problem`); None
    when the schema has a name twice ignoring case (two fields could then be one key's)."""
    lowered = [f.name.lower() for f in schema.fields]
    if len(set(lowered)) != len(lowered):
        return None
    counts = [f"CASE WHEN {record}.{quoted(f.name)} IS NOT NULL THEN 1 ELSE 0 END"
              for f in schema.fields]
    while len(counts) > 1:  # summed pairwise: a wide schema gives a shallow expression
        counts = [f"({a} + {b})" for a, b in zip(counts[::2], counts[1::2])] \
            + counts[len(counts) // 2 * 2:]
    return counts[0] if counts else "0"


def _misfit(text: str, schema: T.StructType, jvm: bool = False) -> str:
    """Which field of a well-formed record does not fit the inferred type: each field is parsed
    alone (only on such a line: it is rare)."""
    generic = literal("a field does not have the type the input's other records give it")
    if len(schema.fields) > _NAMED_FIELDS:
        return generic
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_asaql_misfit"}
    reasons = []
    for f in schema.fields:
        alone = T.StructType([f, T.StructField("_asaql_misfit", T.StringType())])
        parsed = json_record(text, alone, options, MAX_DEPTH) + ".record" if jvm else \
            from_json(text, alone, options)
        value = f"get_json_object({text}, {literal('$.' + f.name)})" if f.name.isidentifier() \
            else "'?'"
        if f.name == C.PARTITION_FIELD:
            before, after = f"{C.PARTITION_FIELD} '", f"' {NOT_PARTITION}"
        else:
            before = f"field '{f.name}' is '"
            after = f"' where the input's other records have a {f.dataType.simpleString()[:60]}"
            value = f"substring({value}, 1, 80)"
        why = f"concat({literal(before)}, {value}, {literal(after)})"
        reasons.append(f"CASE WHEN ({parsed})._asaql_misfit IS NOT NULL THEN {why} END")
    return f"coalesce({', '.join([*reasons, generic])})"


_NAMED_FIELDS = 64  # beyond, a misfit is not named (a parse per field would bloat the plan)


def from_json(text: str, schema: T.StructType, options: dict) -> str:
    """Spark's `from_json(text, schema, options)` as SQL text (the schema as its JSON)."""
    pairs = ", ".join(literal(str(part)) for pair in options.items() for part in pair)
    return f"from_json({text}, {literal(schema.json())}, map({pairs}))"


def parse_refused(record: str, corrupt: str) -> str:
    """Whether the parser refused the record: `record` NULL, or its `corrupt` field (the
    `columnNameOfCorruptRecord` of its parse) set."""
    return f"({record}.{quoted(corrupt)} IS NOT NULL OR {record} IS NULL)"


def object_keys(text: str) -> str:
    """The record's top-level keys (NULL for a line that is not an object)."""
    return f"json_object_keys({text})"


def lower_all(keys: str) -> str:
    """The keys in lower case, without a lambda (higher-order functions are not compiled: a
    `transform` per line cost more than the parse)."""
    return f"split(lower(array_join({keys}, {literal(_SEPARATOR)})), {literal(_SEPARATOR)})"


_SEPARATOR = "\u0001"  # a control character: no real key holds one


def top_level_values(text: str) -> str:
    """How many times the brackets outside strings close back to the top level: 1 for one
    array or object, more for `[…] […]` (a walk: the fallback without the engine, whose
    TOP_LEVEL_VALUES array_elements calls instead)."""
    return _bracket_walk(text, "closed", lambda closed, at: f"{closed} + CASE WHEN {at} = 0 "
                         "THEN 1 ELSE 0 END")


def _depth(text: str, jvm: bool = False) -> str:
    """The deepest nesting of objects and arrays, outside strings."""
    if jvm:
        return f"{BRACKET_DEPTH}({text})"
    return _bracket_walk(text, "deepest", lambda deepest, at: f"greatest({deepest}, {at})")


def _bracket_walk(text: str, field: str, update) -> str:
    """A walk over the brackets outside strings: the depth after each one (`at`), and `field`
    (from 0) updated from its value before and that depth."""
    brackets = f"regexp_replace(regexp_replace({text}, {literal(_STRING)}, ''), " \
               f"{literal(_NOT_BRACKET)}, '')"
    at = "(_asaql_acc.at + CASE WHEN _asaql_b IN ('{', '[') THEN 1 ELSE -1 END)"
    return (f"aggregate(split({brackets}, ''), named_struct('at', 0, '{field}', 0), "
            f"(_asaql_acc, _asaql_b) -> named_struct('at', {at}, '{field}', "
            f"{update('_asaql_acc.' + field, at)})).{field}")
