"""Reference data: a static table read once when the run starts (JSON lines, CSV with a
header row, Parquet or Avro), carried into the query as a literal and looked up by the join's
equality keys."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.errors import ConfigurationError
from asaql.inputs.files import input_files
from asaql.inputs.formats import resolve_format
from asaql.runtime import columns as C
from asaql.spark.sources.declared_schema import conform
from asaql.spark.failures import reason
from asaql.spark.sources.format_inputs import PROBLEM, batch_lines
from asaql.spark.sources.addresses import FileNames, describe_position
from asaql.spark.sources.io import infer_payload_schema
from asaql.spark.lowering.keys import key_text
from asaql.spark.sources.record_checks import (object_keys, parse_problem, parse_refused,
                                                shape_problem)
from asaql.spark.sources.records import ARRAY_PROBLEM, array_elements, split_lines
from asaql.spark.text_select import quoted

_CORRUPT = "_asaql_corrupt"


@dataclass(frozen=True)
class ReferenceTable:
    name: str
    path: str
    frame: DataFrame  # the rows, as read (a batch DataFrame)

    @property
    def schema(self) -> T.StructType:
        return self.frame.schema

    def record(self) -> Column:
        """One row as a struct, for expressions evaluated over the table itself."""
        return F.struct(*[F.col(f"`{f.name}`") for f in self.schema.fields])

    def rows(self) -> Column:
        """The whole table as an array literal."""
        if not self.schema.fields:  # an empty file: no rows, no fields
            return F.array().cast(T.ArrayType(self.schema))
        lines = self.frame.select(F.to_json(self.record()).alias("j")).collect()
        text = "[" + ",".join(row["j"] for row in lines) + "]"
        return F.from_json(F.lit(text), T.ArrayType(self.schema))

    def by_key(self, keys: list[Column]) -> Column:
        """A map literal: the key (JSON text of the key values as strings) → its rows, in file
        order. Rows whose key holds a NULL are never matched (NULL = x is not true)."""
        if not self.schema.fields:  # an empty file: no rows, no fields
            return F.create_map().cast(T.MapType(T.StringType(), T.ArrayType(self.schema)))
        key = key_text(keys)
        rows = self.frame.select(key.alias("k"), F.to_json(self.record()).alias("j")).collect()
        groups: dict[str, list] = {}
        for row in rows:
            if row["k"] is not None:
                groups.setdefault(row["k"], []).append(json.loads(row["j"]))
        return F.from_json(F.lit(json.dumps(groups)),
                           T.MapType(T.StringType(), T.ArrayType(self.schema)))


def load_reference(spark: SparkSession, name: str, path: str,
                   declared: tuple[tuple[str, str], ...] = ()) -> ReferenceTable:
    """The table, read whole. A record of it that is malformed (the input rules of
    asaql/spark/sources/records.py), or whose value does not convert to the type CREATE TABLE declares
    (`declared`), stops the run before it starts, with file, line and reason: the join results
    depend on every row, so a table silently missing one would change them."""
    if not Path(path).exists():
        raise ConfigurationError(f"reference data not found: {path}")
    if path.lower().endswith(".csv"):
        # FAILFAST: a row with more or fewer values than the header stops the run
        frame = spark.read.option("header", True).option("inferSchema", True) \
            .option("mode", "FAILFAST").csv(path)
    else:  # fields in order of first appearance, as for the inputs
        frame = _json_table(spark, path)
    return reference_table(name, path, frame, declared)


def reference_table(name: str, path: str, frame: DataFrame,
                    declared: tuple[tuple[str, str], ...] = ()) -> ReferenceTable:
    """The table of rows read from `path` (a batch DataFrame), its declared columns converted;
    a row that does not convert or read stops the run."""
    if declared:
        frame = _conformed(frame, declared, path)
    # Not cached: Spark's cache would hand a refreshed file's old rows back (same plan).
    try:
        frame.collect()
    except Exception as error:  # a malformed reference file stops the run with its path
        raise ConfigurationError(f"cannot read reference data {path}: "
                                 f"{reason(str(error))[:300]}") from None
    return ReferenceTable(name, path, frame)


def _conformed(frame: DataFrame, declared: tuple[tuple[str, str], ...], path: str) -> DataFrame:
    """Declared columns converted as an input's are (declared_schema.py), missing ones added."""
    fields = {f.name.lower(): (F.col(f"`{f.name}`"), f.dataType) for f in frame.schema.fields}
    values, why = conform(fields, declared)
    bad = frame.where(why.isNotNull()).select(why.alias("why")).limit(1).collect()
    if bad:
        raise ConfigurationError(f"reference data {path}: {bad[0]['why']} (a reference table "
                                 "is used whole: fix or remove that record)")
    present = set(fields)
    return frame.select(
        *[values[f.name.lower()].alias(f.name) if f.name.lower() in values else F.col(f"`{f.name}`")
          for f in frame.schema.fields],
        *[values[name.lower()].alias(name) for name, _ in declared if name.lower() not in present])


def _json_table(spark: SparkSession, path: str) -> DataFrame:
    """JSON lines, or Parquet and Avro decoded into the same lines (format_inputs.py)."""
    schema = infer_payload_schema(spark, path)
    paths = input_files(path)
    fmt = resolve_format(paths, path)
    if fmt.name == "json":
        files = spark.read.text([str(f) for f in paths], wholetext=True)
        lines = split_lines(files.select("value", "_metadata"))
    else:
        lines = batch_lines(spark, paths, fmt)
    lines = array_elements(lines)  # a JSON array's objects are the table's rows
    with_corrupt = T.StructType(schema.fields + [T.StructField(_CORRUPT, T.StringType())])
    parsed = lines.select("*", F.from_json("_asaql_text", with_corrupt, {
        "mode": "PERMISSIVE", "columnNameOfCorruptRecord": _CORRUPT}).alias("_asaql_rec"),
        F.expr(object_keys("_asaql_text")).alias("_asaql_keys"))
    corrupt = parse_refused("_asaql_rec", _CORRUPT)
    decoded = [quoted(PROBLEM)] if PROBLEM in lines.columns else []
    problem = F.expr(f"coalesce({', '.join(decoded)}{', ' if decoded else ''}{ARRAY_PROBLEM}, "
                     f"{shape_problem('_asaql_text')}, "
                     f"{parse_problem('_asaql_text', corrupt, schema, '_asaql_keys')})")
    bad = parsed.where(problem.isNotNull()).select(C.FILE, C.LINE, problem.alias("why")) \
        .orderBy(C.FILE, C.LINE).limit(1).collect()
    if bad:
        where = describe_position(bad[0][C.FILE], bad[0][C.LINE], FileNames.of([path]))
        raise ConfigurationError(f"reference data {where}: {bad[0]['why']} (a reference table "
                                 "is used whole: fix or remove that record)")
    return parsed.select(*[F.col(f"_asaql_rec.`{f.name}`").alias(f.name) for f in schema.fields])
