"""CSV, Parquet and Avro inputs as the lines the JSON-lines reader parses.

Each file is read whole (Spark's `binaryFile` source, the input's files and its control records
in one stream, admitted in modification-time order as the text source admits them) and decoded
in a Python worker (asaql/inputs/formats.py) into the lines shape of asaql/spark/sources/records.py:
FILE, _asaql_mtime, LINE (the record's row), _asaql_text (the record as a JSON object), plus
_asaql_problem (why a record is malformed). asaql/spark/sources/io.py then parses and checks them as it
does JSON lines: arrival time, PartitionId, malformed records, control records are the same for
every format. The cost of the detour through JSON text: benchmarks/input_formats.py.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.inputs.formats import SUFFIXES, InputFormat, json_records, records
from asaql.runtime import columns as C
from asaql.spark.sources.blob_paths import input_place
from asaql.spark.sources.control import CONTROL_FOLDER
from asaql.spark.sources.read_limits import trigger_limit

PROBLEM = "_asaql_problem"
LINES_SCHEMA = T.StructType([
    T.StructField(C.FILE, T.StringType()),
    T.StructField("_asaql_mtime", T.TimestampType()),
    T.StructField(C.LINE, T.IntegerType()),
    T.StructField("_asaql_text", T.StringType()),
    T.StructField(PROBLEM, T.StringType()),
])


def decoded_lines(files: DataFrame, fmt: InputFormat) -> DataFrame:
    """`binaryFile` rows (path, modificationTime, content) → one row per record."""
    def decode(batches):
        import pyarrow as pa

        for batch in batches:
            out = {name: [] for name in LINES_SCHEMA.fieldNames()}
            for path, mtime, content in zip(batch.column("path").to_pylist(),
                                            batch.column("modificationTime").to_pylist(),
                                            batch.column("content").to_pylist()):
                control = f"/{CONTROL_FOLDER}/" in path
                found = json_records(content) if control \
                    else records(path, content, fmt.name, fmt.delimiter)
                for line, text, problem in found:
                    out[C.FILE].append(path)
                    out["_asaql_mtime"].append(mtime)
                    out[C.LINE].append(line)
                    out["_asaql_text"].append(text)
                    out[PROBLEM].append(problem)
            yield pa.RecordBatch.from_pydict(out, schema=_ARROW_SCHEMA)

    return files.select("path", "modificationTime", "content").mapInArrow(decode, LINES_SCHEMA)


def _arrow_schema():
    import pyarrow as pa

    return pa.schema([(C.FILE, pa.string()), ("_asaql_mtime", pa.timestamp("us")),
                      (C.LINE, pa.int32()), ("_asaql_text", pa.string()),
                      (PROBLEM, pa.string())])


_ARROW_SCHEMA = _arrow_schema()


_BINARY_FILE = T.StructType([  # the binaryFile source's columns (a stream needs them given)
    T.StructField("path", T.StringType(), False),
    T.StructField("modificationTime", T.TimestampType(), False),
    T.StructField("length", T.LongType(), False),
    T.StructField("content", T.BinaryType(), True),
])


def stream_lines(spark: SparkSession, path: str, control: str, fmt: InputFormat,
                 max_files_per_trigger: int | None, escape) -> DataFrame:
    """The records of a streaming input in format `fmt`, with its control records: a file of
    any name, or a folder's files with the format's extensions."""
    reader = spark.readStream.format("binaryFile").schema(_BINARY_FILE) \
        .options(**trigger_limit(max_files_per_trigger))
    p = Path(path).resolve()
    patterns = [escape(p.name)] if p.is_file() else [f"*{suffix}" for suffix in SUFFIXES[fmt.name]]
    names = "{" + ",".join([*patterns, "*.jsonl"]) + "}"
    places = [input_place(p, path, escape), escape(str(Path(control).resolve())[1:])]
    files = reader.option("pathGlobFilter", names).load("/{" + ",".join(places) + "}")
    # a stray .jsonl file in the input folder is not one of its records: only control files
    is_input = ~F.col("path").contains(f"/{CONTROL_FOLDER}/")
    files = files.where(~is_input | ~F.col("path").endswith(".jsonl") | F.lit(p.is_file()))
    return decoded_lines(files, fmt)


def batch_lines(spark: SparkSession, files: list[Path], fmt: InputFormat) -> DataFrame:
    return decoded_lines(spark.read.format("binaryFile").load([str(f) for f in files]), fmt)


def infer_format_schema(spark: SparkSession, files: list[Path], fmt: InputFormat) -> T.StructType:
    """Spark's JSON inference over the records' JSON text: the stream parses that text with the
    schema, so both agree (CSV: every field text; Parquet and Avro: their types, datetimes as
    ISO 8601 text as in a JSON input)."""
    good = batch_lines(spark, files, fmt).where(F.col(PROBLEM).isNull()
                                                & F.col("_asaql_text").isNotNull())
    inferred = spark.read.option("mode", "PERMISSIVE").json(good.select(
        F.col("_asaql_text").alias("value")))
    return inferred.schema


def partition_texts(spark: SparkSession, files: list[Path], fmt: InputFormat) -> DataFrame:
    """The records' JSON text as `value`: what discover_partitions scans."""
    return batch_lines(spark, files, fmt).where(F.col("_asaql_text").isNotNull()) \
        .select(F.col("_asaql_text").alias("value"))
