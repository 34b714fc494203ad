"""Which of a record's parts beyond its value a plan reads through GetMetadataPropertyValue: the
Kafka source decodes a message's key and headers only for a query that asks (the common path
stays as fast)."""

from __future__ import annotations

import dataclasses

from asaql.core.metadata import user_property_name
from asaql.plan import expressions as E


def carried_metadata(plan) -> tuple[str, ...]:
    """("key",) for 'PartitionKey', ("headers",) for a '[User].[name]', both, or ()."""
    wanted = set()
    for prop in _metadata_properties(plan, set()):
        if prop == "PartitionKey":
            wanted.add("key")
        elif user_property_name(prop) is not None:
            wanted.add("headers")
    return tuple(sorted(wanted))


def _metadata_properties(node, seen: set) -> list[str]:
    found = []
    stack = [node]
    while stack:
        value = stack.pop()
        if isinstance(value, (tuple, list)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            if id(value) in seen:
                continue
            seen.add(id(value))
            if isinstance(value, E.FunctionCall) and value.metadata_property:
                found.append(value.metadata_property)
            stack.extend(getattr(value, f.name) for f in dataclasses.fields(value))
    return found
