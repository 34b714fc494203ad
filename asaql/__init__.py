"""asaql: the Azure Stream Analytics query language on Apache Spark Structured Streaming.

`asaql.compile(text, late=…, ooo=…)` compiles a query without Spark; its `to_dataframes`
embeds the plan in a PySpark job, its `run` runs it as `asaql run` does (asaql/api.py).
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# The API's names, loaded on first use (PEP 562): Spark's Python workers import asaql's
# modules they run (a topic's reader, the general step), and loading the compiler with the
# package cost each worker 0.2 s.
_API = {"Query": "asaql.api", "compile": "asaql.api", "topic": "asaql.api",
        "CompiledQuery": "asaql.compiler.pipeline", "compile_query": "asaql.compiler.pipeline",
        "EventOrderingPolicy": "asaql.plan.policy"}

__all__ = ["CompiledQuery", "EventOrderingPolicy", "Query", "compile", "compile_query", "topic",
           "__version__"]


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'asaql' has no attribute {name!r}")
    return getattr(importlib.import_module(_API[name]), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
