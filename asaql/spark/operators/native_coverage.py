"""What the native step (native_step.py) covers of a built step that the plan cannot know, and
which sums it adds exactly."""

from __future__ import annotations

from pyspark.sql import types as T

from asaql.runtime.step import StepSpec


def native_reason(spec: StepSpec, types: dict, exact_sums: bool = False) -> str | None:
    """What only the built step knows and the plan does not (asaql/plan/step_path.py decides
    the rest; `types`: the step input's Spark types): a CAST in a windowed statement that can
    fail sets events aside as FAILED rows, which only the general step writes; and a sum of
    floating-point values added term by term depends on the order of its terms, which Spark's
    merge of partial sums does not fix: SUM and AVG of them take this path only with the JVM
    engine's exact sums (`exact_sums`: ExactSum.scala, the same value as the general step's
    asaql/runtime/exact_sum.py whatever the order)."""
    if any(statement.failure is not None for statement in spec.statements):
        return "a CAST or a JavaScript UDF that can fail in a windowed statement"
    for statement in spec.statements:
        for aggregate in statement.aggregates:
            if aggregate.function not in ("sum", "avg"):
                continue
            kind = types.get(aggregate.column)
            if isinstance(kind, T.IntegralType):
                continue
            if not isinstance(kind, T.FractionalType) or isinstance(kind, T.DecimalType):
                return f"{aggregate.function.upper()} of {kind.simpleString() if kind else 'text'}"
            if not exact_sums:
                return (f"{aggregate.function.upper()} of floating-point values without the "
                        "JVM engine's exact sums")
    return None


def floating_columns(spec: StepSpec, types: dict) -> frozenset:
    """The columns SUM and AVG read that hold floating-point values (summed exactly)."""
    return frozenset(a.column for s in spec.statements for a in s.aggregates
                     if a.function in ("sum", "avg")
                     and isinstance(types.get(a.column), T.FractionalType))
