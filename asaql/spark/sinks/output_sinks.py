"""The sink of each output a run writes, by where it goes."""

from __future__ import annotations

import os
import re

from asaql.kafka.endpoints import KafkaTopic
from asaql.outputs.database import DatabaseTable
from asaql.spark.sinks.database_sink import DatabaseSink
from asaql.spark.sinks.kafka_sink import KafkaSink
from asaql.spark.sinks.line_sink import LineSink


def output_sink(spark, options, name: str, checkpoint: str, fresh: bool, committed, errors):
    """A topic, a database table, a `.jsonl` file, a folder, or stdout; the appends to files
    are journaled in the checkpoint (exactly once across a kill)."""
    target = options.outputs.get(name) or options.stdout
    if isinstance(target, DatabaseTable):
        return DatabaseSink(spark, name, target, checkpoint, fresh, errors,
                            getattr(options, "output_error_policy", "retry"))
    if isinstance(target, KafkaTopic):
        return KafkaSink(target, options.output_keys.get(name), checkpoint, fresh)
    journal = os.path.join(checkpoint, "journals", f"output-{safe_name(name)}.jsonl")
    pattern = getattr(options, "output_path_patterns", {}).get(name)
    return LineSink(target, fresh, journal, committed, options.output_formats.get(name, "json"),
                    pattern.spark_format() if pattern is not None else None)


def safe_name(name: str) -> str:
    """An alias as part of a file name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)
