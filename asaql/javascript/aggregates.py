"""A JavaScript UDA over the windows of the general step (asaql/runtime/step.py keeps each
window's events and computes its aggregates from them): per window, in event order,
`init()`, `accumulate(value, timestamp)` for each event, `computeResult()` — every window of
the batch in one engine call. The step recomputes a window from its events, so
`deaccumulate` and `deaccumulateState` (ASA's shortcut for sliding windows) are not needed: the
result is the one they would give. A UDA that throws stops the run with the reason, as ASA
stops the job: a window's result has no one event to set aside. No pyspark."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from asaql.javascript.engine import DATE_TAG, JavaScriptError, engine_for, time_limit
from asaql.javascript.values import as_output

EVENT_ORDER = ("ts", "arrival", "file", "line")  # = asaql.runtime.aggregates.EVENT_ORDER


def _millis(column: pd.Series) -> np.ndarray:
    if pd.api.types.is_datetime64_any_dtype(column):
        return (column.astype("int64") // 1_000_000).to_numpy()  # ns → ms
    return (pd.to_numeric(column) // 1000).to_numpy()  # microseconds → ms


def compute_uda(spec, members: pd.DataFrame, gid: np.ndarray, groups: int) -> pd.Series:
    order = np.lexsort([members[c].rank(method="dense").to_numpy() for c in EVENT_ORDER
                        if c in members][::-1] + [gid])
    values = members[spec.json_column].to_numpy()[order]  # "[value]": to_json of one element
    stamps = _millis(members["ts"])[order]
    tag = json.dumps(DATE_TAG)  # escaped: JSON text holds no raw control character
    events: list[list[str]] = [[] for _ in range(groups)]
    for group, value, stamp in zip(gid[order], values, stamps):
        inner = value[1:-1] if isinstance(value, str) and len(value) > 2 else "null"
        events[group].append(f'[{inner},{{{tag}:{int(stamp)}}}]')
    text = "[" + ",".join("[" + ",".join(e) + "]" for e in events) + "]"
    engine = engine_for(spec.function, spec.script, time_limit())
    out = []
    for result in engine.aggregate_groups(text, groups):
        value, wrong = as_output(result, spec.output_type)
        if wrong is not None:
            raise JavaScriptError(f"{spec.function} {wrong}")
        out.append(value)
    return pd.Series(out, dtype=object)
