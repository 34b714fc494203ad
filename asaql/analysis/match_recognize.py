"""MATCH_RECOGNIZE: checks (ASA's documented form, pattern variable names, what DEFINE and
MEASURES may read) and the bound statement — an aggregation whose "window" is the pattern
(asaql/core/match_pattern.py), grouped by PARTITION BY, one result row per match.

SELECT * reads the PARTITION BY columns, then the measures. A WHERE beside the clause filters
the match rows (it reads those columns, as a SELECT over a step holding the match would); over
a WITH step, the pattern reads the step's rows (a stage, with their System.Timestamp)."""

from __future__ import annotations

import dataclasses

from asaql.analysis.binder import Binder
from asaql.core.fields import child_names
from asaql.analysis.bound import AggregateRef, GroupRef, map_children, walk
from asaql.analysis.statements import (
    DEFAULT_OUTPUT, Aggregation, BoundStatement, OutputColumn, is_partitioned,
)
from asaql.analysis.windows import MAX_WINDOW_US, duration_of
from asaql.core.match_pattern import AGGREGATES, Aggregate, Classifier, Lit, MatchPattern, Op, Read
from asaql.errors import InvalidQueryError, UnknownNameError, UnsupportedFeatureError
from asaql.syntax import ast

_OPS = {"+", "-", "*", "/", "%", "=", "<>", "<", "<=", ">", ">=", "AND", "OR"}


def bind_match_statement(s: ast.SelectStatement, binder: Binder, timestamp_by, over,
                         stage: BoundStatement | None = None) -> BoundStatement:
    """`stage`: the step the clause reads, as a stage (`binder` reads its columns)."""
    source = s.source
    match = source.match_recognize
    names = _pattern_names(match.pattern)
    fields: dict[object, tuple[int, object]] = {}

    def value(row_expression) -> int:
        """The index of a value of one row the matcher reads: a field, or a scalar function
        of the row's fields, computed for each event before the step."""
        key = tuple(p.key for p in row_expression.parts) \
            if isinstance(row_expression, ast.ColumnRef) else row_expression
        if key not in fields:
            fields[key] = (len(fields), binder.bind(row_expression, allow_system_timestamp=False,
                                                    what="MATCH_RECOGNIZE"))
        return fields[key][0]

    defines = []
    for define in match.defines:
        key = define.name.key
        if key not in names:
            raise UnknownNameError(f"DEFINE names '{define.name.name}', which PATTERN does not use",
                                   define.name.span)
        if key in dict(defines):
            raise InvalidQueryError(f"'{define.name.name}' is defined twice", define.name.span)
        defines.append((key, _Translator(names, value, key).convert(define.condition)))
    measures, types, seen, outputs = [], [], set(), []

    def matched(node):
        """A measure (or part of one) the matcher computes → its AggregateRef; a scalar function
        of such parts (`ROUND(Avg(A.v), 1)`) is computed on the match row, after the step."""
        if isinstance(node, ast.FunctionCall) and _is_scalar(node) and node.over is None \
                and not node.within_group and _reads_aggregates(node):
            binder.check_function(node)
            return dataclasses.replace(node, args=tuple(
                binder.bind(a) if isinstance(a, (ast.Literal, ast.NameArgument)) else matched(a)
                for a in node.args))
        if isinstance(node, ast.Cast) and _reads_aggregates(node):  # CAST(Avg(A.v) AS bigint)
            return dataclasses.replace(node, operand=matched(node.operand))
        if not _scalar_outside_aggregates(node) or isinstance(node, (ast.ColumnRef,
                                                                      ast.FunctionCall)):
            translated = _Translator(names, value, None).convert(node)
            name = measure.alias.name if node is measure.expr else \
                f"{measure.alias.name}#{len(measures)}"
            measures.append((name, translated))
            types.append(_type_of(translated))
            return AggregateRef(index=len(measures) - 1, span=node.span)
        return map_children(node, matched)

    for measure in match.measures:
        if measure.alias.key in seen:
            raise InvalidQueryError(f"the measure name '{measure.alias.name}' is used twice",
                                    measure.alias.span)
        seen.add(measure.alias.key)
        outputs.append(matched(measure.expr))
    partition = tuple(binder.bind(c) for c in match.partition_by)
    pattern = MatchPattern(
        duration_us=_duration(match.limit_duration), pattern=_pattern(match.pattern),
        names=tuple(names.items()), defines=tuple(defines), measures=tuple(measures),
        fields=tuple(bound for _index, bound in fields.values()), measure_types=tuple(types))
    columns = [OutputColumn(c.parts[-1].name, GroupRef(index=j, span=c.span))
               for j, c in enumerate(match.partition_by)]
    taken = {c.name.lower() for c in columns}
    for k, measure in enumerate(match.measures):
        if measure.alias.key in taken:
            raise InvalidQueryError(f"the measure name '{measure.alias.name}' is also a "
                                    "PARTITION BY column", measure.alias.span)
        columns.append(OutputColumn(measure.alias.name, outputs[k]))
    output = s.into.name if s.into is not None else DEFAULT_OUTPUT
    aggregation = Aggregation(pattern, partition, ())
    if stage is not None:
        statement = dataclasses.replace(
            stage, output=output, columns=tuple(columns), aggregation=aggregation,
            partition_by_partition_id=stage.partition_by_partition_id or is_partitioned(source),
            span=s.span)
    else:
        statement = BoundStatement(output, source.name.name, timestamp_by, over,
                                   is_partitioned(source), None, tuple(columns), aggregation,
                                   span=s.span)
    if s.where is None:
        return statement
    rows = Binder(match.alias, step=statement, step_name=match.alias.name)
    where = rows.bind(s.where, allow_system_timestamp=True, what="WHERE beside MATCH_RECOGNIZE")
    return dataclasses.replace(statement, aggregation=dataclasses.replace(aggregation,
                                                                          having=where))


def check_match_sources(s: ast.SelectStatement) -> None:
    """MATCH_RECOGNIZE reads an input's events or a step's rows, not a JOIN's."""
    for join in s.joins:
        if isinstance(join, ast.Join) and join.source.match_recognize is not None:
            raise UnsupportedFeatureError("MATCH_RECOGNIZE in a JOIN is not supported yet",
                                          join.source.match_recognize.span)


def _duration(limit: ast.FunctionCall) -> int:
    if limit.name.key != "duration" or len(limit.args) != 2 or limit.star:
        raise InvalidQueryError("expected LIMIT DURATION(unit, n)", limit.span)
    size = duration_of(limit.args[0], limit.args[1], "LIMIT DURATION")
    if size <= 0:
        raise InvalidQueryError("the duration must be positive", limit.span)
    if size > MAX_WINDOW_US:
        raise InvalidQueryError("the duration is longer than 7 days, ASA's longest", limit.span)
    return size


def _pattern_names(node) -> dict[str, str]:
    """Variable key → its name as first written, in PATTERN order."""
    found: dict[str, str] = {}

    def visit(n):
        if isinstance(n, ast.PatternVariable):
            if n.name is not None:
                found.setdefault(n.name.key, n.name.name)
        elif isinstance(n, ast.PatternRepeat):
            visit(n.item)
        else:
            for item in (n.items if isinstance(n, ast.PatternSequence) else n.options):
                visit(item)

    visit(node)
    return found


def _pattern(node) -> tuple:
    if isinstance(node, ast.PatternVariable):
        return ("any",) if node.name is None else ("var", node.name.key)
    if isinstance(node, ast.PatternRepeat):
        return ("rep", node.quantifier, _pattern(node.item))
    if isinstance(node, ast.PatternSequence):
        return ("seq", tuple(_pattern(i) for i in node.items))
    return ("alt", tuple(_pattern(o) for o in node.options))


class _Translator:
    """A DEFINE condition (`defining` the variable's key) or a measure (None) → the matcher's
    expression tree. `X.field` names pattern variable X (a record field is written [X].field). In DEFINE, `Var.field` is the current row's field when Var is the variable
    being defined (or no variable is named), and the last row mapped to Var otherwise; in
    MEASURES every field is read through an aggregate."""

    def __init__(self, names: dict, value, defining: str | None):
        self.names, self.value, self.defining = names, value, defining

    def field(self, parts, span) -> int:
        return self.value(ast.ColumnRef(parts=parts, span=span))

    def _row_function(self, call):
        """A scalar function of one row's fields (all of the current row, or all of one
        variable's rows) → (the variable or None, the call over the row's own fields); None
        when it reads an aggregate, Classifier() or the fields of two rows."""
        variables, stripped = set(), {}
        for node in walk(call):
            if isinstance(node, ast.FunctionCall) and node is not call and \
                    (node.name.key in AGGREGATES or node.name.key == "classifier"):
                return None
            if isinstance(node, ast.ColumnRef):
                variable, parts = self._split(node)
                variables.add(variable)
                stripped[id(node)] = ast.ColumnRef(parts=parts, span=node.span)
        if len(variables - {None}) > 1 or (self.defining is not None and
                                           len(variables - {None, self.defining}) == 1 and
                                           None in variables):
            return None
        variable = next(iter(variables - {None}), None)
        return variable, _replace_nodes(call, stripped)

    def convert(self, node, in_aggregate: bool = False):
        if isinstance(node, ast.Literal):
            return Lit(node.value)
        if isinstance(node, ast.ColumnRef):
            variable, parts = self._split(node)
            if self.defining is None:
                raise InvalidQueryError(
                    "a measure reads the match's rows through an aggregate (First, Last, Min, "
                    "Max, Sum, Count, Avg of a pattern variable's field) or Classifier()",
                    node.span)
            index = self.field(parts, node.span)
            if variable is None or variable == self.defining:
                return Read(index)
            return Aggregate("last", variable, index)
        if isinstance(node, ast.FunctionCall) and node.over is None and not node.within_group:
            if node.name.key not in AGGREGATES and node.name.key != "classifier":
                return self._scalar(node)
            return self._call(node)
        if isinstance(node, ast.BinaryOp) and node.op in _OPS:
            return Op(node.op, (self.convert(node.left), self.convert(node.right)))
        if isinstance(node, ast.UnaryOp) and node.op in ("-", "+", "NOT"):
            operand = self.convert(node.operand)
            return operand if node.op == "+" else Op("neg" if node.op == "-" else "NOT",
                                                     (operand,))
        if isinstance(node, ast.IsNull):
            return Op("notnull" if node.negated else "isnull", (self.convert(node.operand),))
        if isinstance(node, _SCALAR_NODES):  # CAST, CASE, LIKE, BETWEEN, IN of a row's fields
            return self._scalar(node)
        raise UnsupportedFeatureError(
            "inside MATCH_RECOGNIZE, only fields, literals, arithmetic, comparisons, AND/OR/NOT, "
            "IS NULL, the aggregates and Classifier() are supported yet", node.span)

    def _scalar(self, call):
        """A scalar function inside the clause, of one row's fields: in DEFINE, of the current
        row (or, naming another variable, of the last row mapped to it); in MEASURES, only
        inside an aggregate (`Max(ABS(A.delta))`)."""
        found = self._row_function(call)
        if found is None:
            raise UnsupportedFeatureError(
                f"{_what(call)} inside MATCH_RECOGNIZE reads the fields of one row (the "
                "current row, or one variable's); a function of aggregates, of Classifier() or "
                "of two rows' fields is not supported yet", call.span)
        variable, row_call = found
        if self.defining is None:
            raise InvalidQueryError(
                "a measure reads the match's rows through an aggregate (First, Last, Min, "
                "Max, Sum, Count, Avg of a pattern variable's field) or Classifier()", call.span)
        index = self.value(row_call)
        if variable is None or variable == self.defining:
            return Read(index)
        return Aggregate("last", variable, index)

    def _split(self, ref: ast.ColumnRef):
        """→ (variable key or None, the field's parts)."""
        parts = ref.parts
        if len(parts) >= 2 and parts[0].key in self.names:
            return parts[0].key, parts[1:]
        if len(parts) >= 2 and not parts[0].bracketed:  # ASA's form: Var.field
            raise UnknownNameError(f"'{parts[0].name}' is not a pattern variable (PATTERN "
                                   f"names {', '.join(self.names.values())})", parts[0].span)
        if len(parts) == 1 and parts[0].key in self.names:
            raise InvalidQueryError(f"'{parts[0].name}' is a pattern variable: name one of its "
                                    f"fields ({parts[0].name}.field)", ref.span)
        return None, parts

    def _call(self, call: ast.FunctionCall):
        name = call.name.key
        if name == "classifier":
            if call.args or call.star:
                raise InvalidQueryError("Classifier() takes no arguments", call.span)
            if self.defining is not None:
                raise InvalidQueryError("Classifier() belongs in MEASURES", call.span)
            return Classifier()
        if name not in AGGREGATES:
            raise UnsupportedFeatureError(
                f"{call.name.name}() inside MATCH_RECOGNIZE is not supported yet: its "
                "aggregates (First, Last, Min, Max, Sum, Count, Avg) and Classifier() are",
                call.span)
        if call.distinct:
            raise UnsupportedFeatureError("DISTINCT inside MATCH_RECOGNIZE's aggregates is not "
                                          "supported yet", call.span)
        if call.star:
            if name != "count":
                raise InvalidQueryError(f"{call.name.name}(*) is not an aggregate", call.span)
            return Aggregate("count", None, None)
        argument = call.args[0] if len(call.args) == 1 else None
        if isinstance(argument, _SCALAR_NODES) or isinstance(argument, ast.FunctionCall) \
                and argument.over is None and _is_scalar(argument):
            found = self._row_function(argument)  # an aggregate of a function of each row
            if found is not None:
                return Aggregate(name, found[0], self.value(found[1]))
        if not isinstance(argument, ast.ColumnRef):
            raise InvalidQueryError(f"{call.name.name}() takes one field of a pattern variable "
                                    f"({call.name.name}(Var.field)) or a function of its fields",
                                    call.span)
        variable, parts = self._split(argument)
        return Aggregate(name, variable, self.field(parts, argument.span))


def _type_of(node) -> str:
    """The measure's result type, as the backend names it ('field:<i>': that field's type)."""
    if isinstance(node, Classifier):
        return "string"
    if isinstance(node, Aggregate):
        if node.function == "count":
            return "long"
        if node.function == "avg":
            return "double"
        if node.function == "sum":
            return f"sum:{node.field}"
        return f"field:{node.field}"
    if isinstance(node, Lit):
        if isinstance(node.value, bool):
            return "boolean"
        return {int: "long", float: "double", str: "string"}.get(type(node.value), "string")
    if isinstance(node, Op):
        if node.op in ("=", "<>", "<", "<=", ">", ">=", "AND", "OR", "NOT", "isnull", "notnull"):
            return "boolean"
        if node.op == "/":
            return "double"
        kinds = {_type_of(a) for a in node.args}
        if kinds <= {"long"}:
            return "long"
        if "string" in kinds and node.op == "+":
            return "string"
        return "double"
    return "string"


def _replace_nodes(node, replacements: dict):
    """`node` with the nodes whose id is in `replacements` replaced."""
    return replacements.get(id(node)) or map_children(
        node, lambda child: _replace_nodes(child, replacements))


def _is_scalar(call: ast.FunctionCall) -> bool:
    return call.name.key not in AGGREGATES and call.name.key != "classifier"


def _reads_aggregates(node) -> bool:
    return any(isinstance(n, ast.FunctionCall) and not _is_scalar(n) for n in walk(node))


def _scalar_outside_aggregates(node) -> bool:
    """Whether a scalar function call (or CAST, CASE, …) lies in `node` outside every
    aggregate."""
    if isinstance(node, ast.FunctionCall):
        return _is_scalar(node)
    if isinstance(node, _SCALAR_NODES):
        return True
    return isinstance(node, ast.Node) and any(
        _scalar_outside_aggregates(item) for name in child_names(type(node))
        for item in (lambda v: v if isinstance(v, tuple) else (v,))(getattr(node, name)))


_SCALAR_NODES = (ast.Cast, ast.Case, ast.Like, ast.Between, ast.InList)


def _what(node) -> str:
    if isinstance(node, ast.FunctionCall):
        return f"{node.name.name}()"
    return {ast.Cast: "CAST", ast.Case: "CASE", ast.Like: "LIKE", ast.Between: "BETWEEN",
            ast.InList: "IN"}[type(node)]
