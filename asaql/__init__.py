"""asaql: the Azure Stream Analytics query language on Apache Spark Structured Streaming."""

__version__ = "0.1.0"

from asaql.compiler import CompiledQuery, compile_query  # noqa: E402
from asaql.plan.policy import EventOrderingPolicy  # noqa: E402

__all__ = ["CompiledQuery", "EventOrderingPolicy", "compile_query", "__version__"]
