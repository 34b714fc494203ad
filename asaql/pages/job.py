"""A query's job graph as every picture of it draws it: the plan's operators, each with the
engine or step that runs it, as `asaql explain` says them."""

from __future__ import annotations

from asaql.plan.explain import JVM_READER, running_steps
from asaql.plan.job_graph import JobGraph, job_graph


def engine_reader(engine: str) -> str:
    """Who would read the records (`--engine`), as far as it is known without a session: the
    JVM engine, or the Python steps and why."""
    from asaql.jvm.engine import engine_problem_without_spark

    problem = engine_problem_without_spark(engine)
    return JVM_READER if problem is None else f"python steps: {problem}"


def job_graph_of(plan, reader: str, places: dict[str, str] | None = None) -> JobGraph:
    """`reader`: engine_reader's answer; `places`: an alias → where it is."""
    return job_graph(plan, running_steps(plan, reader), places)
