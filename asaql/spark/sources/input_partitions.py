"""An input's partitions and each one's first arrival: what windows over combined partitions
wait for (ASA waits for every partition of an event hub)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from asaql.inputs.files import input_files
from asaql.inputs.formats import InputFormat, resolve_format
from asaql.spark.sources.format_inputs import partition_texts
from asaql.spark.sources.io import SMALL_INPUT_BYTES
from asaql.spark.sources.kafka_input import KafkaRead, kafka_partitions
from asaql.spark.sources.partition_scan import partition_columns, partitions_in_driver
from asaql.spark.sources.records import array_elements, split_lines


def discover_partitions(spark: SparkSession, path: str, fmt: InputFormat | None = None,
                        jvm: bool = False, in_driver: bool | None = None
                        ) -> tuple[tuple[str, int | None], ...]:
    """The PartitionIds of the input's records (0 for a record without one), as the policy key
    text, each with its first arrival time (µs; None when its records carry none). Windows over
    combined partitions wait for every partition of the input, as ASA waits for every partition
    of an event hub; one that has not sent events yet is idle, its clock never past its first
    arrival. A scan of the text, no JSON parsing (partition_scan.py; a small JSON-lines input,
    in the driver, or as `in_driver` says). A topic: its partitions. `fmt`: as for
    infer_payload_schema. (A large JSON-lines input's come with its schema: survey_input.)"""
    if isinstance(path, KafkaRead):
        return kafka_partitions(path)
    paths = input_files(path)
    files = [str(f) for f in paths]
    if not files:
        return ()
    fmt = resolve_format(paths, path, fmt)
    arrays = fmt.name == "json" and any(_starts_with_array(f) for f in paths)
    if in_driver is None:
        in_driver = fmt.name == "json" and not arrays \
            and sum(f.stat().st_size for f in paths) <= SMALL_INPUT_BYTES
    if in_driver:
        return partitions_in_driver(spark, paths)
    if fmt.name != "json":
        texts = partition_texts(spark, paths, fmt)
    elif arrays:  # each element's own text
        whole = spark.read.text(files, wholetext=True).select("value", "_metadata")
        texts = array_elements(split_lines(whole)).select(F.col("_asaql_text").alias("value"))
    else:
        texts = spark.read.text(files)
    partition, arrival = partition_columns(F.col("value"), jvm)
    found = texts.select(partition.alias("p"), arrival.alias("a")).where(F.col("p").isNotNull()) \
        .groupBy("p").agg(F.min("a").alias("first")).orderBy("p").collect()
    return tuple((str(row.p), None if row.first is None else _micros(row.first)) for row in found)


def _starts_with_array(file: Path) -> bool:
    with open(file, "rb") as handle:
        return handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"[")


def _micros(moment: datetime) -> int:
    """A naive datetime in the session's time zone (UTC) → µs since the epoch."""
    return (moment.replace(tzinfo=timezone.utc) - _EPOCH) // timedelta(microseconds=1)


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
