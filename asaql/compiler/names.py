"""The names a query reads in FROM and JOIN, against its steps and the inputs a run is given:
a name one letter from a step is a misspelled step, not an input to bind a file to; a step
nothing reads is a step the user meant to read. `check` and `run` both report these."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterator

from asaql.compiler.diagnostics import Diagnostic
from asaql.core.fields import child_names
from asaql.syntax import ast

# A name is taken for a misspelling of another when at most this many letters differ: real
# queries name an input after the step that reads it (`adfActivityRuns` read by the step
# `activityRuns`, `TestDeviceData` by `DeviceData`): three letters or more apart.
TYPOS = 2


def sources(tree: ast.Query) -> Iterator[ast.InputSource]:
    """Every FROM and JOIN source of the query, its steps' included, in the text's order."""
    for node in walk(tree):
        if isinstance(node, ast.InputSource):
            yield node


def name_findings(tree: ast.Query, given: Collection[str] | None,
                  strict: bool = False) -> list[Diagnostic]:
    """`given`: the input and reference aliases the run or check names (None: not known).
    A source that is no step and no given input, close to a step's name (or, inputs known, to
    an input's), is an error; a warning when the inputs are not known, unless `strict` (a run:
    every input it reads is one it binds, never a misspelled step). Then a warning per step
    that no FROM or JOIN reads."""
    steps = {step.name.key: step.name.name for step in tree.steps}
    named = {alias.lower(): alias for alias in given} if given is not None else {}
    found, seen = [], set()
    for source in sources(tree):
        key = source.name.key
        if key in steps or key in named or key in seen:
            continue
        seen.add(key)
        hint = _closest(key, steps, "step") or _closest(key, named, "input")
        if hint is None:
            continue
        bound = given is not None or strict
        message = f"'{source.name.name}' is not a step or an input of this run" if bound \
            else f"'{source.name.name}' is not a step: it is read as an input"
        found.append(Diagnostic("error" if bound else "warning", message, source.name.span,
                                hint))
    read = {source.name.key for source in sources(tree)}
    for step in tree.steps:
        if step.name.key not in read:
            found.append(Diagnostic(
                "warning", f"the step '{step.name.name}' is never read: no FROM or JOIN names "
                "it, so its rows go nowhere", step.name.span,
                "read it in a FROM, or remove the step"))
    return found


def _closest(key: str, names: dict[str, str], kind: str) -> str | None:
    close = [name for name in difflib.get_close_matches(key, list(names), n=3, cutoff=0.5)
             if _letters_apart(key, name) <= TYPOS]
    return f"did you mean the {kind} '{names[close[0]]}'?" if close else None


def _letters_apart(one: str, other: str) -> int:
    """The letters changed, added or removed from one name to the other (difflib's edits)."""
    edits = difflib.SequenceMatcher(None, one, other, autojunk=False).get_opcodes()
    return sum(max(i2 - i1, j2 - j1) for op, i1, i2, j1, j2 in edits if op != "equal")


def walk(node):
    """Every dataclass node below `node` (AST, bound expressions, statements)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (list, tuple)):
            stack.extend(reversed(item))
            continue
        names = child_names(type(item))
        if names is not None:
            yield item
            for name in reversed(names):
                value = getattr(item, name)
                if value is not None and not isinstance(value, str):  # never a node: skip
                    stack.append(value)
