"""A run's JavaScript functions in its plan: each `udf.NAME` / `uda.NAME` call gets the
function of that name (asaql/javascript/definitions.py), so the backend, which reads only the
plan, lowers it without any registry. A query is compiled once and may run with other function
files (`asaql run --functions`, the API's `functions=`): the functions come with the run, and
two runs in one process each carry their own plan."""

from __future__ import annotations

from collections.abc import Mapping

from asaql.core.fields import field_names, replace
from asaql.plan.expressions import AggregateCall, FunctionCall
from asaql.plan.nodes import Plan


def call_key(call) -> str | None:
    """`udf.name` / `uda.name` (lower case) for a call of a job function, else None."""
    if isinstance(call, FunctionCall) and call.name.name.lower().startswith("udf."):
        return call.name.name.lower()
    if isinstance(call, AggregateCall) and call.function.lower().startswith("uda."):
        return call.function.lower()
    return None


def with_functions(plan: Plan, functions: Mapping[str, object]) -> Plan:
    """`plan` with every job function call holding its function from `functions` (`udf.name`
    / `uda.name`, lower case → JsFunction), or None when `functions` has none of that name
    (the backend refuses that call at its position). What holds no such call stays the same
    object, so an operator shared by two outputs stays shared."""
    rebuilt: dict[int, object] = {}  # id → its rebuilt value: a shared node is rebuilt once

    def rebuild(value):
        if isinstance(value, tuple):
            new = tuple(rebuild(item) for item in value)
            return value if all(a is b for a, b in zip(new, value)) else new
        names = field_names(type(value))
        if names is None:  # a plain value
            return value
        if id(value) in rebuilt:
            return rebuilt[id(value)]
        changes = {}
        for name in names:
            old = getattr(value, name)
            new = rebuild(old)
            if new is not old:
                changes[name] = new
        key = call_key(value)
        if key is not None and functions.get(key) is not value.job_function:
            changes["job_function"] = functions.get(key)
        result = replace(value, **changes) if changes else value
        rebuilt[id(value)] = result
        return result

    return rebuild(plan)
