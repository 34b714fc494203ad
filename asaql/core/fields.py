"""The field names of a dataclass, looked up once per class: the walks over the AST, the bound
statements and the plan visit millions of nodes on a large query, and dataclasses.fields()
builds its answer anew on every call (834,000 calls, ~0.6 s, on the dense 1 MB query of
benchmarks/check_speed.py)."""

from __future__ import annotations

import dataclasses
from functools import cache


@cache
def field_names(cls: type) -> tuple[str, ...] | None:
    """The names of the fields of dataclass `cls`, in order; None when `cls` is not one."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


@cache
def child_names(cls: type) -> tuple[str, ...] | None:
    """field_names(cls) without `span`: the fields that may hold nodes below a node."""
    names = field_names(cls)
    return None if names is None else tuple(name for name in names if name != "span")


@cache
def _init_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.init)


def replace(node, /, **changes):
    """dataclasses.replace(node, **changes) for dataclasses without InitVar fields, with the
    field names looked up once per class: the analysis rebuilds ~40,000 nodes on the dense
    1 MB query, and dataclasses.replace spent a fifth of the analysis' time on it."""
    values = {name: getattr(node, name) for name in _init_names(type(node))}
    values.update(changes)
    return type(node)(**values)
