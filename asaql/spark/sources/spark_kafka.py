"""A topic read with Spark's own Kafka connector (`--kafka-connector spark`), for clusters that
have its jar (spark-sql-kafka-0-10): the same rows as asaql's Python source (kafka_source.py),
shaped like a line of a file (io.py), with asaql's control records read beside it from the
checkpoint's control folder by the file source.

Semantics kept: one Spark partition per topic partition, offsets `{"TOPIC": {"0": next}}` in
the checkpoint, a replayed micro-batch reads the same offsets, availableNow fixes a finite run's
end offsets at its start, --start (earliest, now, a time), read_committed. What differs is in
docs/kafka.md ("Spark's own Kafka connector").
"""

from __future__ import annotations

import pyspark
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from asaql.errors import ConfigurationError
from asaql.kafka.endpoints import KafkaTopic
from asaql.kafka.java_options import java_options, start_options
from asaql.spark.sources.control import CONTROL_PREFIX
from asaql.spark.sources.kafka_source import KAFKA_FILE_PREFIX

# The connector of this Spark (Scala 2.13, like every Spark 4 build).
PACKAGE = f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"
MISSING = (f"Spark's Kafka connector is not on this Spark's classpath: start Spark with "
           f"--packages {PACKAGE} (or set spark.jars.packages, or PYSPARK_SUBMIT_ARGS="
           f"'--packages {PACKAGE} pyspark-shell'), or read topics with the default "
           "--kafka-connector python")


def connector_options(topic: KafkaTopic, start: str | int,
                      max_per_trigger: int | None) -> dict[str, str]:
    options = {"subscribe": topic.topic, "failOnDataLoss": "true", "includeHeaders": "true",
               **start_options(start), **java_options(topic)}
    if max_per_trigger:
        options["maxOffsetsPerTrigger"] = str(max_per_trigger)
    return options


def spark_kafka_lines(spark: SparkSession, topic: KafkaTopic, start: str | int,
                      max_per_trigger: int | None, control: str,
                      carried: tuple[str, ...] = ()) -> DataFrame:
    """The topic's records and the control records, as the Python source gives them (the
    source's own end is Trigger.AvailableNow's: the end offsets found at start)."""
    options = connector_options(topic, start, max_per_trigger)
    try:
        frame = spark.readStream.format("kafka").options(**options).load()
    except Exception as error:  # AnalysisException: no data source named kafka
        if _connector_missing(error):
            raise ConfigurationError(MISSING) from None
        raise
    not_before = start if isinstance(start, int) else None
    return kafka_records(frame, not_before, carried).unionByName(
        control_lines(spark, control))


def _connector_missing(error: Exception) -> bool:
    text = str(error)
    return "DATA_SOURCE_NOT_FOUND" in text or "Failed to find data source: kafka" in text \
        or "Failed to find the data source: kafka" in text


def kafka_records(frame: DataFrame, not_before_ms: int | None = None,
                  carried: tuple[str, ...] = ()) -> DataFrame:
    """A DataFrame shaped like Spark's Kafka source (key, value binary, topic, partition,
    offset, timestamp, …) as asaql's records (kafka_source.SCHEMA): where it was read
    ("kafka:TOPIC:PARTITION", the offset), its arrival time (the record's timestamp), its text
    (UTF-8; no value: empty) and its partition. `not_before_ms`: --start TIME also skips records
    stamped earlier, as the Python source does (a broker may answer with an earlier offset)."""
    if not_before_ms is not None:
        frame = frame.where(F.col("timestamp") >= F.timestamp_millis(F.lit(not_before_ms)))
    # a cast, not decode(): invalid UTF-8 becomes U+FFFD as in the Python source (decode fails)
    text = F.coalesce(F.col("value").cast("string"), F.lit(""))
    return frame.select(
        F.concat(F.lit(KAFKA_FILE_PREFIX), F.col("topic"), F.lit(":"),
                 F.col("partition").cast("string")).alias("asaql__file"),
        F.col("timestamp").alias("_asaql_mtime"),
        F.col("offset").cast("long").alias("asaql__line"),
        F.regexp_replace(text, "^\ufeff", "").alias("_asaql_text"),
        F.col("partition").cast("long").alias("_asaql_partition"),
        *_no_problem(),
        (F.col("key").cast("string") if "key" in carried
         else F.lit(None).cast("string")).alias("_asaql_message_key"),
        (_headers() if "headers" in carried
         else F.lit(None).cast("map<string,string>")).alias("_asaql_headers"))


def _no_problem() -> list:
    """A JSON message is parsed downstream (io.py): no decoder's reason, no element index."""
    return [F.lit(None).cast("string").alias("_asaql_problem"),
            F.lit(None).cast("int").alias("_asaql_element")]


def _headers():
    """Spark's headers (array of (key, binary value)) as the Python source gives them: a map of
    text, NULL when the record has none."""
    entries = F.transform("headers", lambda h: F.struct(h["key"].alias("key"),
                                                         h["value"].cast("string").alias("value")))
    return F.when(F.size("headers") > 0, F.map_from_entries(entries))


def control_lines(spark: SparkSession, control: str) -> DataFrame:
    """asaql's control records (control.py) from the checkpoint's folder, by the file source,
    shaped as kafka_records' rows."""
    files = (spark.readStream.format("text").option("wholetext", "true")
             .option("pathGlobFilter", f"{CONTROL_PREFIX}*.jsonl").load(str(control)))
    return files.select(
        F.col("_metadata.file_path").alias("asaql__file"),
        F.col("_metadata.file_modification_time").alias("_asaql_mtime"),
        F.lit(1).cast("long").alias("asaql__line"),
        F.trim(F.col("value")).alias("_asaql_text"),
        F.lit(None).cast("long").alias("_asaql_partition"),
        *_no_problem(),
        F.lit(None).cast("string").alias("_asaql_message_key"),
        F.lit(None).cast("map<string,string>").alias("_asaql_headers"))
