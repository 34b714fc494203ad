"""Text → AST → bound statements → logical plan. No Spark: `asaql check` stays fast."""

from __future__ import annotations

from dataclasses import dataclass, replace

from asaql.analysis.analyzer import analyze
from asaql.analysis.statements import BoundStatement
from asaql.analysis.tables import declared_schemas
from asaql.compiler.gc_pause import paused_gc
from asaql.compiler.outline import query_steps
from asaql.plan.function_binding import with_functions
from asaql.plan.nodes import Plan
from asaql.plan.planner import plan_statements
from asaql.plan.policy import EventOrderingPolicy
from asaql.syntax import ast, parse


@dataclass(frozen=True)
class CompiledQuery:
    text: str
    ast: ast.Query
    statements: tuple[BoundStatement, ...]
    plan: Plan
    policy: EventOrderingPolicy

    @property
    def input_names(self) -> tuple[str, ...]:
        return self.plan.input_names

    @property
    def output_names(self) -> tuple[str, ...]:
        return self.plan.output_names

    @property
    def reference_names(self) -> tuple[str, ...]:
        return self.plan.reference_names

    def with_functions(self, functions) -> "CompiledQuery":
        """The query whose plan calls these JavaScript functions (`udf.name` / `uda.name`,
        lower case → JsFunction: `--functions`, a project's Functions/): a run's own, carried
        by its plan to the backend (asaql/plan/function_binding.py)."""
        return replace(self, plan=with_functions(self.plan, functions))


def compile_query(text: str, policy: EventOrderingPolicy | None = None,
                  references=()) -> CompiledQuery:
    """`references`: the input names that are reference data (static tables, joined without
    DATEDIFF); every other input is a stream."""
    policy = policy or EventOrderingPolicy()
    with paused_gc():  # why: asaql/compiler/gc_pause.py
        tree = parse(text)
        statements = analyze(tree, references)
        plan = replace(plan_statements(statements, policy, declared_schemas(tree)),
                       steps=query_steps(tree, text))
        return CompiledQuery(text, tree, statements, plan, policy)
