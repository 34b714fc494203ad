"""The part files of a folder output in JSON lines, CSV or Parquet (`--output-format`, or a
project's Blob output serialization): each micro-batch's rows, as asaql writes them as JSON
lines, turned into the format by Spark's own writers.

- CSV: each part file starts with a header row; values as a `.csv` file output writes them
  (text as it is, NULL as an empty field, numbers, booleans, records and arrays as their JSON
  text, datetimes as ASA's text): every column is read back from the JSON line as text.
- Parquet: the columns keep the query's types, datetimes as timestamps (UTC, microseconds).
"""

from __future__ import annotations

import csv
from pathlib import Path

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

SUFFIXES = {"json": ".txt", "csv": ".csv", "parquet": ".parquet"}
# How asaql writes datetimes into a JSON line (format_asa_datetime): seven digits and a Z
ASA_DATETIME = "yyyy-MM-dd'T'HH:mm:ss.SSSSSSS'Z'"
# Spark's CSV writer trims and escapes with a backslash by default: this is RFC 4180, as
# Python's csv module (and the `.csv` file output) writes it.
CSV_OPTIONS = {"header": "true", "quote": '"', "escape": '"', "emptyValue": "",
               "nullValue": "", "ignoreLeadingWhiteSpace": "false",
               "ignoreTrailingWhiteSpace": "false", "lineSep": "\n"}


def write_part_files(lines: DataFrame, json_column: str, fmt: str,
                     fields: list[T.StructField] | None, staging: str,
                     partition: str | None = None) -> None:
    """Writes the rows (one JSON line each in `json_column`) to `staging` in format `fmt`;
    `partition`: a column whose value names each row's subfolder (Spark's `name=value`)."""
    kept = [partition] if partition else []
    if fmt == "json" or not fields:
        _writer(lines.select(json_column, *kept), partition).text(staging)
        return
    if fmt == "csv":
        text = T.StructType([T.StructField(f.name, T.StringType()) for f in fields])
        _writer(_rows(lines, json_column, text, {}, kept), partition) \
            .options(**CSV_OPTIONS).csv(staging)
        return
    typed = T.StructType(list(fields))
    _writer(_rows(lines, json_column, typed, {"timestampFormat": ASA_DATETIME}, kept),
            partition).parquet(staging)


def write_csv_parts(lines: DataFrame, json_column: str, columns: list[str],
                    staging: str) -> None:
    """CSV part files without a header, `columns` in order, values as `write_part_files`
    writes them: the rows of a `.csv` file output (its header is the driver's)."""
    text = T.StructType([T.StructField(name, T.StringType()) for name in columns])
    _rows(lines, json_column, text, {}, []).write.mode("overwrite") \
        .options(**{**CSV_OPTIONS, "header": "false"}).csv(staging)


def _writer(frame: DataFrame, partition: str | None):
    writer = frame.write.mode("overwrite")
    return writer.partitionBy(partition) if partition else writer


def _rows(lines: DataFrame, json_column: str, schema: T.StructType, options: dict,
          kept: list[str]) -> DataFrame:
    """The JSON lines read back as columns of `schema` (a projection: the order stays), and the
    `kept` columns."""
    return lines.select(F.from_json(F.col(json_column), schema, options).alias("_asaql_row"),
                        *kept).select("_asaql_row.*", *kept)


def has_rows(part: Path) -> bool:
    """A part file with rows: Spark writes a CSV header or a Parquet schema for a partition
    without any."""
    if part.stat().st_size == 0:
        return False
    if part.name.endswith(".parquet"):
        import pyarrow.parquet as pq

        return pq.ParquetFile(part).metadata.num_rows > 0
    if part.name.endswith(".csv"):
        with open(part, encoding="utf-8", newline="") as text:
            reader = csv.reader(text)
            return next(reader, None) is not None and next(reader, None) is not None
    return True
