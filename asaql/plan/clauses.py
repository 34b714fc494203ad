"""What plan operators carry besides expressions: the output columns of a Project, the joins
and APPLY of a statement. Plain frozen values over plan expressions (asaql/plan/expressions.py),
built by the planner from the analysis' objects of the same names."""

from __future__ import annotations

from dataclasses import dataclass

@dataclass(frozen=True, slots=True, kw_only=True)
class OutputColumn:
    name: str
    expr: object


@dataclass(frozen=True, slots=True, kw_only=True)
class AllFields:
    """`*` or `alias.*`: every field of the input record, in input order; with `alias`, every
    field of that joined row. `hidden`: fields asaql added to a stage's rows, which `*` leaves
    out. `record`: `x.y.*`, the fields of that record-valued expression."""

    alias: str | None = None
    hidden: tuple[str, ...] = ()
    record: object = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StreamJoin:
    """A JOIN of two streams: pairs of a left event and one of `input_name` (right) with
    lower_us ≤ ts(right) − ts(left) ≤ upper_us, equal `keys` (left, right expression) and
    `residual` true. With LEFT, a left event without a pair comes out once with NULLs, at
    ts(left) + upper_us. `stage_input`: the right side is a stage."""

    alias: str
    input_name: str
    left: bool
    timestamp_by: object | None
    over: tuple
    partition_by_partition_id: bool
    keys: tuple[tuple[object, object], ...]
    lower_us: int
    upper_us: int
    residual: object | None
    stage_input: bool = False
    # JOIN after JOIN: the alias of the stream joined before whose time the bound relates
    # (None: the SELECT's input); `lower_us`/`upper_us` are then from its time
    anchor: str | None = None
    # DATEDIFFs relating the new input with other inputs before it: (alias or None, lower µs or
    # None, upper µs or None), tested after the step
    other_bounds: tuple = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ReferenceJoin:
    """`[LEFT] JOIN <reference input> AS alias ON …`: `keys` the equalities between an
    expression of the event and one of the reference row (looked up by value), `residual` the
    rest of the condition, tested on each candidate."""

    alias: str
    input_name: str
    left: bool
    keys: tuple[tuple[object, object], ...]
    residual: object | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyElements:
    """`CROSS|OUTER APPLY GetArrayElements(expr) AS alias` (its elements' fields
    `element_fields`: ArrayIndex, ArrayValue) or `GetRecordProperties(expr)` (PropertyName,
    PropertyValue)."""

    alias: str
    function: str
    argument: object
    outer: bool
    element_fields: tuple[str, str] = ()
