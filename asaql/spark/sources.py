"""An input's events made ready for a stateful step: System.Timestamp's source value (TIMESTAMP
BY, or the arrival time), the policy key, and the policy's settings."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.errors import QueryAnalysisError
from asaql.plan.nodes import AssignArrivalTime, PlanNode
from asaql.plan.policy import EventOrderingPolicy
from asaql.runtime import columns as C
from asaql.runtime.policy import PolicySettings
from asaql.spark.expressions import Scope, lower_expr

# Without TIMESTAMP BY, System.Timestamp is the arrival time and ASA ignores the tolerances;
# with windows the step still needs a clock: the arrival time, never adjusted by the policy
# (an out-of-order tolerance longer than any input), only by the watermark floor.
ARRIVAL_POLICY = PolicySettings(late_us=0, ooo_us=2**62, early_us=None, drop=False)


def policy_settings(source: PlanNode) -> PolicySettings:
    if isinstance(source, AssignArrivalTime):
        return ARRIVAL_POLICY
    policy: EventOrderingPolicy = source.policy
    return PolicySettings(policy.late_us, policy.ooo_us, policy.early_us, policy.action == "drop")


def record_json(schema: T.StructType) -> Column:
    """The input record as ASA hands it to TopOne() and Collect(): every payload field."""
    return F.to_json(F.struct(*[F.col(f"`{f.name}`") for f in schema.fields]))


def stamp_events(events: DataFrame, source: PlanNode, scope: Scope) -> DataFrame:
    """Adds EVENT_TIME (the TIMESTAMP BY value, or the arrival time) and KEY (the policy key as
    text); an unusable time makes the row malformed."""
    if isinstance(source, AssignArrivalTime):
        return events.select("*", F.col(C.ARRIVAL).alias(C.EVENT_TIME),
                             F.col(C.PARTITION).cast("string").alias(C.KEY))
    value = lower_expr(source.event_time, scope)
    value_type = events.select(value).schema.fields[0].dataType
    if isinstance(value_type, (T.TimestampType, T.TimestampNTZType)):
        event_time = value.cast("timestamp")
    elif isinstance(value_type, (T.StringType, T.NullType)):
        event_time = F.try_to_timestamp(value.cast("string"))
    else:
        raise QueryAnalysisError(
            f"TIMESTAMP BY needs a datetime, but this expression gives {value_type.simpleString()}",
            getattr(source.event_time, "span", None))
    problem = (F.when(F.col(C.CONTROL).isNotNull(), F.lit(None))
               .when(value.isNull(), F.lit("the TIMESTAMP BY value is NULL"))
               .when(event_time.isNull(), F.concat(F.lit("the TIMESTAMP BY value '"),
                                                   value.cast("string"),
                                                   F.lit("' is not a datetime"))))
    if source.substream:
        key = F.to_json(F.array(*[lower_expr(e, scope).cast("string") for e in source.substream]))
    else:
        key = F.col(C.PARTITION).cast("string")
    payload = F.to_json(F.struct(*[F.col(f"`{c}`") for c in events.columns if c not in C.INTERNAL]))
    return events.select(
        *[F.col(f"`{c}`") for c in events.columns if c not in (C.ERROR, C.RAW)],
        F.coalesce(F.col(C.ERROR), problem).alias(C.ERROR),
        F.coalesce(F.col(C.RAW), F.when(problem.isNotNull(), payload)).alias(C.RAW),
        event_time.alias(C.EVENT_TIME),
        key.alias(C.KEY),
    )
