"""The Python API: compile an ASA query and embed its plan in your own PySpark job.

    import asaql
    query = asaql.compile(text, late="5s", ooo="0s")
    print(query.explain())
    outputs = query.to_dataframes(spark, {"input": events})   # alias → DataFrame
    outputs["output"].writeStream.format("console").start()

    counts = query.run(spark, {"input": "kafka://broker:9092/telemetry"},
                       {"output": "out.jsonl"}, start="earliest")       # as `asaql run` does

`to_dataframes` takes a DataFrame per input alias, streaming (any Spark source: files, rate,
Kafka…) or batch, and gives a DataFrame per output alias with the SELECT's columns, typed: the
event-ordering policy, the watermarks and System.Timestamp applied by the same stateful step
`asaql run` uses. Your job owns the sources, sinks, triggers and checkpoints. `run` is
`asaql run` itself: inputs and outputs named as on the command line (files, folders,
`kafka://HOST:PORT/TOPIC`, Event Hubs connection strings, or `asaql.topic(...)` for a topic with
its own client settings).
"""

from __future__ import annotations

from dataclasses import dataclass

from asaql.compiler.pipeline import CompiledQuery, compile_query
from asaql.errors import ConfigurationError
from asaql.kafka.endpoints import KafkaTopic, is_kafka_location, kafka_topic, with_settings
from asaql.outputs.database import (DatabaseTable, database_table, driver_jars,
                                     is_database_location)
from asaql.plan.policy import EventOrderingPolicy


def compile(text: str, late: str = "5s", ooo: str = "0s", early: str | None = "5m",  # noqa: A001
            action: str = "adjust", references=()) -> "Query":
    """Parse, analyse and plan an ASA query (no Spark). `references`: the input names that are
    reference data. Errors raise asaql.errors.AsaqlError with a position (`.render(text)`)."""
    policy = EventOrderingPolicy.from_options(late, ooo, "none" if early is None else early,
                                              action)
    return Query(compile_query(text, policy, tuple(references)))


def topic(location: str, config: str | None = None, settings: dict | None = None) -> KafkaTopic:
    """A topic to read or write: `kafka://HOST:PORT/TOPIC` or an Event Hubs connection string,
    with the librdkafka settings of the file `config` (as `--kafka-config`) and then `settings`
    (SASL, TLS, tuning), which win. It prints as kafka://HOST:PORT/TOPIC: secrets never show."""
    if not is_kafka_location(location):
        raise ConfigurationError(f"a topic is kafka://HOST:PORT/TOPIC or an Event Hubs "
                                 f"connection string, got '{location}'")
    return with_settings(kafka_topic(location, config), settings)


@dataclass(frozen=True)
class Query:
    compiled: CompiledQuery

    @property
    def ast(self):
        return self.compiled.ast

    @property
    def plan(self):
        return self.compiled.plan

    @property
    def inputs(self) -> tuple[str, ...]:
        return self.compiled.input_names

    @property
    def outputs(self) -> tuple[str, ...]:
        return self.compiled.output_names

    def explain(self, format: str = "text"):  # noqa: A002
        """The logical plan: an indented tree (text) or a dict (json)."""
        from asaql.plan.explain import explain_plan, plan_json

        return plan_json(self.plan) if format == "json" else explain_plan(self.plan)

    def to_dataframes(self, spark, inputs: dict, *, arrival: str = "EventEnqueuedUtcTime",
                      partition: str = "PartitionId", order: str | None = None,
                      references: dict | None = None, kafka_config: str | None = None,
                      kafka_settings: dict | None = None, start="earliest",
                      follow: bool = False, checkpoint: str | None = None,
                      functions=None) -> dict:
        """A DataFrame per output alias over the given inputs (alias → a DataFrame, or a topic).

        Each input row is an event: its columns the payload; `arrival` names its arrival time
        (absent: the time Spark reads it); `partition` its partition (absent: 0); `order`
        optionally a column that orders events of equal arrival time (an offset), for
        repeatable results. A batch DataFrame is an input that has ended: every window closes.
        A topic (`kafka://HOST:PORT/TOPIC`, an Event Hubs connection string, `asaql.topic`)
        is read by asaql's Kafka source with ASA's Event Hub metadata, as `asaql run` reads
        it, from `start`, with `kafka_config`/`kafka_settings`; without `follow` up to the end
        offsets found at start, where every window closes.
        `references`: reference data alias → a JSON-lines or CSV file. `functions`: the
        folder of the job's JavaScript functions (as `--functions`).
        A query with stages (two stateful steps in a row) has its first parts written to stage
        folders under `checkpoint` (default: a new temporary folder), by streaming queries
        started here and named `asaql_stage_…` (over batch inputs: written at once); each
        output reads its stage. Give a `checkpoint` to resume them after a restart.
        """
        from asaql.kafka.endpoints import start_position
        from asaql.spark.embed import output_frames
        from asaql.spark.sources.kafka_input import KafkaRead

        compiled, _ = _with_functions(self.compiled, functions)

        position = start_position(start)
        given = {alias: KafkaRead(self._topic(value, kafka_config, kafka_settings), position,
                                  follow)
                 if isinstance(value, (str, KafkaTopic)) else value
                 for alias, value in inputs.items()}
        return output_frames(compiled, spark, given, arrival, partition, order,
                             references or {}, checkpoint)

    def start(self, spark, inputs: dict, outputs: dict, checkpoint: str, *,
              trigger: dict | None = None, arrival: str = "EventEnqueuedUtcTime",
              partition: str = "PartitionId", order: str | None = None,
              references: dict | None = None, functions=None) -> list:
        """Like `to_dataframes`, but the outputs are written by asaql's own streaming queries:
        one per input (or join of two streams), whose step runs once per micro-batch for every
        output reading it. `outputs`: alias → a function `(rows: DataFrame, batch_id)` given
        each micro-batch's rows of that output (as in `foreachBatch`); `checkpoint`: a folder
        of the queries' checkpoints (and stages); `trigger`: `writeStream.trigger`'s keywords,
        e.g. `{"availableNow": True}`. Over batch inputs the functions are called at once
        (batch id 0). `functions`: as for `to_dataframes`. → the streaming queries started."""
        from asaql.spark.embed import start_outputs

        compiled, _ = _with_functions(self.compiled, functions)
        return start_outputs(compiled, spark, dict(inputs), outputs, str(checkpoint), trigger,
                             arrival, partition, order, references or {})

    @staticmethod
    def _topic(value, config: str | None, settings: dict | None) -> KafkaTopic:
        if isinstance(value, KafkaTopic):
            return value
        return topic(value, config, settings)

    def run(self, spark=None, inputs: dict | None = None, outputs: dict | None = None, *,
            kafka_config: str | None = None, kafka_settings: dict | None = None,
            start="earliest", checkpoint: str | None = None, follow: bool = False,
            errors: str = "asaql-errors.jsonl", references: dict | None = None,
            partition_keys: dict | None = None, kafka_group: str | None = None,
            kafka_connector: str = "python", max_events_per_trigger: int | None = None,
            metrics: str | None = None, functions=None, on_data_error: str = "stop",
            output_error_policy: str = "retry"):
        """Run the query as `asaql run` does; → its counts (asaql.spark.sinks.sink.RunCounts).
        `functions`: the folder of the job's JavaScript functions (as `--functions`).
        `on_data_error`: "stop" (ASA's way: a data error raises asaql.errors.DataError at its
        micro-batch, none of which is written) or "drop" (the row into `errors`, and on).
        `output_error_policy`: a row a database table refuses stops the run ("retry", ASA's
        default) or goes to `errors` ("drop").

        `inputs`: alias → a file or folder, `kafka://HOST:PORT/TOPIC`, an Event Hubs
        connection string, or an `asaql.topic(...)`; `outputs`: alias → a file, a folder, a
        topic or a database table (`postgresql://USER@HOST:PORT/DB/TABLE`, its password from
        PGPASSWORD or ~/.pgpass; docs/databases.md); an alias left out: its rows go to stdout.
        `kafka_config` (a librdkafka properties file) and `kafka_settings` (a dict, winning)
        apply to every topic given as text. `start`: "earliest", "now", or a time (ISO text, datetime, ms) where a new run
        starts reading a topic; a `checkpoint` resumes where the last run stopped. Without
        `follow`, a topic is read up to the end offsets found at start and every window closes.
        `kafka_group`: a consumer group each micro-batch's end offsets are committed to
        (monitoring only); `kafka_connector="spark"`: Spark's own Kafka connector (its jar
        must be on Spark's classpath)."""
        from asaql.kafka.endpoints import start_position
        from asaql.plan.aliases import resolve_aliases
        from asaql.run.runner import RunOptions
        from asaql.run.runner import run as run_query

        if on_data_error not in ("stop", "drop"):
            raise ConfigurationError(f"on_data_error is 'stop' or 'drop', got '{on_data_error}'")
        if output_error_policy not in ("retry", "drop"):
            raise ConfigurationError(f"output_error_policy is 'retry' or 'drop', got "
                                     f"'{output_error_policy}'")
        if kafka_connector not in ("python", "spark"):
            raise ConfigurationError(f"kafka_connector is 'python' or 'spark', got "
                                     f"'{kafka_connector}'")

        def where(value):
            return self._topic(value, kafka_config, kafka_settings) \
                if isinstance(value, KafkaTopic) or is_kafka_location(str(value)) else str(value)

        given_inputs = resolve_aliases(self.inputs, {a: where(v) for a, v in
                                                     (inputs or {}).items()}, "input")
        given_outputs = resolve_aliases(self.outputs, {
            a: v if isinstance(v, DatabaseTable) else database_table(str(v), f"output '{a}'")
            if is_database_location(str(v)) else where(v) for a, v in (outputs or {}).items()},
            "output")
        keys = resolve_aliases(self.outputs, dict(partition_keys or {}), "output")
        not_topics = [a for a in keys if not isinstance(given_outputs.get(a), KafkaTopic)]
        if not_topics:
            raise ConfigurationError(f"partition_keys names '{not_topics[0]}', which is not a "
                                     "topic output")
        options = RunOptions(
            inputs=given_inputs, outputs=dict(given_outputs), checkpoint=checkpoint,
            follow=follow, errors_path=str(errors),
            references=resolve_aliases(self.compiled.reference_names,
                                       {a: str(p) for a, p in (references or {}).items()},
                                       "reference"),
            metrics_path=metrics, kafka_start=start_position(start), output_keys=keys,
            max_events_per_trigger=max_events_per_trigger, kafka_group=kafka_group,
            kafka_connector=kafka_connector, functions=_functions(functions),
            on_data_error=on_data_error, output_error_policy=output_error_policy)
        if spark is None:
            from asaql.spark.session.builder import build_session

            spark = build_session(jars=driver_jars(None, given_outputs.values()))
        try:
            return run_query(self.compiled, options, spark=spark)
        except Exception as error:
            from asaql.spark.failures import data_error_stop, stop_error

            stop = data_error_stop(error)
            if stop is None:
                raise
            raise stop_error(stop, str(errors), checkpoint) from None


def _functions(functions) -> dict:
    """A folder of NAME.js and NAME.js.json files (`--functions`), or what read_functions gave."""
    from asaql.javascript.definitions import read_functions

    if functions is None or isinstance(functions, dict):
        return dict(functions or {})
    return read_functions(str(functions))


def _with_functions(compiled: CompiledQuery, functions) -> tuple[CompiledQuery, dict]:
    """The query with the job's JavaScript functions in its plan (each call made here carries
    its own: two queries never share them), and those functions; a function the query calls
    and `functions` lacks is refused here."""
    from asaql.compiler.job_functions import require_functions

    job_functions = _functions(functions)
    require_functions(compiled, job_functions)
    return compiled.with_functions(job_functions), job_functions


def spark_plans(compiled: CompiledQuery, spark, inputs: dict[str, str],
                references: dict[str, str], functions=None) -> dict[str, str]:
    """Spark's plan of each streaming query `asaql run` would start over these files."""
    from asaql.run.runner import RunOptions
    from asaql.spark.execute import spark_plans as plans

    missing = [name for name in compiled.reference_names if name not in references]
    if missing:
        raise ConfigurationError(f"no file given for reference data '{missing[0]}': use "
                                 f"--reference {missing[0]}=PATH")
    compiled, job_functions = _with_functions(compiled, functions)
    return plans(compiled, RunOptions(inputs=inputs, outputs={}, references=references,
                                      functions=job_functions), spark)
