"""Which job functions a compiled query calls, and the check that `run` has them all: the
application side (it reads the query's syntax tree), apart from asaql/javascript/, which the
Spark backend and the runtime use."""

from __future__ import annotations

from dataclasses import fields

from asaql.errors import ConfigurationError
from asaql.javascript.definitions import JsFunction
from asaql.syntax import ast


def called_functions(compiled) -> dict[str, str]:
    """`udf.name` / `uda.name` (lower case) → the spelling the query uses, for every job
    function a compiled query calls."""
    names: dict[str, str] = {}

    def visit(node):
        if isinstance(node, ast.FunctionCall) and node.name.name.lower().startswith(
                ("udf.", "uda.")):
            names.setdefault(node.name.name.lower(), node.name.name)
        if isinstance(node, ast.Node):
            for item in fields(node):
                visit(getattr(node, item.name))
        elif isinstance(node, tuple):
            for item in node:
                visit(item)

    visit(compiled.ast)
    return names


def require_functions(compiled, functions: dict[str, JsFunction]) -> None:
    """Nothing runs without its functions: the first one the query calls and the user did not
    give is an error naming it and the option."""
    for key, spelled in called_functions(compiled).items():
        if key not in functions:
            other = ("udf." if key.startswith("uda.") else "uda.") + key[4:]
            hint = ""
            if other in functions:
                hint = (f" ({functions[other].path} defines it as "
                        f"{'an aggregate' if functions[other].aggregate else 'a scalar function'})")
            raise ConfigurationError(
                f"the query calls {spelled}(), which no function file defines{hint}: give the "
                "folder of NAME.js and NAME.js.json files with --functions DIR (an ASA "
                "project's Functions/)")
