"""`asaql check`: every error of a query at once, without Spark.

Syntax errors first (asaql/syntax/recovery.py parses again past each broken statement), then
the analysis of every statement that parses (one error per statement: the first rule it
breaks), then, when sample inputs are given, the inputs and the columns the query reads
against the samples' fields. Each error has a position and, where one is close, a
"did you mean". The report also lists the query's inputs, outputs and functions, as ASA's
compile-query API does.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass, field

from asaql.analysis.analyzer import analyze
from asaql.analysis.bound import AliasField, Field
from asaql.analysis.joins import StreamJoin
from asaql.analysis.laterals import ReferenceJoin
from asaql.analysis.sample_schema import has_path, sample_fields
from asaql.analysis.stages import is_stage
from asaql.core.fields import child_names
from asaql.analysis.tables import declared_schemas
from asaql.compiler.diagnostics import Diagnostic, position
from asaql.compiler.names import name_findings, sources, walk
from asaql.compiler.type_findings import type_findings
from asaql.errors import AsaqlError
from asaql.compiler.gc_pause import paused_gc
from asaql.plan.planner import plan_statements
from asaql.plan.policy import EventOrderingPolicy
from asaql.syntax import ast
from asaql.syntax.recovery import parse_all


@dataclass
class Report:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    inputs: tuple[str, ...] = ()
    outputs: tuple[str, ...] = ()
    functions: tuple[str, ...] = ()
    statements: int = 0

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning"]

    def as_json(self) -> dict:
        """The shape of ASA's compile-query result."""
        return {"errors": [d.as_json() for d in self.errors],
                "warnings": [d.as_json()["message"] for d in self.warnings],
                "inputs": list(self.inputs), "outputs": list(self.outputs),
                "functions": list(self.functions)}


def check_query(text: str, samples: dict[str, str] | None = None,
                references: dict[str, str | None] | None = None) -> Report:
    """`samples`: input alias → a JSON-lines file or folder whose events give the input's
    fields; `references`: reference data alias → its file (or None)."""
    with paused_gc():  # why: asaql/compiler/gc_pause.py
        return _check(text, samples, references)


def _check(text: str, samples: dict[str, str] | None,
           references: dict[str, str | None] | None) -> Report:
    samples = dict(samples or {})
    references = references or {}
    report = Report()
    tree, syntax_errors = parse_all(text)
    report.diagnostics += [Diagnostic.of(e) for e in syntax_errors]
    if tree is None:
        return report
    errors: list[AsaqlError] = []
    statements = analyze(tree, tuple(references), errors=errors)
    try:
        declared_schemas(tree)
    except AsaqlError as error:
        errors.append(error)
    report.diagnostics += [Diagnostic.of(e) for e in errors]
    report.functions = _functions(tree, text)
    if statements:
        plan = plan_statements(statements, EventOrderingPolicy())
        report.inputs, report.outputs = plan.input_names, plan.output_names
        report.statements = len(statements)
    named = [alias for alias in (*samples, *references) if alias]
    # a sample given, even unnamed, stands for a run's input: as in `run`, a misspelled step
    # is an error there
    names = name_findings(tree, named if named else None, strict=bool(samples))
    report.diagnostics += names
    flagged = {d.span for d in names}
    if "" in samples:  # `--input PATH` alone: the query's one input (never a misspelled step)
        path = samples.pop("")
        steps = {step.name.key for step in tree.steps}
        read = tuple(dict.fromkeys(s.name.name for s in sources(tree) if s.name.key not in steps
                                   and s.name.span not in flagged
                                   and s.name.key not in {r.lower() for r in references}))
        if len(read) == 1:
            samples[read[0]] = path
        else:
            report.diagnostics.append(Diagnostic(
                "warning", f"the sample {path} is not checked: the query reads "
                f"{len(read)} inputs, name it with --input ALIAS=PATH"))
    known = {**samples, **{a: p for a, p in references.items() if p}}
    report.diagnostics += _unsampled(tree, samples, references, flagged)
    fields = {alias: (path, sample_fields(path)) for alias, path in known.items()}
    report.diagnostics += field_findings(statements, fields)
    report.diagnostics.sort(key=lambda d: (d.severity != "error", position(d)))
    return report


# A job function's name starts with one of these (an identifier, bracketed or not: the text
# holds its letters as they are)
_JOB_FUNCTION_PREFIX = re.compile("ud[fa]", re.IGNORECASE)


def _functions(tree: ast.Query, text: str) -> tuple[str, ...]:
    """The job functions the query calls (UDF., UDA. and the like), as ASA's compile-query
    API lists them; built-in functions are not listed."""
    if not _JOB_FUNCTION_PREFIX.search(text):  # no call can be one: spare the walk of the tree
        return ()
    names = {}
    for node in walk(tree):
        if isinstance(node, ast.FunctionCall) and "." in node.name.name:
            prefix, _, name = node.name.name.partition(".")
            if prefix.lower() in ("udf", "uda"):
                names.setdefault(node.name.name.lower(), name)
    return tuple(names.values())


def _unsampled(tree: ast.Query, samples: dict, references: dict, flagged: set) -> list[Diagnostic]:
    """With sample inputs given: an input read that has no sample (and is no misspelling,
    which name_findings reports) is left unchecked."""
    if not samples:
        return []
    steps = {step.name.key for step in tree.steps}
    given = {a.lower() for a in (*samples, *references)}
    out, seen = [], set()
    for source in sources(tree):
        key = source.name.key
        if key in steps or key in given or key in seen or source.name.span in flagged:
            continue
        seen.add(key)
        out.append(Diagnostic("warning", f"no sample for the input '{source.name.name}': "
                              "its columns are not checked", source.name.span,
                              f"--input {source.name.name}=PATH gives one"))
    return out


def field_findings(statements, fields: dict) -> list[Diagnostic]:
    """A warning for each field a statement reads from an input that no event of the input
    has, with the closest field; then text compared with or added to a number
    (asaql/compiler/type_findings.py). `fields`: input alias → (where its events are, their Sample
    or None when unknown): a sample's (check) or the run's schema (run)."""
    fields = {alias.lower(): found for alias, found in fields.items()}
    out: dict[tuple, Diagnostic] = {}
    for statement in statements:
        stamps = {id(node) for node in walk((statement.timestamp_by, [
            getattr(j, "timestamp_by", None) for j in statement.laterals]))}
        for node, source in _fields_read(statement):
            where, sample = fields.get(source.lower(), (None, None))
            if sample is None or has_path(sample.fields, node.path) or node.span is None \
                    or getattr(node, "text_if_missing", None) is not None:
                continue
            key = (node.span, tuple(node.path))
            if key not in out:
                close = difflib.get_close_matches(node.path[0].lower(), sorted(sample.names), n=1)
                hint = f"did you mean '{sample.names[close[0]]}'?" if close else None
                what = "TIMESTAMP BY it sets every event aside" if id(node) in stamps \
                    else "it reads as NULL"
                out[key] = Diagnostic(
                    "warning", f"no event of '{source}' ({where}) has a field "
                    f"'{'.'.join(node.path)}': {what}", node.span, hint)
    return list(out.values()) + type_findings(statements, _fields_read, fields)


def _fields_read(statement):
    """(Field or AliasField, the input it reads) for every field reference of a statement:
    Fields read the statement's input, AliasFields a joined input; a JOIN's own TIMESTAMP BY
    and OVER read the joined input."""
    own = None if statement.stage_input or is_stage(statement.input_name) \
        else statement.input_name
    joined = {j.alias: j.input_name for j in statement.laterals
              if isinstance(j, (StreamJoin, ReferenceJoin)) and not getattr(j, "stage_input", False)}
    parts = [getattr(statement, f.name) for f in dataclasses.fields(statement)
             if f.name not in ("laterals", "span")]
    for lateral in statement.laterals:
        if isinstance(lateral, StreamJoin):
            for node in walk((lateral.timestamp_by, lateral.over)):
                if isinstance(node, Field) and lateral.alias in joined:
                    yield node, joined[lateral.alias]
            parts.append((lateral.keys, lateral.residual))
        else:
            parts.append(lateral)
    for node in walk(parts):
        if isinstance(node, Field) and own is not None:
            yield node, own
        elif isinstance(node, AliasField) and node.alias in joined:
            yield node, joined[node.alias]
