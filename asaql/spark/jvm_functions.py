"""The JVM engine inside a SparkSession: the settings that load its jar into a session asaql
builds, whether a session has its functions, and the columns that call them (by name, with
`call_function`, or as SQL text where the caller writes its projection so: the same plan for a
classic session and a Spark Connect one). The jar itself and the entry points' names:
asaql/jvm/engine.py."""

from __future__ import annotations

import json

from pyspark.sql import Column, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.jvm.engine import (ARRIVAL_BREAK, ARRIVAL_TEXT, DATETIME_TEXT,
                              ENGINE_VERSION, EXACT_SUM, EXACT_SUM_VALUE, EXTENSIONS, FUNCTIONS,
                              GROUPED, INFER_SAMPLE, ISO_TIMESTAMP, JSON_LINE, JSON_RECORD,
                              LEAST_BY, ORDERED_LINE, ORDERED_LINES, PARTITION_DIGITS, PRIOR_MAX,
                              ROW_CACHE, EngineJar, engine_jar)
from asaql.spark.session.jvm_view import static_class
from asaql.spark.text_select import literal

DEFAULT_ENGINE = "jvm"


def session_settings(jar: EngineJar) -> dict[str, str]:
    """What a new session needs to load the engine: its jar (driver and executors: Spark ships
    `spark.jars` to a cluster's executors) and the extension that registers its functions."""
    if jar.path is None:  # why, for the run's one line (engine_problem)
        return {PROBLEM_CONF: jar.problem or "no jar"}
    return {"spark.jars": str(jar.path), "spark.sql.extensions": EXTENSIONS,
            "spark.sql.cache.serializer": ROW_CACHE}


PROBLEM_CONF = "spark.asaql.engineProblem"  # why a session asaql built has no engine


def engine_problem(spark: SparkSession) -> str | None:
    """None when the session can call the engine's functions; else why not, in one line. A
    classic session started without the extension but with the jar on its classpath (a
    spark-submit with --jars) gets them registered now."""
    if _has_functions(spark):
        return None
    jvm = getattr(spark, "_jvm", None)
    if jvm is not None:
        try:
            functions = static_class(spark, FUNCTIONS)
            if functions is not None and functions.version() == ENGINE_VERSION:
                functions.register(spark._jsparkSession)
                if _has_functions(spark):
                    return None
        except Exception:  # the class is not on this JVM's classpath
            pass
    if jvm is None:
        return "the Spark Connect server was started without its jar and extension"
    problem = _conf(spark, PROBLEM_CONF) or engine_jar(build=False).problem
    return "the session was started without its jar" + (f": {problem}" if problem else "")


def _conf(spark: SparkSession, key: str) -> str | None:
    try:
        return spark.conf.get(key, None)
    except Exception:
        return None


def _has_functions(spark: SparkSession) -> bool:
    try:
        return bool(spark.catalog.functionExists(JSON_RECORD))
    except Exception:
        return False


def json_record(text: str, schema: T.StructType, options: dict, max_depth: int,
                sample: str | None = None) -> str:
    """`struct<record, clean>`: the record as `from_json(text, schema, options)` gives it, and
    whether the record checks can find nothing wrong with it (JsonRecord.scala); with `sample`
    (the record type a sample of the input gave, jvm_inference.py) a third field, `fits`:
    whether the record adds nothing to it. SQL text over `text` (SQL text too), as the record
    checks are (record_checks.py)."""
    settings = [literal(schema.json()), literal(json.dumps(options)), str(max_depth),
                *([literal(sample)] if sample else [])]
    return f"{JSON_RECORD}({text}, {', '.join(settings)})"


def exact_sum(values: Column) -> Column:
    """Aggregate: the exact sum of doubles, or of sums it gave before (merged), serialized: the
    same bits whatever order Spark adds and merges in (ExactSum.scala)."""
    return F.call_function(EXACT_SUM, values)


def exact_sum_value(total: Column) -> Column:
    """The double of an `exact_sum` (rounded once, as Python's math.fsum; NULL over no value)."""
    return F.call_function(EXACT_SUM_VALUE, total)


def arrival_break(file: Column, key: Column, arrival: Column, position: Column) -> Column:
    """True for a row read before its segment's (file, key) previous row in arrival or
    position, and for a row without them (ArrivalScan.scala)."""
    return F.call_function(ARRIVAL_BREAK, file, key, arrival, position)


def prior_max(file: Column, key: Column, position: Column, value: Column, seeds: dict,
              carry: bool = False) -> Column:
    """The largest `value` of the segment's (file, key) rows read before this one, and of its
    seed (`seeds`: file → key → the largest before the segment); NULL when none. `carry`: a
    segment's seed is at least the largest of the key's segment the task read before it (a
    task reading a key's files in arrival order: OrderedFiles.scala). ArrivalScan.scala."""
    return F.call_function(PRIOR_MAX, file, key, position, value, F.lit(json.dumps(seeds)),
                           F.lit(carry))


def grouped(ops: tuple, groups: list[Column], values: list[Column]) -> Column:
    """An aggregate: per distinct `groups` (as text), each of `values` merged as `ops` says
    ((name, 'x' max | 'n' min | 's' sum) per value) → a JSON array of [group..., value...]."""
    return F.call_function(GROUPED, F.lit("".join(how for _, how in ops)), F.lit(len(groups)),
                           *groups, *[value.cast("long") for value in values])


def least_by(value: Column, keys: list[Column]) -> Column:
    """An aggregate: `value` (text) of the row whose `keys` (longs, texts; in order) are least
    among the rows whose first key is not NULL; NULL when none (LeastBy.scala: min_by over a
    struct, without its copy of the least row at every row)."""
    return F.call_function(LEAST_BY, value, *keys)


def partition_digits(text: Column) -> Column:
    """The digits of the first `"PartitionId": N` in a record's text, as io.py's pattern finds
    them; NULL for none (RecordText.scala)."""
    return F.call_function(PARTITION_DIGITS, text)


def arrival_text(text: Column) -> Column:
    """The first `"EventEnqueuedUtcTime": "…"` value's text, as io.py's pattern finds it; NULL
    for none (RecordText.scala)."""
    return F.call_function(ARRIVAL_TEXT, text)


def iso_timestamp(text: Column, jvm: bool = True) -> Column:
    """`try_to_timestamp(text)`: with the engine (`jvm`), the ISO form events carry read in
    generated code, anything else by Spark's own cast (IsoTimestamp.scala)."""
    return F.call_function(ISO_TIMESTAMP, text) if jvm else F.try_to_timestamp(text)


def datetime_text(value: Column) -> Column:
    """A timestamp as ASA writes it (datetime_functions.format_asa_datetime's text), written
    in generated code (DatetimeText.scala)."""
    return F.call_function(DATETIME_TEXT, value)


def json_line(record: Column) -> Column:
    """A struct as its JSON line, NULLs kept: `to_json`'s text, written by the engine for a
    row of text, numbers and booleans (JsonLine.scala)."""
    return F.call_function(JSON_LINE, record)


def ordered_line(values: list[Column], line: Column) -> Column:
    """`line` as a task stages it for the driver's merge (OrderedLines.scala): `values`, the
    order, as a prefix whose bytes compare as they do, then the line."""
    return F.call_function(ORDERED_LINE, *values, line)


def merges_in_driver(spark: SparkSession) -> bool:
    """Whether the driver's JVM can merge staged lines (merge_ordered_lines): a classic
    session (the driver here, through py4j) with the engine."""
    return getattr(spark, "_jvm", None) is not None and engine_problem(spark) is None


def merge_ordered_lines(spark: SparkSession, parts: list[str], kinds: str, target: str) -> int:
    """Appends to `target` the lines of `parts` (files of ordered_line's lines, each in
    order), all in order, without their prefixes; → how many. `kinds`: the order values',
    'n' (a number or timestamp) or 's' (a text) each."""
    return static_class(spark, ORDERED_LINES).merge(parts, kinds, target)


def inferred_in_driver(spark: SparkSession, files: list[str], bytes_per_file: int,
                       max_depth: int) -> str:
    """The merged type of a sample of `files`' lines (their first and last `bytes_per_file`),
    as JSON, inferred in the driver's JVM without a job (InferJson.sample)."""
    return static_class(spark, INFER_SAMPLE).sample(files, bytes_per_file, max_depth)
