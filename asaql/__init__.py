"""asaql: the Azure Stream Analytics query language on Apache Spark Structured Streaming.

`asaql.compile(text, late=…, ooo=…)` compiles a query without Spark; its `to_dataframes`
embeds the plan in a PySpark job, its `run` runs it as `asaql run` does (asaql/api.py).
"""

__version__ = "0.1.0"

from asaql.api import Query, compile, topic  # noqa: E402,A004
from asaql.compiler.pipeline import CompiledQuery, compile_query  # noqa: E402
from asaql.plan.policy import EventOrderingPolicy  # noqa: E402

__all__ = ["CompiledQuery", "EventOrderingPolicy", "Query", "compile", "compile_query", "topic",
           "__version__"]
