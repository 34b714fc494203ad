"""Reference data: a static table read once when the run starts (JSON lines or CSV with a header
row), carried into the query as a literal and looked up by the join's equality keys."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.errors import ConfigurationError
from asaql.spark.io import infer_payload_schema
from asaql.spark.lowering.keys import key_text


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


def load_reference(spark: SparkSession, name: str, path: str) -> ReferenceTable:
    if not Path(path).exists():
        raise ConfigurationError(f"reference data not found: {path}")
    if path.lower().endswith(".csv"):
        frame = spark.read.option("header", True).option("inferSchema", True).csv(path)
    else:  # fields in order of first appearance, as for the inputs
        frame = spark.read.option("mode", "FAILFAST") \
            .schema(infer_payload_schema(spark, path)).json(path)
    # Not cached: Spark's cache would hand a refreshed file's old rows back (same plan).
    try:
        frame.collect()
    except Exception as error:  # a malformed reference file stops the run with its path
        raise ConfigurationError(f"cannot read reference data {path}: "
                                 f"{str(error).splitlines()[0]}") from None
    return ReferenceTable(name, path, frame)
