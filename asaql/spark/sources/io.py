"""JSON-lines inputs as a stream of events with arrival time, partition, file and line.

Files are read whole (`wholetext`) and split into lines natively, so every event keeps its exact
line number: the tiebreak of arrival order, and the address of a malformed record.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
import tempfile
from collections.abc import Callable
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.errors import ConfigurationError
from asaql.inputs.files import input_files
from asaql.inputs.position import ELEMENT_BITS
from asaql.inputs.formats import InputFormat, resolve_format, sample_records
from asaql.inputs.records import MAX_DEPTH, json_file_records
from asaql.runtime import columns as C
from asaql.spark.sources.control import CONTROL_FIELD, CONTROL_FOLDER, CONTROL_PREFIX
from asaql.spark.sources.read_limits import MAX_BYTES_PER_TRIGGER, trigger_limit
from asaql.spark.sources.format_inputs import PROBLEM, infer_format_schema, stream_lines
from asaql.spark.sources.kafka_input import (HEADERS_COLUMN, KAFKA_METADATA, KEY_COLUMN,
                                     PROCESSED_FIELD, KafkaRead, kafka_lines, with_metadata)
from asaql.spark.sources.kafka_input import sample_records as topic_sample
from asaql.spark.sources.declared_schema import conform, declared_struct
from asaql.spark.sources.json_inference import inferred_in_driver
from asaql.spark.sources.jvm_inference import inferred_from_sample, inferred_in_one_pass
from asaql.spark.jvm_functions import json_record
from asaql.spark.sources.blob_paths import BLOB_NAME, input_place, with_folder_times
from asaql.spark.sources.partition_scan import found_on_pass, found_partition, scan_matters
from asaql.spark.sources.present_keys import present_keys
from asaql.spark.sources.sampled_schema import SAMPLE_MISSED
from asaql.spark.sources.mixed_fields import mixed_in_records, with_mixed_as_variants, with_mixed_where
from asaql.spark.sources.record_checks import (DEFERRED, arrival_time, filled_fields,
                                                from_json, parse_problem, parse_refused,
                                                partition_id, shape_problem)
from asaql.spark.sources.records import ARRAY_PROBLEM, array_elements, clean_lines, split_lines
from asaql.spark.text_select import literal, quoted, select_text

_CORRUPT = "_asaql_corrupt"
_FOUND = "_asaql_found_partition"
_SAMPLE_LINES = 1000
# An input this small has its schema (json_inference.py) and its mixed fields (mixed_fields.py)
# found by reading its records in the driver rather than by Spark jobs: ~2 s of a small run's
# start
SMALL_INPUT_BYTES = 1 << 20


@dataclass(frozen=True)
class InputSurvey:
    """What a run learns of an input before it starts: its payload schema and, when the
    schema's job found them on the same pass, its partitions (else None: input_partitions.py
    finds them when a statement needs them)."""
    schema: T.StructType
    partitions: tuple[tuple[str, int | None], ...] | None = None
    # the record type of the sample the schema came from (jvm_inference.inferred_from_sample),
    # for the pass to check every event against; None: the schema is every event's
    sample: str | None = None


def infer_payload_schema(spark: SparkSession, path: str,
                         fmt: InputFormat | None = None) -> T.StructType:
    """The input's payload schema (survey_input)."""
    return survey_input(spark, path, fmt).schema


def survey_input(spark: SparkSession, path: str, fmt: InputFormat | None = None,
                 partitions: bool = False, sample: bool = False) -> InputSurvey:
    """Spark's JSON inference over the files present, fields in order of first appearance. When
    it saw a record the stream sets aside, it runs again over the lines that can be one record
    (asaql/spark/sources/records.py): a malformed line never breaks the schema of the rest. A topic:
    the same over a sample of its records, then its metadata (kafka_input.py). `fmt`: the
    format the run declares for the input (--input-format), else its files' extension.
    `partitions`: a statement waits for the input's partitions (the schema's job then finds
    them, when it is one job over the lines). `sample`: the run's one micro-batch checks every
    event against a sample's schema (execute.py), so a large JSON-lines input that fits in
    one micro-batch takes the schema of its files' first and last lines, without a job (and
    without its partitions: that micro-batch's pass finds them, relations.py)."""
    if isinstance(path, KafkaRead):
        return InputSurvey(with_metadata(_infer_from_texts(spark, topic_sample(path), str(path))))
    files = input_files(path)
    if not files:
        pattern = getattr(path, "pattern", None)
        where = f" in the folders of its path pattern {pattern.text!r}" if pattern else ""
        raise ConfigurationError(f"input folder {path} has no input files to read{where} "
                                 "(.jsonl, .json, .csv, .parquet, .avro)")
    fmt = resolve_format(files, path, fmt)
    size = sum(f.stat().st_size for f in files)
    small = size <= SMALL_INPUT_BYTES
    mixed_at = firsts = None  # known when the one-pass inference ran (jvm_inference.py)
    sampled = inferred_from_sample(spark, files) if sample and fmt.name == "json" \
        and not small and size <= MAX_BYTES_PER_TRIGGER else None
    if sampled is not None:
        fields = _in_order(sampled[0], _first_appearance_order(files, fmt), ())
        return InputSurvey(fields, sample=sampled[1])
    if fmt.name != "json":  # CSV, Parquet, Avro (asaql/spark/sources/format_inputs.py)
        inferred = infer_format_schema(spark, files, fmt)
    else:
        inferred, mixed_at, firsts = _infer_json(spark, files, small, partitions)
    fields = [f for f in _one_field_per_name(inferred).fields if f.name != "_corrupt_record"]
    orders = _first_appearance_order(files, fmt)
    schema = _in_order(T.StructType(fields), orders, ())
    if fmt.name != "json":  # CSV's values are all text; Parquet and Avro declare one type
        return InputSurvey(schema)
    if small:  # no Spark job: its records
        return InputSurvey(mixed_in_records(schema, (
            record for f in files for record in json_file_records(f, sys.maxsize))))
    if mixed_at is not None:
        return InputSurvey(with_mixed_where(schema, mixed_at), firsts)
    return InputSurvey(with_mixed_as_variants(schema, lambda probe: spark.read.schema(
        probe).option("mode", "PERMISSIVE").json([str(f) for f in files])), firsts)


def _in_order(kind: T.DataType, orders: dict, path: tuple) -> T.DataType:
    """`kind` with the fields of each record, nested ones too, in order of first appearance
    (Spark's inference sorts them by name; ASA keeps a record's own order: GetRecordProperties
    lists, and a record is written, in that order)."""
    if isinstance(kind, T.ArrayType):
        return T.ArrayType(_in_order(kind.elementType, orders, path + ("[]",)),
                           kind.containsNull)
    if not isinstance(kind, T.StructType):
        return kind
    order = orders.get(path, {})
    fields = [T.StructField(f.name, _in_order(f.dataType, orders, path + (f.name,)),
                            f.nullable, f.metadata) for f in kind.fields]
    fields.sort(key=lambda f: order.get(f.name, len(order)))
    return T.StructType(fields)


def _note_order(value, orders: dict, path: tuple) -> None:
    """Each record's keys in `value`, in order, under the path of the record (`[]`: the
    elements of an array)."""
    if isinstance(value, dict):
        order = orders.setdefault(path, {})
        for key, item in value.items():
            order.setdefault(key, len(order))
            _note_order(item, orders, path + (key,))
    elif isinstance(value, list):
        for item in value:
            _note_order(item, orders, path + ("[]",))


def _infer_json(spark: SparkSession, files: list[Path], small: bool, partitions: bool
                ) -> tuple[T.StructType, Callable | None, tuple | None]:
    """The inferred schema, which fields are mixed and the partitions when those came with
    it. The plain case in one pass: a small input's in the driver (json_inference.py), a large
    one's with the mixed fields and the partitions in one job (jvm_inference.py); else Spark's
    inference (its careful path for lines the stream sets aside)."""
    one_pass = None if small else inferred_in_one_pass(spark, files, partitions)
    firsts = one_pass[2] if one_pass else None  # the lines' own: good either way below
    found = (inferred_in_driver(files), None) if small else one_pass
    if found is not None and found[0] is not None and not _needs_clean_lines(found[0]):
        return found[0], found[1], firsts
    try:
        inferred = spark.read.option("mode", "PERMISSIVE").json([str(f) for f in files]).schema
    except Exception:  # e.g. a schema too deep to bring over from the JVM: the careful way
        inferred = None
    if inferred is None or _needs_clean_lines(inferred):  # 2.5× slower (benchmarks/record_checks.py): when needed
        whole = spark.read.text([str(f) for f in files], wholetext=True) \
            .select("value", "_metadata")
        inferred = spark.read.option("mode", "PERMISSIVE").json(clean_lines(whole)).schema
    return inferred, None, firsts


def _infer_from_texts(spark: SparkSession, texts: list[str], name: str) -> T.StructType:
    if not texts:
        raise ConfigurationError(f"{name} has no records to learn the input's fields from")
    with tempfile.TemporaryDirectory(prefix="asaql-sample-") as folder:
        sample = Path(folder) / "sample.jsonl"
        sample.write_text("".join(t.replace("\n", " ") + "\n" for t in texts), encoding="utf-8")
        return infer_payload_schema(spark, str(sample))


def _needs_clean_lines(schema: T.StructType) -> bool:
    """Whether Spark's own inference saw a record the stream sets aside: one it could not parse
    (a BOM, bad JSON), a duplicate key, deep nesting, or a PartitionId that widened the type."""
    partition = next((f for f in schema.fields if f.name == C.PARTITION_FIELD), None)
    return "_corrupt_record" in schema.fieldNames() or _depth_or_duplicates(schema) \
        or (partition is not None
            and not isinstance(partition.dataType, (T.LongType, T.IntegerType)))


def _depth_or_duplicates(data_type: T.DataType, depth: int = 1) -> bool:
    if depth > MAX_DEPTH:
        return True
    if isinstance(data_type, T.StructType):
        names = [f.name.lower() for f in data_type.fields]
        return len(set(names)) != len(names) or any(
            _depth_or_duplicates(f.dataType, depth + 1) for f in data_type.fields)
    if isinstance(data_type, T.ArrayType):
        return _depth_or_duplicates(data_type.elementType, depth + 1)
    if isinstance(data_type, T.MapType):
        return _depth_or_duplicates(data_type.valueType, depth + 1)
    return False


def _one_field_per_name(data_type: T.DataType) -> T.DataType:
    """Inference gives a nested record with a duplicate key the field twice, which Spark then
    refuses (DUPLICATED_FIELD_NAME_IN_ARROW_STRUCT, COLUMN_ALREADY_EXISTS): one field per name
    (case-insensitive, the first kept); the parser gives such a key its last value, as Json.NET
    does. A duplicate key at the top level is a malformed record (records.py)."""
    if isinstance(data_type, T.StructType):
        seen, fields = set(), []
        for f in data_type.fields:
            if f.name.lower() not in seen:
                seen.add(f.name.lower())
                fields.append(T.StructField(f.name, _one_field_per_name(f.dataType), f.nullable,
                                            f.metadata))
        return T.StructType(fields)
    if isinstance(data_type, T.ArrayType):
        return T.ArrayType(_one_field_per_name(data_type.elementType), data_type.containsNull)
    if isinstance(data_type, T.MapType):
        return T.MapType(data_type.keyType, _one_field_per_name(data_type.valueType),
                         data_type.valueContainsNull)
    return data_type


def _first_appearance_order(files: list[Path], fmt: InputFormat) -> dict[tuple, dict[str, int]]:
    """Path of a record (() the event) → its keys' order of first appearance in the sample."""
    orders: dict[tuple, dict[str, int]] = {}
    seen = 0
    if fmt.name != "json":
        for file in files:
            for record in sample_records(file, fmt.name, _SAMPLE_LINES - seen, fmt.delimiter):
                seen += 1
                _note_order(record, orders, ())
        return orders
    for file in files:
        for record in json_file_records(file, _SAMPLE_LINES - seen):
            seen += 1
            _note_order(record, orders, ())
        if seen >= _SAMPLE_LINES:
            return orders
    return orders


def read_events(
    spark: SparkSession, path, schema: T.StructType, control: str,
    max_files_per_trigger: int | None = None, json_options: dict | None = None,
    batch: bool = False, declared: tuple[tuple[str, str], ...] = (),
    fmt: InputFormat | None = None, jvm: bool = False, listed: tuple = (),
    files: DataFrame | None = None, sample: str | None = None, found: bool = False,
    rejected_later: bool = False,
) -> DataFrame:
    """A streaming DataFrame: payload fields, then FILE, LINE, ARRIVAL, PARTITION, ERROR, RAW,
    CONTROL.

    `control` is asaql's control folder (control.py): it is read by the same file source as the
    input, so its records (the end of the input, clock ticks) come after the data files that
    were there before them: the file source admits files in modification-time order. A Kafka
    topic (`path` a KafkaRead) is read by asaql's Kafka source, its control records included.
    `batch`: the JSON-lines files there now, as a batch DataFrame (a stage of the embedding API
    over batch inputs). `declared`: the input's CREATE TABLE columns (declared_schema.py).
    `fmt`: the input's declared format (--input-format), else its files' extension. `jvm`:
    records parsed and checked by the JVM engine (_parse_records). `listed`: the record fields
    whose keys each event carries (present_keys). `files`: JSON-lines files as the text source
    gives them whole (`value`, `_metadata`) to read instead (ordered_files.py), as a batch.
    `sample`: the record type the schema's sample gave (sampled_schema.py), each event checked
    against it. `found`: with what the partitions' scan would find (partition_scan.found_on_pass);
    `rejected_later`: a record the read accepts may still be rejected (TIMESTAMP BY).
    """
    if isinstance(path, KafkaRead):
        return _parse_records(kafka_lines(spark, path, control), schema, json_options or {},
                              metadata=True, carried=path.carried, declared=declared, jvm=jvm,
                              listed=listed)
    fmt = input_format(path, fmt)
    if fmt.name != "json":  # CSV, Parquet, Avro: their records as lines (format_inputs.py)
        lines = with_folder_times(stream_lines(spark, path, control, fmt,
                                               max_files_per_trigger, _glob_escape), path)
        return _parse_records(lines, schema, json_options or {}, declared=declared, jvm=jvm,
                              listed=listed)
    if files is None:
        files = whole_files(spark, path, control, max_files_per_trigger, batch)
    lines = with_folder_times(split_lines(files.select("value", "_metadata"), jvm), path)
    return _parse_records(lines, schema, json_options or {}, declared=declared, jvm=jvm,
                          listed=listed, sample=sample if jvm else None, found=found,
                          rejected_later=rejected_later)


def whole_files(spark: SparkSession, path, control: str,
                max_files_per_trigger: int | None = None, batch: bool = False) -> DataFrame:
    """The JSON-lines files of the input and of its control folder, each whole (`value`,
    `_metadata`), as a stream (`batch`: those there now)."""
    reader = (spark.read if batch else spark.readStream).format("text").option("wholetext", "true")
    if not batch:
        reader = reader.options(**trigger_limit(max_files_per_trigger))
    p = Path(path).resolve()
    names = f"{{{_glob_escape(p.name)},*.jsonl}}" if p.is_file() else "*.{jsonl,json}"
    # One glob for both places, "/{input,control}": Hadoop expands braces across '/'.
    places = [input_place(p, path, _glob_escape),
              _glob_escape(str(Path(control).resolve())[1:])]
    return reader.option("pathGlobFilter", names).load("/{" + ",".join(places) + "}")


def input_format(path: str, declared: InputFormat | None) -> InputFormat:
    """The input's format; a path that is not there yet (a stage's folder) is JSON lines."""
    if not Path(path).exists():
        return InputFormat("json")
    return resolve_format(input_files(path), path, declared)


def _glob_escape(name: str) -> str:
    return "".join(f"\\{c}" if c in "*?[]{}\\," else c for c in name)


def _parse_records(lines: DataFrame, schema: T.StructType, json_options: dict,
                   metadata: bool = False, carried: tuple[str, ...] = (),
                   declared: tuple[tuple[str, str], ...] = (), jvm: bool = False,
                   listed: tuple = (), sample: str | None = None,
                   found: bool = False, rejected_later: bool = False) -> DataFrame:
    """`metadata`: the lines are a topic's records, whose arrival time and partition are the
    record's own (KAFKA_METADATA), never the payload's fields of the same name; `carried`:
    the record's key and headers the query asks for, as KEY_COLUMN and HEADERS_COLUMN.
    `jvm`: the JVM engine parses each record and runs the record checks on the same pass
    (jvm_functions.json_record): a record it vouches for ("clean") skips the checks below,
    the others take them as before, so the reasons and rows are the same either way."""
    lines = array_elements(lines, jvm)
    parsed_fields = [f for f in schema.fields if not (metadata and f.name in KAFKA_METADATA)]
    with_corrupt = T.StructType(parsed_fields + [T.StructField(_CORRUPT, T.StringType())])
    options = {**json_options, "mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT}
    # an event the schema's sample does not cover, or an array's (sampled_schema.py)
    beyond_sql = "_asaql_beyond" if jvm else "false"
    if jvm:
        fits = "coalesce(_asaql_checked.fits, false) AND " \
            f"pmod({quoted(C.LINE)}, {1 << ELEMENT_BITS}) = 0" if sample else "true"
        parsed = select_text(select_text(lines, [
            "*", json_record("_asaql_text", with_corrupt, options, MAX_DEPTH, sample)
            + " AS _asaql_checked"]), [
            "*", "_asaql_checked.record AS _asaql_rec",
            "coalesce(_asaql_checked.clean, false) AS _asaql_clean",
            f"NOT ({fits}) AS _asaql_beyond"])
    else:
        parsed = select_text(lines, [
            "*", f"{from_json('_asaql_text', with_corrupt, options)} AS _asaql_rec",
            "false AS _asaql_clean"])
    text = F.col("_asaql_text")
    # the record checks as SQL text: one round trip each (record_checks.py)
    corrupt = parse_refused("_asaql_rec", _CORRUPT)
    names = {f.name for f in parsed_fields}
    arrival, arrival_error = arrival_time(names, jvm)
    partition, partition_error = partition_id(names, schema)
    # each value the checks read is computed once, in a projection before them (compiled
    # whole-stage: no lambda there); the line's keys only for a record the parser accepted
    filled = filled_fields("_asaql_rec", T.StructType(parsed_fields))
    prepared = parsed.select(
        "*",
        F.expr(f"contains({quoted(C.FILE)}, {literal(f'/{CONTROL_FOLDER}/')}) "
               f"AND contains({quoted(C.FILE)}, {literal(f'/{CONTROL_PREFIX}')})")
        .alias("_asaql_is_control"),
        F.expr(f"CASE WHEN NOT _asaql_clean AND NOT {corrupt} "
               "THEN json_object_keys(_asaql_text) END").alias("_asaql_keys"),
        F.expr("CAST(NULL AS int)" if filled is None else
               f"CASE WHEN NOT _asaql_clean THEN {filled} END").alias("_asaql_filled"),
        F.expr(arrival).alias("_asaql_arrival"), F.expr(partition).alias("_asaql_partition_id"))
    arrival_error = arrival_error("_asaql_arrival")
    partition_error = partition_error("_asaql_partition_id")
    arrival, partition = F.col("_asaql_arrival"), F.col("_asaql_partition_id")
    is_control = F.col("_asaql_is_control")
    known = {}
    if metadata:
        no_error = "CAST(NULL AS string)"
        arrival, arrival_error = F.col("_asaql_mtime"), no_error
        partition, partition_error = F.col("_asaql_partition"), no_error
        # EventProcessedUtcTime: the micro-batch's time, kept in Spark's offset log (a replay
        # gives the same)
        known = {C.ARRIVAL_FIELD: arrival, C.PARTITION_FIELD: partition,
                 PROCESSED_FIELD: F.current_timestamp()}
    # coalesce stops at the first reason: the costlier checks run only when the cheaper pass;
    # a CSV, Parquet or Avro record comes with the reason its decoder found, if any
    problem = [quoted(PROBLEM)] if PROBLEM in lines.columns else []

    read = {f.name.lower(): (known.get(f.name, F.col(f"_asaql_rec.`{f.name}`")), f.dataType)
            for f in schema.fields}
    conformed, misfit = conform(read, declared)

    def reason(deferred: str | None = None) -> Column:
        checks = [
            f"CASE WHEN {beyond_sql} THEN {literal(SAMPLE_MISSED)} END", *problem, ARRAY_PROBLEM,
            f"CASE WHEN NOT _asaql_clean THEN {shape_problem('_asaql_text', deferred, jvm)} END",
            "CASE WHEN NOT _asaql_clean THEN " + parse_problem(
                "_asaql_text", corrupt, T.StructType(parsed_fields), "_asaql_keys",
                None if filled is None else "_asaql_filled", deferred, jvm) + " END",
            arrival_error, partition_error]
        return F.when(~is_control, F.coalesce(F.expr(f"coalesce({', '.join(checks)})"), misfit))
    payload = [(conformed[f.name.lower()] if f.name.lower() in conformed
                else read[f.name.lower()][0]).alias(f.name)
               for f in declared_struct(schema, declared).fields
               if not f.name.lower().startswith("asaql__")]
    # the checks in a projection of their own, compiled with the ones before (record_checks.DEFERRED:
    # the rare lambdas and per-field parses left out), read twice below: Spark does not
    # collapse a costly expression into a projection that uses it twice (inlined, RAW's
    # condition evaluated every check a second time); then only a DEFERRED record's reason is
    # computed with them
    checked = prepared.select("*", reason(literal(DEFERRED)).alias("_asaql_first_error"),
                              *([found_partition(text, jvm).alias(_FOUND)] if found else []))
    first = F.col("_asaql_first_error")
    error = F.when(first == DEFERRED, reason()).otherwise(first)
    partition_or_none = F.coalesce(partition, F.lit(0).cast("bigint"))
    return checked.select(
        *payload,
        C.FILE, C.LINE,
        F.coalesce(arrival, F.col("_asaql_mtime")).alias(C.ARRIVAL),
        partition_or_none.alias(C.PARTITION),
        error.alias(C.ERROR),
        F.when(error.isNotNull(), F.col("_asaql_text")).alias(C.RAW),
        F.when(is_control, F.get_json_object("_asaql_text", f"$.{CONTROL_FIELD}")).alias(C.CONTROL),
        *present_keys(F.col("_asaql_text"), schema, listed),
        *([F.col(BLOB_NAME)] if BLOB_NAME in lines.columns else []),
        *([F.col("_asaql_message_key").alias(KEY_COLUMN)] if "key" in carried else []),
        *([F.col("_asaql_headers").alias(HEADERS_COLUMN)] if "headers" in carried else []),
        *(found_on_pass(F.col(_FOUND), text, is_control, jvm, F.lit(True) if rejected_later
                        else scan_matters(error, F.col(_FOUND), partition_or_none))
          if found else []),
    )
