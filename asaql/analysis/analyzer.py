"""AST → bound statements: resolve names, apply ASA's rules, refuse what is not supported yet."""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass

from asaql.analysis import functions, scalar_functions
from asaql.analysis.aggregates import bind_aggregate, is_aggregate
from asaql.analysis.analytics import bind_analytic, contains_analytic, is_analytic
from asaql.analysis.bound import (
    AggregateCall, AggregateRef, AliasField, AnalyticCall, Field, FieldAccess, GroupRef,
    WindowId, map_children, transform, walk,
)
from asaql.analysis.joins import StreamJoin, split_time_bound
from asaql.analysis.laterals import APPLY_FUNCTIONS, ApplyElements, ReferenceJoin, split_condition
from asaql.analysis.stages import split_aggregation, split_analytics, stage_name
from asaql.analysis.windows import (
    SessionWindow, SnapshotWindow, WindowSpec, is_multiple_windows, is_window_call,
    window_alternatives, window_spec,
)
from asaql.errors import (
    AsaqlError, InternalError, InvalidQueryError, UnknownNameError, UnsupportedFeatureError,
)
from asaql.syntax import ast

DEFAULT_OUTPUT = "output"
_LATER = "the README's table \"What works today\" lists what asaql supports so far"


@dataclass(frozen=True, slots=True)
class OutputColumn:
    name: str
    expr: object  # a bound expression (AST node with Field for column references)


@dataclass(frozen=True, slots=True)
class AllFields:
    """`*` or `alias.*`: every field of the input record, in input order; with `alias`, every
    field of that joined reference data row. `hidden`: fields asaql added to a stage's rows,
    which `*` leaves out."""

    alias: str | None = None
    hidden: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Aggregation:
    """GROUP BY: one window, plain grouping expressions and the aggregates the SELECT and
    HAVING use. SELECT and HAVING read GroupRef, AggregateRef and System.Timestamp() (the
    window end) only."""

    window: WindowSpec
    group_by: tuple  # bound expressions over the input
    aggregates: tuple[AggregateCall, ...]
    having: object | None = None


@dataclass(frozen=True, slots=True)
class BoundStatement:
    output: str
    input_name: str
    timestamp_by: object | None
    over: tuple[Field, ...]
    partition_by_partition_id: bool
    where: object | None
    columns: tuple[OutputColumn | AllFields, ...]
    aggregation: Aggregation | None = None
    # StreamJoin (first, if any), ReferenceJoin, ApplyElements, in FROM order, before WHERE
    laterals: tuple = ()
    # `input_name` is a stage (asaql/analysis/stages.py): rows another stateful step wrote, with
    # their System.Timestamp and that step's watermark
    stage_input: bool = False
    span: object = dataclasses.field(default=None, compare=False)


def analyze(query: ast.Query, references=frozenset(),
            errors: list | None = None) -> tuple[BoundStatement, ...]:
    """Every SELECT … INTO as statements over one input each. A WITH step is a view: a
    statement reading it is composed with it (its WHERE, columns and window folded in), so
    statements over the same input and TIMESTAMP BY still share one read and one stateful step;
    a UNION is one statement per branch writing the same output. `references` names the
    inputs that are reference data (lower case).

    With `errors` (a list), an error stops only its step or statement: it is appended and the
    analysis goes on with the next one (a statement reading a broken step is skipped), so that
    `asaql check` reports them all; the statements that bound are returned."""
    context = _QueryContext(references=frozenset(r.lower() for r in references))
    steps = context.steps
    broken: set[str] = set()

    def attempt(action, key: str | None = None):
        if errors is None:
            return action()
        try:
            return action()
        except AsaqlError as error:
            errors.append(error)
            if key is not None:
                broken.add(key)
            return None

    for step in query.steps:
        def bind_step(step=step):
            if step.name.key in steps:
                raise InvalidQueryError(f"the step '{step.name.name}' is defined twice",
                                        step.name.span)
            for member in _union_members(step.query):
                if member.into is not None:
                    raise InvalidQueryError("a WITH step cannot have INTO: the SELECT that reads "
                                            "the step writes the output", member.into.span)
            steps[step.name.key] = _bind_union(step.query, context)

        if _reads(step.query, broken):
            broken.add(step.name.key)
            continue
        attempt(bind_step, step.name.key)
    bound: list[BoundStatement] = []
    for statement in query.statements:
        if _reads(statement, broken):
            continue
        output = statement.into.name if statement.into is not None else DEFAULT_OUTPUT
        statements = attempt(lambda statement=statement: _bind_union(statement, context))
        bound.extend(dataclasses.replace(b, output=output) for b in statements or ())
    if errors is None:
        return _cut_stages([*context.producers, *bound])
    return tuple(s for one in [*context.producers, *bound]
                 for s in attempt(lambda one=one: _cut_stages([one])) or ())


def _reads(s: ast.SelectStatement, names: set[str]) -> bool:
    """Whether the SELECT (or a UNION branch) reads one of the steps `names` (lower case)."""
    return bool(names) and any(
        member.source.name.key in names or any(
            isinstance(j, ast.Join) and j.source.name.key in names for j in member.joins)
        for member in _union_members(s))


def _cut_stages(statements: list[BoundStatement]) -> tuple[BoundStatement, ...]:
    """Where a statement needs two stateful steps in a row, it becomes two statements joined
    by a stage (asaql/analysis/stages.py): a GROUP BY whose input has analytic functions or a
    JOIN of two streams; analytic functions beside a JOIN of two streams (they are evaluated
    over the left input's events, before the JOIN)."""
    out: list[BoundStatement] = []
    names = iter(range(1, 1 << 30))
    work = list(reversed(statements))
    while work:
        statement = work.pop()
        joined = any(isinstance(j, StreamJoin) for j in statement.laterals)
        a = statement.aggregation
        if a is not None and (
                joined or any(contains_analytic(e) for e in (statement.where, *a.group_by))
                or any(contains_analytic(c.arg) or any(contains_analytic(k.expr)
                                                       for k in c.order_by)
                       for c in a.aggregates)):
            _check_stage_scope(statement, statement.span)
            producer, consumer = split_aggregation(
                statement, stage_name(f"{statement.output.lstrip('#')}.{next(names)}"))
            work.extend((consumer, producer))  # the producer may need a cut of its own
        elif joined and analytic_calls(statement):
            if statement.over:
                _unsupported("analytic functions beside a JOIN of inputs with substreams "
                             "(TIMESTAMP BY … OVER)", statement.span)
            producer, consumer = split_analytics(
                statement, stage_name(f"{statement.output.lstrip('#')}.{next(names)}"))
            out.extend((producer, consumer))
        else:
            out.append(statement)
    return tuple(out)


def _check_stage_scope(statement: BoundStatement, span) -> None:
    """A stage carries one watermark, the minimum over its writer's partitions: a writer with
    PARTITION BY PartitionId can give it (asaql/runtime/step.py); substreams, whose keys are
    not known in advance, and partitioned JOINs cannot yet."""
    if statement.over:
        _unsupported("a step with substreams (TIMESTAMP BY … OVER) that another stateful step "
                     "reads (GROUP BY, JOIN or analytic functions over it, or a GROUP BY over "
                     "its analytic functions or JOIN)", span)
    if statement.partition_by_partition_id and any(isinstance(j, StreamJoin)
                                                   for j in statement.laterals):
        _unsupported("a JOIN of partitioned streams that another stateful step reads (GROUP BY "
                     "over it, or a JOIN or analytic functions over its step)", span)


def _union_members(s: ast.SelectStatement) -> list[ast.SelectStatement]:
    members = []
    while s is not None:
        members.append(s)
        s = s.union
    return members


@dataclass
class _QueryContext:
    references: frozenset  # inputs that are reference data (lower case)
    steps: dict = dataclasses.field(default_factory=dict)  # WITH steps bound so far
    # steps whose rows are a stage (name → its view) and the statements that write them
    stages: dict = dataclasses.field(default_factory=dict)
    producers: list = dataclasses.field(default_factory=list)


def _bind_union(s: ast.SelectStatement, context: _QueryContext) -> tuple[BoundStatement, ...]:
    """ASA's UNION keeps every row (duplicates too); its branches need the same column names in
    the same order (checked when no branch uses `*`, whose columns are known only at run)."""
    members = _union_members(s)
    for member in members[1:]:
        if member.into is not None:
            raise InvalidQueryError("INTO belongs to the first SELECT of a UNION",
                                    member.into.span)
    branches = [_bind_select(member, context) for member in members]
    names = [_column_names(b[0]) for b in branches]
    for member, other in zip(members[1:], names[1:]):
        if names[0] is not None and other is not None and \
                [n.lower() for n in other] != [n.lower() for n in names[0]]:
            raise InvalidQueryError(
                f"the SELECTs of a UNION must have the same columns in the same order: "
                f"({', '.join(names[0])}) and ({', '.join(other)})", member.span)
    return tuple(b for branch in branches for b in branch)


def _column_names(statement: BoundStatement) -> list[str] | None:
    if any(isinstance(c, AllFields) for c in statement.columns):
        return None
    return [c.name for c in statement.columns]


def _unsupported(feature: str, span) -> None:
    raise UnsupportedFeatureError(f"{feature} are not supported yet", span, hint=_LATER)


def _reject_unsupported_clauses(s: ast.SelectStatement) -> None:
    if s.having is not None and s.group_by is None:
        _unsupported("HAVING clauses without GROUP BY", s.having.span)
    if s.distinct:
        raise InvalidQueryError("ASA's SELECT has no DISTINCT: use COUNT(DISTINCT …) in a "
                                "GROUP BY, or GROUP BY the columns", s.span)
    if s.top is not None:
        raise InvalidQueryError("ASA's SELECT has no TOP: use TopOne() or CollectTop() in a "
                                "GROUP BY", s.top.span)


def _bind_select(s: ast.SelectStatement, context: _QueryContext) -> tuple[BoundStatement, ...]:
    """One SELECT (no UNION): over an input, one statement; over a step, one per branch of it."""
    _reject_unsupported_clauses(s)
    if s.source.name.key in context.references:
        raise InvalidQueryError(f"'{s.source.name.name}' is reference data: it can only be "
                                "joined to a stream", s.source.name.span)
    step = context.steps.get(s.source.name.key)
    if step is None:
        return _bind_statement(s, context)
    if _needs_stage(s, step, context):
        return _bind_over_step(s, _stage_view(s.source.name, step, context), context)
    return tuple(b for branch in step for b in _bind_over_step(s, branch, context))


def _needs_stage(s: ast.SelectStatement, step: tuple[BoundStatement, ...],
                 context: "_QueryContext") -> bool:
    """Whether composing `s` with the step would put two stateful operators in a row: a JOIN
    of the step with a stream; GROUP BY, JOIN or analytic functions over a step that
    aggregates; analytic functions over a step that has analytic functions, joins or applies. (A GROUP BY over a step with analytic
    functions or a JOIN of two streams is composed, then cut: `_cut_stages`.)"""
    if any(isinstance(j, ast.Join) and j.source.name.key not in context.references
           for j in s.joins):
        return True  # a JOIN of two streams reads each side's watermark: the step's is the stage's
    analytic = any(is_analytic(n) for n in _ast_walk((s.where, *[i.expr for i in s.items])))
    for branch in step:
        if branch.aggregation is not None and (s.group_by is not None or s.joins or analytic):
            return True
        if analytic and (branch.laterals or contains_analytic(branch.where) or any(
                contains_analytic(c.expr) for c in branch.columns if isinstance(c, OutputColumn))):
            return True
    return False


def _stage_view(name: ast.Identifier, step: tuple[BoundStatement, ...],
                context: _QueryContext) -> BoundStatement:
    """The step as an input: its rows are written to a stage (once, whoever reads it), and a
    SELECT over it reads the stage's columns by name."""
    if name.key in context.stages:
        return context.stages[name.key]
    stage = stage_name(name.name)
    if len(step) > 1 and len({(b.input_name, b.timestamp_by) for b in step}) > 1:
        _unsupported("a step that is a UNION of different inputs, read as a stage,", name.span)
    for branch in step:
        _check_stage_scope(branch, name.span)
        context.producers.append(dataclasses.replace(branch, output=stage))
    columns = tuple(OutputColumn(c.name, Field(path=(c.name,))) if isinstance(c, OutputColumn)
                    else c for c in step[0].columns)
    view = BoundStatement("", stage, None, (), False, None, columns, stage_input=True)
    context.stages[name.key] = view
    return view


def _ast_walk(nodes):
    for node in nodes:
        if isinstance(node, ast.Node):
            yield node
            for field in dataclasses.fields(node):
                value = getattr(node, field.name)
                yield from _ast_walk(value if isinstance(value, tuple) else (value,))


def _bind_laterals(s: ast.SelectStatement, binder: "_Binder", context: _QueryContext) -> tuple:
    """JOINs with reference data and APPLY operators, left to right: each ON or APPLY
    argument sees the input and the aliases before it."""
    laterals = []
    for item in s.joins:
        if isinstance(item, ast.Apply):
            laterals.append(_bind_apply(item, binder))
        else:
            laterals.append(_bind_join(item, binder, context, first=not laterals))
        binder.aliases[laterals[-1].alias] = laterals[-1]
    return tuple(laterals)


def _bind_apply(item: ast.Apply, binder: "_Binder") -> ApplyElements:
    function = item.call.name.key
    if function not in APPLY_FUNCTIONS:
        raise InvalidQueryError(f"APPLY takes GetArrayElements() or GetRecordProperties(), not "
                                f"{item.call.name.name}()", item.call.span)
    if len(item.call.args) != 1 or item.call.star:
        raise InvalidQueryError(f"{item.call.name.name}() takes one argument", item.call.span)
    argument = binder.bind(item.call.args[0], allow_system_timestamp=False, what="APPLY")
    if any(isinstance(n, AliasField) for n in walk(argument)):
        raise UnsupportedFeatureError("APPLY over a joined row or another APPLY's elements is "
                                      "not supported yet: apply it to a field of the input",
                                      item.call.args[0].span, hint=_LATER)
    return ApplyElements(item.alias.key, function, argument, item.kind == "OUTER")


def _bind_join(join: ast.Join, binder: "_Binder", context: _QueryContext,
               first: bool) -> ReferenceJoin | StreamJoin:
    source = join.source
    has_datediff = any(isinstance(n, ast.FunctionCall) and n.name.key == "datediff"
                       for n in walk(join.condition))
    if source.name.key not in context.references:
        if not has_datediff:
            raise InvalidQueryError(
                f"a JOIN of two streams needs DATEDIFF in ON to bound how far apart the events "
                f"may be; if '{source.name.name}' is reference data, run with --reference "
                f"{source.name.name}=PATH", join.span)
        step = context.steps.get(source.name.key)
        if step is not None and source.timestamp_by is not None:
            raise InvalidQueryError(
                f"TIMESTAMP BY applies to inputs; '{source.name.name}' is a step whose rows "
                "already have their System.Timestamp", source.timestamp_by.span)
        stage = _stage_view(source.name, step, context) if step is not None else None
        return _bind_stream_join(join, binder, first, stage)
    if source.timestamp_by is not None or source.partition_by is not None:
        raise InvalidQueryError(f"'{source.name.name}' is reference data: it has no "
                                "TIMESTAMP BY or PARTITION BY", source.span)
    alias = source.reference_name.key
    if alias in binder.aliases or alias == binder.alias.key:
        raise InvalidQueryError(f"the alias '{source.reference_name.name}' is used twice",
                                source.span)
    binder.aliases[alias] = None  # visible in its own ON
    condition = binder.bind(join.condition, allow_system_timestamp=False, what="ON")
    keys, residual = split_condition(condition, alias)
    return ReferenceJoin(alias, source.name.name, join.kind == "LEFT", keys, residual)


def _bind_stream_join(join: ast.Join, binder: "_Binder", first: bool,
                      stage: BoundStatement | None = None) -> StreamJoin:
    """`stage`: the right side is a WITH step, read as a stage (its columns by name)."""
    source = join.source
    if binder.step is not None and not binder.step.stage_input:
        raise InternalError("a step joined with a stream is read as a stage")
    if not first:
        _unsupported("a JOIN of two streams after another JOIN or APPLY in the same SELECT "
                     "(three-way joins)", join.span)
    alias = source.reference_name.key
    if alias == binder.alias.key:
        raise InvalidQueryError(f"the alias '{source.reference_name.name}' is used twice: give "
                                "each input of the JOIN its own alias", source.span)
    # DATEDIFF names an input by its alias, or by its name when it is joined with another one
    left_names, right_names = {binder.alias.key}, {alias}
    if binder.input_key != source.name.key:
        left_names.add(binder.input_key)
        right_names.add(source.name.key)
    bound, rest = split_time_bound(join.condition, left_names, right_names, join.span)
    right = _Binder(source.reference_name)
    timestamp_by, over = None, ()
    if source.timestamp_by is not None:
        timestamp_by = right.bind(source.timestamp_by.expr, allow_system_timestamp=False)
        over = tuple(right.bind(c) for c in source.timestamp_by.over)
    binder.aliases[alias] = None  # visible in its own ON
    condition = None
    for conjunct in rest:
        condition = _and(condition, binder.bind(conjunct, allow_system_timestamp=False,
                                                what="ON"))
    keys, residual = split_condition(condition, alias) if condition is not None else ((), None)
    if stage is not None:
        return StreamJoin(alias, stage.input_name, join.kind == "LEFT", None, (),
                          _partitioned(source), keys, bound.lower_us, bound.upper_us, residual,
                          stage_input=True)
    return StreamJoin(alias, source.name.name, join.kind == "LEFT", timestamp_by, over,
                      _partitioned(source), keys, bound.lower_us, bound.upper_us, residual)


def _check_stream_join(statement: "BoundStatement", span) -> None:
    """ASA's rules for JOINs of two streams: OVER on both inputs or neither, and its columns
    equal in ON; PARTITION BY PartitionId on both or neither, and PartitionId equal in ON."""
    join = next((j for j in statement.laterals if isinstance(j, StreamJoin)), None)
    if join is None:
        return
    equal = {(_normal(a), _normal(b)) for a, b in join.keys}

    def has_equality(path: tuple[str, ...]) -> bool:
        lowered = tuple(p.lower() for p in path)
        return (Field(path=lowered), AliasField(alias=join.alias, path=lowered)) in equal

    if bool(statement.over) != bool(join.over):
        raise InvalidQueryError("TIMESTAMP BY … OVER is used for all inputs of a query or for "
                                "none of them (ASA)", span)
    left_paths = [tuple(p.lower() for p in f.path) for f in statement.over]
    if left_paths != [tuple(p.lower() for p in f.path) for f in join.over]:
        raise InvalidQueryError("the inputs of a JOIN have substreams over the same columns, in "
                                "the same order (TIMESTAMP BY … OVER)", span)
    for path in left_paths:
        if not has_equality(path):
            raise InvalidQueryError(
                f"with TIMESTAMP BY … OVER, the JOIN's ON must match the OVER column "
                f"'{'.'.join(path)}' of both inputs (a.{path[-1]} = b.{path[-1]})", span)
    if statement.partition_by_partition_id != join.partition_by_partition_id:
        raise InvalidQueryError("the inputs of a JOIN of two streams are both PARTITION BY "
                                "PartitionId, or neither is", span)
    if join.partition_by_partition_id and not has_equality(("partitionid",)):
        raise InvalidQueryError("a JOIN of partitioned inputs must match their partitions in ON "
                                "(a.PartitionId = b.PartitionId), as in ASA", span)


def _bind_statement(s: ast.SelectStatement, context: _QueryContext
                    ) -> tuple[BoundStatement, ...]:
    """One statement (one per window of a GROUP BY with Windows(…))."""
    source = s.source
    binder = _Binder(source.reference_name, input_name=source.name.name)
    laterals = _bind_laterals(s, binder, context)
    joined = any(isinstance(j, StreamJoin) for j in laterals)
    timestamp_by, over = None, ()
    if source.timestamp_by is not None:
        timestamp_by = binder.bind(source.timestamp_by.expr, allow_system_timestamp=False)
        over = tuple(binder.bind(c) for c in source.timestamp_by.over)
    partitioned = _partitioned(source)
    output = s.into.name if s.into is not None else DEFAULT_OUTPUT
    if s.group_by is None:
        where = binder.bind(s.where, analytics=True) if s.where is not None else None
        columns = _bind_columns(s.items, binder)
        statement = BoundStatement(output, source.name.name, timestamp_by, over, partitioned,
                                   where, columns, laterals=laterals, span=s.span)
        _check_stream_join(statement, s.span)
        return (statement,)
    where = binder.bind(s.where, allow_system_timestamp=False, what="WHERE of a GROUP BY query",
                        analytics=True) if s.where is not None else None
    statements = []
    for aggregation, columns in _GroupByBinder(binder, s).bind():
        _check_progress_keys(aggregation, over, partitioned, s.group_by)
        statement = BoundStatement(output, source.name.name, timestamp_by, over, partitioned,
                                   where, columns, aggregation, laterals=laterals, span=s.span)
        _check_stream_join(statement, s.span)
        statements.append(statement)
    return tuple(statements)


def _partitioned(source: ast.InputSource) -> bool:
    if source.partition_by is None:
        return False
    if source.partition_by.parts[-1].key != "partitionid":
        raise InvalidQueryError(
            f"cannot partition by '{source.partition_by.dotted}': ASA partitions an input "
            "only by PartitionId", source.partition_by.span)
    return True


def _bind_over_step(s: ast.SelectStatement, step: BoundStatement,
                    context: _QueryContext) -> tuple[BoundStatement, ...]:
    """A SELECT reading a step, composed with it: names resolve to the step's columns; the
    step's WHERE and the statement's are both applied; over a step that aggregates, the
    statement's WHERE filters the step's window rows (like HAVING)."""
    source = s.source
    if source.timestamp_by is not None:
        raise InvalidQueryError(
            f"TIMESTAMP BY applies to inputs; '{source.name.name}' is a step whose rows already "
            "have their System.Timestamp", source.timestamp_by.span)
    partitioned = step.partition_by_partition_id or _partitioned(source)
    binder = _Binder(source.reference_name, step=step, step_name=source.name.name)
    laterals = step.laterals + _bind_laterals(s, binder, context)
    output = s.into.name if s.into is not None else DEFAULT_OUTPUT
    if step.aggregation is not None:
        # A SELECT that groups, joins, applies or has analytic functions reads such a step as
        # a stage (_needs_stage): here it only filters and projects the step's window rows.
        where = binder.bind(s.where, analytics=True) if s.where is not None else None
        aggregation = dataclasses.replace(step.aggregation,
                                          having=_and(step.aggregation.having, where))
        return (dataclasses.replace(step, output=output, partition_by_partition_id=partitioned,
                                    columns=_bind_columns(s.items, binder),
                                    aggregation=aggregation, span=s.span),)
    if s.group_by is None:
        # The SELECT's analytic functions see only the events the step's WHERE keeps.
        binder.prefilter = step.where
        binder.analytics_over_step = "a step that joins or applies" if step.laterals else None
        where = binder.bind(s.where, analytics=True) if s.where is not None else None
        return (dataclasses.replace(step, output=output, partition_by_partition_id=partitioned,
                                    where=_and(step.where, where), laterals=laterals,
                                    columns=_bind_columns(s.items, binder), span=s.span),)
    binder.prefilter = step.where
    binder.analytics_over_step = "a step that joins or applies" if step.laterals else None
    where = binder.bind(s.where, allow_system_timestamp=False, what="WHERE of a GROUP BY query",
                        analytics=True) if s.where is not None else None
    statements = []
    for aggregation, columns in _GroupByBinder(binder, s).bind():
        _check_progress_keys(aggregation, step.over, partitioned, s.group_by)
        statements.append(dataclasses.replace(
            step, output=output, partition_by_partition_id=partitioned,
            where=_and(step.where, where), columns=columns, laterals=laterals,
            aggregation=aggregation, span=s.span))
    return tuple(statements)


def _and(left, right):
    if left is None or right is None:
        return left if right is None else right
    return ast.BinaryOp(op="AND", left=left, right=right, span=right.span)


def _bind_columns(items, binder: "_Binder") -> tuple:
    columns: list = []
    seen: dict[str, ast.Node] = {}
    for position, item in enumerate(items, start=1):
        if isinstance(item.expr, ast.Star):
            columns.extend(binder.star_columns(item.expr.qualifier))
            continue
        name = _column_name(item, position)
        _check_unique(name, item, seen)
        columns.append(OutputColumn(name, binder.bind(item.expr, analytics=True)))
    return tuple(columns)


def _check_unique(name: str, item: ast.SelectItem, seen: dict) -> None:
    if name.lower() in seen:
        raise InvalidQueryError(f"the column name '{name}' is used twice in this SELECT",
                                item.alias.span if item.alias else item.span)
    seen[name.lower()] = item


def _column_name(item: ast.SelectItem, position: int) -> str:
    """ASA names a column by its alias, else by the field it reads; decisions: an aggregate
    without alias is named after its function in lower case (`count`, as ASA's snapshot sample
    reads it), anything else `Column<position>` (ASA's own generated names are not documented)."""
    if item.alias is not None:
        return item.alias.name
    if isinstance(item.expr, (ast.ColumnRef, ast.MemberAccess)):  # `System.Window().Id`: Id
        return item.expr.parts[-1].name
    if isinstance(item.expr, ast.SystemTimestamp):
        return "Timestamp"
    if is_aggregate(item.expr):
        return item.expr.name.key
    return f"Column{position}"


def _check_progress_keys(aggregation: Aggregation, over, partitioned: bool, group_by) -> None:
    """ASA: with substreams every GROUP BY holds the OVER columns; a PARTITION BY PartitionId
    step groups within a partition, so GROUP BY holds PartitionId."""
    grouped = {_normal(e) for e in aggregation.group_by}
    for field in over:
        if _normal(field) not in grouped:
            raise InvalidQueryError(
                f"with TIMESTAMP BY … OVER, GROUP BY must include the OVER column "
                f"'{'.'.join(field.path)}' (each substream has its own watermark)", group_by.span)
    if partitioned and _normal(Field(path=("PartitionId",))) not in grouped:
        raise InvalidQueryError("with PARTITION BY PartitionId, GROUP BY must include PartitionId "
                                "(each partition is aggregated on its own)", group_by.span)


def _normal(expr):
    """A comparable form of a bound expression: names compare case-insensitively, as in ASA."""
    def lowered(n):
        if isinstance(n, Field):
            return Field(path=tuple(p.lower() for p in n.path))
        if isinstance(n, AliasField):
            return AliasField(alias=n.alias, path=tuple(p.lower() for p in n.path))
        return n

    return transform(expr, lowered)


class _GroupByBinder:
    """Binds a GROUP BY statement: the window, the grouping expressions, the aggregates, and
    SELECT and HAVING rewritten over them."""

    def __init__(self, binder: "_Binder", s: ast.SelectStatement):
        self.binder = binder
        self.s = s
        self.aggregates: list[AggregateCall] = []

    def bind(self) -> list[tuple[Aggregation, tuple]]:
        """(aggregation, SELECT columns) per window: one, or one per window of Windows(…),
        whose results ASA unions (System.Window().Id tells them apart)."""
        windows, group_by = self._group_by()
        self.group_keys = [_normal(e) for e in group_by]
        columns, by_alias = [], {}
        seen: dict[str, ast.Node] = {}
        for position, item in enumerate(self.s.items, start=1):
            if isinstance(item.expr, ast.Star):
                raise InvalidQueryError("SELECT * cannot be used with GROUP BY: name the grouped "
                                        "columns and aggregates", item.span)
            name = _column_name(item, position)
            _check_unique(name, item, seen)
            expr = self._over_groups(self._bind(item.expr))
            columns.append(OutputColumn(name, expr))
            by_alias[name.lower()] = expr
        having = None
        if self.s.having is not None:
            having = self._over_groups(self._bind(self.s.having), by_alias)
        out = []
        for window_id, window in windows:
            literal = ast.Literal(value=window_id,
                                  kind="null" if window_id is None else "nvarchar(max)")

            def with_id(expr, literal=literal):
                return transform(expr, lambda n: dataclasses.replace(literal, span=n.span)
                                 if isinstance(n, WindowId) else n)

            out.append((Aggregation(window, tuple(group_by), tuple(self.aggregates),
                                    with_id(having)),
                        tuple(OutputColumn(c.name, with_id(c.expr)) for c in columns)))
        return out

    def _group_by(self) -> tuple[tuple, list]:
        """→ ((window id, window) per window, the grouping expressions)."""
        windows, window_item, group_by = None, None, []
        bind_partition = lambda e: self.binder.bind(e, allow_system_timestamp=False)
        for item in self.s.group_by.items:
            if is_window_call(item) or is_multiple_windows(item) \
                    or isinstance(item, ast.SystemTimestamp):
                if windows is not None:
                    if isinstance(item, ast.SystemTimestamp) or any(
                            isinstance(w, SnapshotWindow) for _, w in windows):
                        raise UnsupportedFeatureError(
                            "System.Timestamp() as a grouping key beside a window is not "
                            "supported yet", item.span)
                    raise InvalidQueryError("only one window is allowed in GROUP BY (ASA's "
                                            "Windows(…) combines several)", item.span)
                window_item = item
                if is_multiple_windows(item):
                    windows = window_alternatives(item, bind_partition)
                else:
                    windows = ((None, SnapshotWindow() if isinstance(item, ast.SystemTimestamp)
                                else window_spec(item, bind_partition)),)
                continue
            if any(is_aggregate(n) for n in walk(item)):
                raise InvalidQueryError("GROUP BY cannot contain an aggregate", item.span)
            group_by.append(self.binder.bind(item, allow_system_timestamp=False,
                                             what="GROUP BY expressions", analytics=True))
        if windows is None:
            raise InvalidQueryError(
                "a window must be specified: GROUP BY over a stream needs TumblingWindow, "
                "HoppingWindow, SlidingWindow, SessionWindow or System.Timestamp()",
                self.s.group_by.span)
        keys = {_normal(e) for e in group_by}
        for _, window in windows:
            if isinstance(window, SessionWindow) and any(_normal(e) not in keys
                                                         for e in window.partition_by):
                raise InvalidQueryError("the OVER (PARTITION BY …) keys of a SessionWindow "
                                        "must also be in GROUP BY", window_item.span)
        return windows, group_by

    def _bind(self, node):
        """Bind an expression of SELECT or HAVING; aggregates become AggregateCall."""
        if _is_system_window(node):
            return WindowId(span=node.span)
        if is_analytic(node):
            return self.binder.bind(node, allow_system_timestamp=False, analytics=True)
        if is_aggregate(node):
            inner = lambda e: self.binder.bind(e, allow_system_timestamp=False,
                                               what="aggregate arguments", no_aggregates=True,
                                               analytics=True)
            return bind_aggregate(node, inner)
        if isinstance(node, ast.FunctionCall):
            self.binder.check_function(node)
        if isinstance(node, ast.Star):
            raise InvalidQueryError("'*' is only allowed in a SELECT list or COUNT(*)", node.span)
        if isinstance(node, (ast.ColumnRef, ast.SystemTimestamp)):
            return self.binder.bind(node)
        return map_children(node, self._bind)

    def _over_groups(self, expr, aliases: dict | None = None):
        """Top-down: an aggregate → AggregateRef; a grouped expression → GroupRef; a field
        elsewhere is an error (or, in HAVING, a SELECT alias)."""
        if isinstance(expr, AggregateCall):
            if expr not in self.aggregates:
                self.aggregates.append(expr)
            return AggregateRef(index=self.aggregates.index(expr), span=expr.span)
        normal = _normal(expr)
        if normal in self.group_keys:
            return GroupRef(index=self.group_keys.index(normal), span=getattr(expr, "span", None))
        if isinstance(expr, Field):
            if aliases is not None and len(expr.path) == 1 and expr.path[0].lower() in aliases:
                return aliases[expr.path[0].lower()]
            raise InvalidQueryError(
                f"'{'.'.join(expr.path)}' must be in GROUP BY or inside an aggregate", expr.span)
        if isinstance(expr, AnalyticCall):
            raise InvalidQueryError(f"{expr.function.upper()}(…) OVER (…) must be in GROUP BY or "
                                    "inside an aggregate", expr.span)
        return map_children(expr, lambda child: self._over_groups(child, aliases))


class _Binder:
    """Resolves names of one SELECT: fields of its input, or the columns of the step it reads."""

    def __init__(self, alias: ast.Identifier, step: BoundStatement | None = None,
                 step_name: str = "", input_name: str = ""):
        self.alias = alias
        self.input_key = (input_name or alias.name).lower()
        self.step = step
        self.step_name = step_name
        # aliases of joined reference data and applied elements (lower case) → their lateral
        self.aliases: dict[str, object] = {}
        self.step_columns = {c.name.lower(): c for c in step.columns
                             if isinstance(c, OutputColumn)} if step is not None else {}
        self.prefilter = None  # the WHERE of the steps below: analytic functions see what it keeps
        self.analytics_over_step: str | None = None  # why analytic functions cannot read the step

    def star_columns(self, qualifier: ast.Identifier | None) -> tuple:
        """`*`: the input's fields (or the step's columns), then each joined reference row's;
        `alias.*`: one of them."""
        references = [a for a, lateral in self.aliases.items()
                      if isinstance(lateral, (ReferenceJoin, StreamJoin))]
        own = (AllFields(),) if self.step is None else self.step.columns
        if qualifier is None:
            return own + tuple(AllFields(alias=a) for a in references)
        if qualifier.key == self.alias.key:
            return own
        if qualifier.key in references:
            return (AllFields(alias=qualifier.key),)
        raise UnknownNameError(f"unknown input alias '{qualifier.name}'", qualifier.span,
                               hint=f"the input of this SELECT is '{self.alias.name}'")

    def bind(self, node, allow_system_timestamp: bool = True, what: str = "TIMESTAMP BY",
             no_aggregates: bool = False, analytics: bool = False):
        """`analytics`: analytic functions are allowed here (SELECT and WHERE of a SELECT
        without GROUP BY)."""
        if isinstance(node, ast.ColumnRef):
            bound = self._field(node)
            if not allow_system_timestamp and any(isinstance(n, ast.SystemTimestamp)
                                                  for n in walk(bound)):
                raise UnsupportedFeatureError(
                    f"'{node.dotted}' is System.Timestamp() of step '{self.step_name}': using it "
                    f"in {what} is not supported yet", node.span, hint=_LATER)
            return bound
        if isinstance(node, ast.SystemTimestamp) and not allow_system_timestamp:
            if what == "TIMESTAMP BY":
                raise InvalidQueryError("TIMESTAMP BY cannot use System.Timestamp()", node.span)
            raise UnsupportedFeatureError(f"System.Timestamp() in {what} is not supported yet",
                                          node.span, hint=_LATER)
        if isinstance(node, ast.FunctionCall):
            if is_analytic(node):
                if not analytics:
                    raise _analytic_not_allowed(node, what)
                return self._analytic(node)
            if is_aggregate(node):
                where = "inside another aggregate" if no_aggregates else \
                    "here: aggregates belong in the SELECT list or HAVING of a GROUP BY query"
                raise InvalidQueryError(f"{node.name.name.upper()}() is not allowed {where}",
                                        node.span)
            self.check_function(node)
        if isinstance(node, (ast.Star,)):
            raise InvalidQueryError("'*' is only allowed in a SELECT list or COUNT(*)", node.span)
        if isinstance(node, ast.MemberAccess):
            if _is_system_window(node):
                raise InvalidQueryError("System.Window() belongs in the SELECT of a GROUP BY "
                                        "query (the window a row comes from)", node.span)
            operand = self.bind(node.operand, allow_system_timestamp, what, no_aggregates,
                                analytics)
            return _access(operand, tuple(p.name for p in node.parts), node.span)
        return map_children(node, lambda child: self.bind(child, allow_system_timestamp, what,
                                                          no_aggregates, analytics))

    def _analytic(self, node: ast.FunctionCall) -> AnalyticCall:
        if self.analytics_over_step is not None:
            raise UnsupportedFeatureError(f"analytic functions over {self.analytics_over_step} "
                                          "are not supported yet", node.span, hint=_LATER)
        inner = lambda e: self.bind(e, allow_system_timestamp=False,
                                    what=_ANALYTIC_ARGUMENTS)
        call = bind_analytic(node, inner, self.prefilter)
        if any(isinstance(n, AliasField) for n in walk(call)):
            raise InvalidQueryError(f"{node.name.name.upper()}() is evaluated before JOIN and "
                                    "APPLY: it reads the fields of the input only", node.span)
        if contains_analytic(self.prefilter):
            raise UnsupportedFeatureError("an analytic function over a step whose WHERE uses "
                                          "one is not supported yet", node.span, hint=_LATER)
        if any(contains_analytic(part) for part in (call.arg, call.default, call.when,
                                                    *call.partition_by)):
            raise UnsupportedFeatureError("an analytic function over a step column computed by "
                                          "another one is not supported yet", node.span,
                                          hint=_LATER)
        return call

    def _field(self, ref: ast.ColumnRef):
        parts = ref.parts
        if len(parts) > 1 and parts[0].key in self.aliases:
            return AliasField(alias=parts[0].key, path=tuple(p.name for p in parts[1:]),
                              span=ref.span)
        if len(parts) > 1 and parts[0].key == self.alias.key:
            parts = parts[1:]
        names = tuple(p.name for p in parts)
        if self.step is None:
            return Field(path=names, span=ref.span)
        column = self.step_columns.get(parts[0].key)
        if column is not None:
            return _access(column.expr, names[1:], ref.span)
        if any(isinstance(c, AllFields) for c in self.step.columns):
            return Field(path=names, span=ref.span)
        raise UnknownNameError(
            f"the step '{self.step_name}' has no column '{parts[0].name}'", ref.span,
            hint=_did_you_mean(parts[0].name, [c.name for c in self.step_columns.values()]))

    @staticmethod
    def check_function(call: ast.FunctionCall) -> None:
        """A scalar function asaql runs passes (its arguments are bound by the caller);
        anything else is an error at its position."""
        name = call.name.name
        if scalar_functions.is_supported(name):
            scalar_functions.check_call(call)
            return
        if is_window_call(call) or is_multiple_windows(call):
            raise InvalidQueryError(f"the window {name.upper()}() belongs in GROUP BY", call.span)
        if functions.is_known(name):
            raise UnsupportedFeatureError(f"the function {name.upper()}() is not supported yet",
                                          call.span, hint=_LATER)
        raise UnknownNameError(f"unknown function '{name}'", call.span, hint=functions.suggest(name))



_ANALYTIC_ARGUMENTS = "the arguments of an analytic function"


def _analytic_not_allowed(node: ast.FunctionCall, what: str):
    name = node.name.name.upper()
    if what == _ANALYTIC_ARGUMENTS:
        return InvalidQueryError("an analytic function cannot contain another analytic "
                                 "function", node.span)
    if "GROUP BY" in what or what == "aggregate arguments":
        return _analytics_in_group_by(node)
    return InvalidQueryError(f"{name}() is not allowed in {what}: analytic functions belong in "
                             "SELECT and WHERE", node.span)


def _analytics_in_group_by(node: ast.FunctionCall):
    return UnsupportedFeatureError(
        f"{node.name.name.upper()}() in a GROUP BY query is not supported yet", node.span,
        hint="compute it in a SELECT without GROUP BY that writes its own output")


def analytic_calls(statement: BoundStatement) -> tuple[AnalyticCall, ...]:
    """The statement's analytic function calls, each once, in the order they appear (WHERE,
    then SELECT)."""
    found: dict = {}
    for part in (statement.where, *[c.expr for c in statement.columns
                                    if isinstance(c, OutputColumn)]):
        for node in walk(part):
            if isinstance(node, AnalyticCall):
                found.setdefault(node, None)
    return tuple(found)


def _is_system_window(node) -> bool:
    """`System.Window().Id`; `System.Window()` alone or with another field is an error."""
    if not isinstance(node, ast.MemberAccess) or not isinstance(node.operand, ast.FunctionCall) \
            or node.operand.name.key != "system.window":
        return False
    if node.operand.args or [p.key for p in node.parts] != ["id"]:
        raise InvalidQueryError("System.Window() takes no arguments and has one field, Id",
                                node.span)
    return True


def _access(expr, path: tuple[str, ...], span):
    """`expr.a.b`: nested fields of a step's column."""
    if not path:
        # a stage's columns have no position of their own: an error about one is at its use
        return Field(path=expr.path, span=span) if isinstance(expr, Field) and expr.span is None \
            else expr
    if isinstance(expr, Field):
        return Field(path=expr.path + path, span=span)
    return FieldAccess(operand=expr, path=path, span=span)


def _did_you_mean(name: str, candidates: list[str]) -> str | None:
    match = difflib.get_close_matches(name.lower(), [c.lower() for c in candidates], n=1)
    if not match:
        return f"its columns: {', '.join(candidates)}" if candidates else None
    original = next(c for c in candidates if c.lower() == match[0])
    return f"did you mean '{original}'?"
