"""The per-class field names (asaql/core/fields.py) that the walks over the AST, the bound
statements and the plan use instead of dataclasses.fields(), and its faster replace."""

from __future__ import annotations

import dataclasses

import pytest

from asaql.analysis import bound
from asaql.core.fields import child_names, field_names, replace
from asaql.errors import Span
from asaql.syntax import ast
from asaql.syntax.parser import parse


def test_field_names_are_dataclasses_fields_in_order_and_none_for_other_classes():
    assert field_names(ast.BinaryOp) == tuple(f.name for f in dataclasses.fields(ast.BinaryOp))
    assert child_names(ast.BinaryOp) == tuple(
        f.name for f in dataclasses.fields(ast.BinaryOp) if f.name != "span")
    assert field_names(str) is None and child_names(tuple) is None


def test_replace_is_dataclasses_replace():
    node = ast.BinaryOp(op="+", left=ast.Literal(value=1, kind="int"),
                        right=ast.Literal(value=2, kind="int"), span=Span.point(1, 1))
    ours = replace(node, op="-")
    theirs = dataclasses.replace(node, op="-")
    assert ours == theirs and ours.span == theirs.span and ours is not node
    assert node.op == "+"


def test_every_node_of_a_query_is_reached_by_its_child_fields():
    """bound.walk (over children()) and a walk over dataclasses.fields() visit the same nodes
    in the same order."""
    query = parse("SELECT a, CASE WHEN b > 1 THEN c ELSE -d END AS e INTO o FROM i "
                  "WHERE f IN (1, 2) AND g LIKE 'x%' AND h BETWEEN 1 AND 2")
    expression = query.statements[0].where

    def by_dataclasses_fields(node):
        yield node
        for f in dataclasses.fields(node):
            value = getattr(node, f.name)
            for child in value if isinstance(value, tuple) else (value,):
                if isinstance(child, ast.Node) and f.name != "span":
                    yield from by_dataclasses_fields(child)

    assert list(bound.walk(expression)) == list(by_dataclasses_fields(expression))
    assert len(list(bound.walk(expression))) > 10


@pytest.mark.parametrize("cls", [ast.Query, ast.SelectStatement, ast.FunctionCall, bound.Field])
def test_node_classes_have_only_init_fields(cls):
    """replace() rebuilds a node from its init fields: a field computed in __post_init__
    would need dataclasses.replace."""
    assert all(f.init for f in dataclasses.fields(cls))
