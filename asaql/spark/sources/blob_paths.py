"""An input folder with a path pattern (asaql/inputs/files.py, PatternedFolder) on Spark: the
file source reads the folders the pattern names (a glob under the folder), and each file's
events arrive at the time its folder names, as ASA's blob events arrive at the blob's
BlobLastModifiedUtcTime: a local copy of a container keeps its folders, not its blobs'
modification times, and a replay gives the same times."""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from asaql.runtime import columns as C
from asaql.spark.sources.control import CONTROL_FOLDER

# the blob's name in its container: the file's path from where the pattern starts (a hidden
# column of a patterned input's events; GetMetadataPropertyValue(input, 'BlobName'))
BLOB_NAME = "asaql__blob_name"

_FIELDS = {"yyyy": "year", "MM": "month", "M": "month", "dd": "day", "d": "day", "HH": "hour",
           "H": "hour", "mm": "minute", "m": "minute", "ss": "second", "s": "second"}


def input_place(folder: Path, path, escape) -> str:
    """The glob of the input's place for Spark's file source (without the leading '/')."""
    place = escape(str(folder)[1:])
    pattern = getattr(path, "pattern", None)
    return place if pattern is None or not folder.is_dir() else f"{place}/{pattern.glob()}"


def with_folder_times(lines: DataFrame, path) -> DataFrame:
    """The lines' file time (`_asaql_mtime`, the arrival of events without
    EventEnqueuedUtcTime) taken from the folder the path pattern names, for an input that has
    one (a control file keeps its own), and each line's BLOB_NAME."""
    pattern = getattr(path, "pattern", None)
    if pattern is None:
        return lines
    path = F.url_decode(F.col(C.FILE))
    name = F.regexp_extract(path, "(" + pattern.regex() + r"/[^/]+)$", 1)
    time = folder_time(path, pattern)
    # Spark's glob may be looser than the pattern (a month 13): such a file is not the input's,
    # as input_files() says; a control file is the run's own
    return lines.where(time.isNotNull() | F.col(C.FILE).contains(f"/{CONTROL_FOLDER}/")) \
        .withColumn("_asaql_mtime", F.coalesce(time, F.col("_asaql_mtime"))) \
        .withColumn(BLOB_NAME, F.when(name != "", name))


def folder_time(file: Column, pattern) -> Column:
    """The UTC time a file's folder names (NULL when the pattern does not match it, or names no
    real date); `file` decoded (a URI escapes spaces)."""
    regex = pattern.regex() + r"/[^/]+$"
    values = {"year": F.lit(1970), "month": F.lit(1), "day": F.lit(1), "hour": F.lit(0),
              "minute": F.lit(0), "second": F.lit(0)}
    for number, specifier in enumerate(pattern.specifiers(), start=1):
        values[_FIELDS[specifier]] = F.regexp_extract(file, regex, number).cast("int")
    matched = F.regexp_extract(file, regex, 0) != ""
    return F.when(matched, F.try_make_timestamp(
        values["year"], values["month"], values["day"], values["hour"], values["minute"],
        values["second"], F.lit("UTC")))
