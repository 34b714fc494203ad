"""MATCH_RECOGNIZE: checks (ASA's documented form, pattern variable names, what DEFINE and
MEASURES may read) and the bound statement — an aggregation whose "window" is the pattern
(asaql/core/match_pattern.py), grouped by PARTITION BY, one result row per match.

SELECT * reads the PARTITION BY columns, then the measures."""

from __future__ import annotations

from asaql.analysis.binder import Binder
from asaql.analysis.bound import AggregateRef, GroupRef
from asaql.analysis.statements import (
    DEFAULT_OUTPUT, Aggregation, BoundStatement, OutputColumn, is_partitioned,
)
from asaql.analysis.windows import MAX_WINDOW_US, duration_of
from asaql.core.match_pattern import AGGREGATES, Aggregate, Classifier, Lit, MatchPattern, Op, Read
from asaql.errors import InvalidQueryError, UnknownNameError, UnsupportedFeatureError
from asaql.syntax import ast

_OPS = {"+", "-", "*", "/", "%", "=", "<>", "<", "<=", ">", ">=", "AND", "OR"}


def bind_match_statement(s: ast.SelectStatement, binder: Binder, timestamp_by, over
                         ) -> BoundStatement:
    source = s.source
    match = source.match_recognize
    _check_statement(s)
    names = _pattern_names(match.pattern)
    fields: dict[tuple[str, ...], tuple[int, object]] = {}

    def field(parts: tuple[ast.Identifier, ...], span) -> int:
        key = tuple(p.key for p in parts)
        if key not in fields:
            bound = binder.bind(ast.ColumnRef(parts=parts, span=span))
            fields[key] = (len(fields), bound)
        return fields[key][0]

    defines = []
    for define in match.defines:
        key = define.name.key
        if key not in names:
            raise UnknownNameError(f"DEFINE names '{define.name.name}', which PATTERN does not use",
                                   define.name.span)
        if key in dict(defines):
            raise InvalidQueryError(f"'{define.name.name}' is defined twice", define.name.span)
        defines.append((key, _Translator(names, field, key).convert(define.condition)))
    measures, types, seen = [], [], set()
    for measure in match.measures:
        if measure.alias.key in seen:
            raise InvalidQueryError(f"the measure name '{measure.alias.name}' is used twice",
                                    measure.alias.span)
        seen.add(measure.alias.key)
        translated = _Translator(names, field, None).convert(measure.expr)
        measures.append((measure.alias.name, translated))
        types.append(_type_of(translated))
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
        columns.append(OutputColumn(measure.alias.name, AggregateRef(index=k, span=measure.span)))
    output = s.into.name if s.into is not None else DEFAULT_OUTPUT
    return BoundStatement(output, source.name.name, timestamp_by, over, is_partitioned(source),
                          None, tuple(columns), Aggregation(pattern, partition, ()), span=s.span)


def check_match_sources(s: ast.SelectStatement, over_step: bool) -> None:
    """MATCH_RECOGNIZE reads an input's events (not a step's rows, not a JOIN's)."""
    if over_step and s.source.match_recognize is not None:
        raise UnsupportedFeatureError("MATCH_RECOGNIZE over a WITH step is not supported yet: "
                                      "it reads an input", s.source.match_recognize.span)
    for join in s.joins:
        if isinstance(join, ast.Join) and join.source.match_recognize is not None:
            raise UnsupportedFeatureError("MATCH_RECOGNIZE in a JOIN is not supported yet",
                                          join.source.match_recognize.span)


def _check_statement(s: ast.SelectStatement) -> None:
    """ASA's form: SELECT * FROM input [TIMESTAMP BY …] MATCH_RECOGNIZE (…) AS alias."""
    if len(s.items) != 1 or not isinstance(s.items[0].expr, ast.Star) or \
            s.items[0].expr.qualifier is not None:
        raise InvalidQueryError("MATCH_RECOGNIZE is read with SELECT * (its columns are the "
                                "PARTITION BY columns and the measures)", s.items[0].span)
    for clause, what in ((s.where, "WHERE"), (s.group_by, "GROUP BY"), (s.having, "HAVING")):
        if clause is not None:
            raise UnsupportedFeatureError(
                f"{what} beside MATCH_RECOGNIZE is not supported yet: write the match in a "
                "WITH step and filter the step", clause.span)
    if s.joins:
        raise UnsupportedFeatureError("JOIN or APPLY beside MATCH_RECOGNIZE is not supported yet",
                                      s.joins[0].span)


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

    def __init__(self, names: dict, field, defining: str | None):
        self.names, self.field, self.defining = names, field, defining

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
            return self._call(node)
        if isinstance(node, ast.BinaryOp) and node.op in _OPS:
            return Op(node.op, (self.convert(node.left), self.convert(node.right)))
        if isinstance(node, ast.UnaryOp) and node.op in ("-", "+", "NOT"):
            operand = self.convert(node.operand)
            return operand if node.op == "+" else Op("neg" if node.op == "-" else "NOT",
                                                     (operand,))
        if isinstance(node, ast.IsNull):
            return Op("notnull" if node.negated else "isnull", (self.convert(node.operand),))
        raise UnsupportedFeatureError(
            "inside MATCH_RECOGNIZE, only fields, literals, arithmetic, comparisons, AND/OR/NOT, "
            "IS NULL, the aggregates and Classifier() are supported yet", node.span)

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
        if len(call.args) != 1 or not isinstance(call.args[0], ast.ColumnRef):
            raise InvalidQueryError(f"{call.name.name}() takes one field of a pattern variable "
                                    f"({call.name.name}(Var.field))", call.span)
        ref = call.args[0]
        variable, parts = self._split(ref)
        return Aggregate(name, variable, self.field(parts, ref.span))


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
