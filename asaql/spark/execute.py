"""Start one streaming query per source group, run it to the end of the input (or follow), and
collect the counts."""

from __future__ import annotations

import os
import uuid
import time
from pathlib import Path

from asaql.spark.io import infer_payload_schema
from asaql.spark.relations import group_by_source, lower_source, output_builder
from asaql.spark.session import build_session
from asaql.spark.sink import BatchWriter, ErrorLog, LineSink, RunCounts


def execute(compiled, options, checkpoint: str, spark=None) -> RunCounts:
    spark = spark or build_session()
    fresh = not any(Path(checkpoint).glob("*/commits/*"))
    sinks = {name: LineSink(options.outputs.get(name) or options.stdout, fresh)
             for name in compiled.output_names}
    errors = ErrorLog(options.errors_path, fresh)
    counts = RunCounts()
    schemas = {alias: infer_payload_schema(spark, path) for alias, path in options.inputs.items()
               if alias in compiled.input_names}
    queries, counted_inputs = [], set()
    for index, group in enumerate(group_by_source(compiled.plan)):
        alias = group.input_alias
        schema = schemas[alias]
        stream = lower_source(spark, group.source, options.inputs[alias], schema,
                              options.max_files_per_trigger)
        writer = BatchWriter([(output_builder(w, schema), sinks[w.output]) for w in group.writes],
                             counts, errors, count_input=alias not in counted_inputs)
        counted_inputs.add(alias)
        query = (stream.writeStream.foreachBatch(writer)
                 .option("checkpointLocation", os.path.join(checkpoint, f"source-{index}"))
                 .queryName(f"asaql_{alias}_{index}_{uuid.uuid4().hex[:8]}"))  # unique per session
        query = query.trigger(processingTime=f"{options.poll_seconds} seconds") if options.follow \
            else query.trigger(availableNow=True)
        queries.append(query.start())
    _wait(queries, options.follow)
    return counts


def _wait(queries, follow: bool) -> None:
    try:
        if follow:
            while all(q.isActive for q in queries):
                time.sleep(0.5)
        for q in queries:
            q.awaitTermination()
    except KeyboardInterrupt:
        pass
    finally:
        for q in queries:
            if q.isActive:
                q.stop()
    for q in queries:
        if q.exception() is not None:
            raise q.exception()
