"""The plan is the whole contract between the front end and a backend: every value a plan
holds, however deep, is a plan node, a plan expression or clause, a shared core value or a
plain value — never a syntax tree node or an analysis object (docs/design.md, "Layers")."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from asaql.compiler.pipeline import compile_query
from asaql.testing import golden

ROOT = Path(__file__).resolve().parents[2]
CASES = [case for folder in golden.discover(ROOT / "tests" / "golden" / "cases")
         + golden.discover(ROOT / "samples")
         if golden.compile_error(case := golden.load_case(folder)) is None]
ALLOWED = ("asaql.plan.", "asaql.core.", "asaql.errors")
PLAIN = (str, int, float, bool, type(None))


def _foreign_values(value, path: str = "plan"):
    """(path, type name) of every value below `value` that is not the plan's own."""
    if isinstance(value, PLAIN):
        return
    if isinstance(value, tuple):
        for i, item in enumerate(value):
            yield from _foreign_values(item, f"{path}[{i}]")
        return
    module = type(value).__module__
    if not module.startswith(ALLOWED) or not dataclasses.is_dataclass(value):
        yield path, f"{module}.{type(value).__name__}"
        return
    if module == "asaql.errors":  # a Span: positions for messages
        return
    for f in dataclasses.fields(value):
        yield from _foreign_values(getattr(value, f.name), f"{path}.{f.name}")


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.folder.parent.name}/{c.folder.name}")
def test_the_plan_holds_only_plan_values(case):
    compiled = compile_query(case.query, case.policy(), tuple(case.references))
    foreign = list(_foreign_values(compiled.plan))
    assert not foreign, foreign[:5]


def test_the_check_sees_a_foreign_value():
    from asaql.syntax import ast
    plan = compile_query("SELECT x FROM i").plan
    smuggled = dataclasses.replace(plan.outputs[0], input=ast.Literal(value=1, kind="bigint"))
    assert list(_foreign_values(dataclasses.replace(plan, outputs=(smuggled,))))
