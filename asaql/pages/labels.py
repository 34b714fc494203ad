"""How the pages name what the run's numbers are keyed by: a streaming query (`input:0`), a
partition or substream of its watermarks (`0`, `left/0`, `["device-02","1"]`), a topic
partition of its lag (`iot/3`). Made here, from the plan, so the page shows "partition 1 ·
device-02" and never has to parse the keys itself.
"""

from __future__ import annotations

import json

from asaql.plan.nodes import ApplyEventOrdering, Plan, PlanNode
from asaql.plan.printer import expression_text

PARTITION_COLUMN = "partitionid"


def over_columns(plan: Plan) -> dict[str, tuple[str, ...]]:
    """Lower-case input alias → its `TIMESTAMP BY … OVER` expressions, as written: what each
    value of a substream key is."""
    found: dict[str, tuple[str, ...]] = {}

    def visit(node: PlanNode) -> None:
        if isinstance(node, ApplyEventOrdering) and node.substream:
            found[node.input.alias.lower()] = tuple(expression_text(e) for e in node.substream)
        for child in node.children:
            visit(child)

    for write in plan.outputs:
        visit(write)
    return found


def query_inputs(label: str) -> list[str]:
    """The inputs of a streaming query, from its label (`EntryStream+ExitStream:0`)."""
    return label.rpartition(":")[0].split("+") if ":" in label else [label]


def query_names(queries, outputs: dict | None = None) -> dict[str, str]:
    """Query label → the inputs it reads, as a user names them (`EntryStream + ExitStream`);
    two queries of the same inputs are told apart by what they write (`→ missing`), else by
    their number."""
    names = {q: " + ".join(dict.fromkeys(query_inputs(q))) for q in queries}
    repeated = {n for n in names.values() if list(names.values()).count(n) > 1}
    return {q: f"{n} ({whose(q, outputs)})" if n in repeated else n for q, n in names.items()}


def whose(query: str, outputs: dict | None = None) -> str:
    """A query by the outputs (or steps) it writes, else its number."""
    written = sorted((outputs or {}).get(query) or ())
    return "→ " + ", ".join(written) if written else f"query {query.rpartition(':')[2]}"


def key_label(query: str, key: str, over: dict[str, tuple[str, ...]]) -> str:
    """A watermark's key as words: `0` → `partition 0`; a join side's `right/0` → `ExitStream ·
    partition 0`; a substream `["device-02","1"]` OVER deviceId, PartitionId → `partition 1 ·
    device-02` (the partition first: it is where the events come from)."""
    inputs = query_inputs(query)
    side, slash, inner = key.partition("/")
    alias = inputs[0]
    prefix = ""
    if slash and side.startswith(("left", "right")):  # a join's side (runtime/join.side_name)
        number = 0 if side == "left" else int(side[5:] or 1)
        alias = inputs[number] if number < len(inputs) else side
        prefix, key = f"{alias} · ", inner
    if not key.startswith("["):
        return f"{prefix}partition {key}"
    try:
        values = json.loads(key)
    except ValueError:
        return prefix + key
    names = over.get(alias.lower(), ())
    parts = [None if v is None else str(v) for v in values]
    first = [f"partition {v}" for n, v in zip(names, parts)
             if n.rpartition(".")[2].lower() == PARTITION_COLUMN]
    rest = [("NULL" if v is None else v) for n, v in zip((*names, *[""] * len(parts)), parts)
            if n.rpartition(".")[2].lower() != PARTITION_COLUMN]
    return prefix + " · ".join(first + rest)


def topic_label(key: str) -> str:
    """A topic partition of the lag chart: `iot/3` → `iot · partition 3`."""
    topic, slash, partition = key.rpartition("/")
    return f"{topic} · partition {partition}" if slash else key
