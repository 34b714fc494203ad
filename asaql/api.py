"""The Python API: compile an ASA query and embed its plan in your own PySpark job.

    import asaql
    query = asaql.compile(text, late="5s", ooo="0s")
    print(query.explain())
    outputs = query.to_dataframes(spark, {"input": events})   # alias → DataFrame
    outputs["output"].writeStream.format("console").start()

`to_dataframes` takes a DataFrame per input alias, streaming (any Spark source: files, rate,
Kafka…) or batch, and gives a DataFrame per output alias with the SELECT's columns, typed: the
event-ordering policy, the watermarks and System.Timestamp applied by the same stateful step
`asaql run` uses. Your job owns the sources, sinks, triggers and checkpoints.
"""

from __future__ import annotations

from dataclasses import dataclass

from asaql.compiler import CompiledQuery, compile_query
from asaql.errors import ConfigurationError
from asaql.plan.policy import EventOrderingPolicy


def compile(text: str, late: str = "5s", ooo: str = "0s", early: str | None = "5m",  # noqa: A001
            action: str = "adjust", references=()) -> "Query":
    """Parse, analyse and plan an ASA query (no Spark). `references`: the input names that are
    reference data. Errors raise asaql.errors.AsaqlError with a position (`.render(text)`)."""
    policy = EventOrderingPolicy.from_options(late, ooo, "none" if early is None else early,
                                              action)
    return Query(compile_query(text, policy, tuple(references)))


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
                      references: dict | None = None) -> dict:
        """A DataFrame per output alias over the given input DataFrames (alias → DataFrame).

        Each input row is an event: its columns the payload; `arrival` names its arrival time
        (absent: the time Spark reads it); `partition` its partition (absent: 0); `order`
        optionally a column that orders events of equal arrival time (an offset), for
        repeatable results. A batch DataFrame is an input that has ended: every window closes.
        `references`: reference data alias → a JSON-lines or CSV file.
        """
        from asaql.spark.embed import output_frames

        return output_frames(self.compiled, spark, inputs, arrival, partition, order,
                             references or {})


def spark_plans(compiled: CompiledQuery, spark, inputs: dict[str, str],
                references: dict[str, str]) -> dict[str, str]:
    """Spark's plan of each streaming query `asaql run` would start over these files."""
    from asaql.runner import RunOptions
    from asaql.spark.execute import spark_plans as plans

    missing = [name for name in compiled.reference_names if name not in references]
    if missing:
        raise ConfigurationError(f"no file given for reference data '{missing[0]}': use "
                                 f"--reference {missing[0]}=PATH")
    return plans(compiled, RunOptions(inputs=inputs, outputs={}, references=references), spark)
