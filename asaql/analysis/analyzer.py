"""AST → bound statements: WITH steps as views, UNION branches, statements over an input or a
step, and the cut of a statement into stages where two stateful steps would follow each other."""

from __future__ import annotations

import dataclasses

from asaql.analysis.analytics import contains_analytic, is_analytic
from asaql.analysis.binder import Binder, bind_columns
from asaql.analysis.functions import AGGREGATES
from asaql.analysis.from_clause import bind_laterals, check_stream_join
from asaql.analysis.group_by import GroupByBinder, check_progress_keys, groups_partition_id
from asaql.analysis.joins import StreamJoin
from asaql.analysis.match_recognize import bind_match_statement, check_match_sources
from asaql.analysis.stages import (
    QueryContext, check_stage_scope, split_aggregation, split_analytics, stage_name, stage_view,
)
from asaql.analysis.statements import (
    DEFAULT_OUTPUT, AllFields, BoundStatement, OutputColumn, analytic_calls, conjunction,
    is_partitioned, unsupported,
)
from asaql.core.fields import child_names
from asaql.errors import AsaqlError, InvalidQueryError
from asaql.syntax import ast


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
    context = QueryContext(references=frozenset(r.lower() for r in references))
    steps = context.steps
    broken: set[str] = set()

    def attempt(action, key: str | None = None):
        if errors is None:
            return action()
        try:
            return action()
        except AsaqlError as error:
            errors.extend((error, *error.also))
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
            check_stage_scope(statement, statement.span)
            producer, consumer = split_aggregation(
                statement, stage_name(f"{statement.output.lstrip('#')}.{next(names)}"))
            work.extend((consumer, producer))  # the producer may need a cut of its own
        elif joined and analytic_calls(statement):
            if statement.over:
                unsupported("analytic functions beside a JOIN of inputs with substreams "
                            "(TIMESTAMP BY … OVER)", statement.span)
            producer, consumer = split_analytics(
                statement, stage_name(f"{statement.output.lstrip('#')}.{next(names)}"))
            out.extend((producer, consumer))
        else:
            out.append(statement)
    return tuple(out)


def _union_members(s: ast.SelectStatement) -> list[ast.SelectStatement]:
    members = []
    while s is not None:
        members.append(s)
        s = s.union
    return members


def _bind_union(s: ast.SelectStatement, context: QueryContext) -> tuple[BoundStatement, ...]:
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


def _having_as_where(s: ast.SelectStatement) -> ast.SelectStatement:
    """HAVING without GROUP BY and without aggregates filters the events, as WHERE does (ASA's
    samples write it so); with aggregates it would make the whole stream one group."""
    if s.having is None or s.group_by is not None:
        return s
    if any(isinstance(n, ast.FunctionCall) and n.name.key in AGGREGATES and n.over is None
           for n in _ast_walk((s.having,))):
        unsupported("HAVING clauses with aggregates but without GROUP BY", s.having.span)
    where = s.having if s.where is None else ast.BinaryOp(op="AND", left=s.where,
                                                          right=s.having, span=s.having.span)
    return dataclasses.replace(s, where=where, having=None)


def _reject_unsupported_clauses(s: ast.SelectStatement) -> None:
    if s.distinct:
        raise InvalidQueryError("ASA's SELECT has no DISTINCT: use COUNT(DISTINCT …) in a "
                                "GROUP BY, or GROUP BY the columns", s.span)
    if s.top is not None:
        raise InvalidQueryError("ASA's SELECT has no TOP: use TopOne() or CollectTop() in a "
                                "GROUP BY", s.top.span)


def _bind_select(s: ast.SelectStatement, context: QueryContext) -> tuple[BoundStatement, ...]:
    """One SELECT (no UNION): over an input, one statement; over a step, one per branch of it."""
    _reject_unsupported_clauses(s)
    s = _having_as_where(s)
    if s.source.name.key in context.references:
        raise InvalidQueryError(f"'{s.source.name.name}' is reference data: it can only be "
                                "joined to a stream", s.source.name.span)
    if s.source.match_recognize is not None and _beside_match(s):
        return _bind_beside_match(s, context)
    step = context.steps.get(s.source.name.key)
    check_match_sources(s)
    if step is None:
        return _bind_statement(s, context)
    if s.source.match_recognize is not None:
        return (_bind_match_over_step(s, stage_view(s.source.name, step, context)),)
    if _needs_stage(s, step, context):
        return _bind_over_step(s, stage_view(s.source.name, step, context), context)
    return tuple(b for branch in step for b in _bind_over_step(s, branch, context))


def _needs_stage(s: ast.SelectStatement, step: tuple[BoundStatement, ...],
                 context: "QueryContext") -> bool:
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


def _ast_walk(nodes):
    for node in nodes:
        if isinstance(node, ast.Node):
            yield node
            for name in child_names(type(node)):
                value = getattr(node, name)
                yield from _ast_walk(value if isinstance(value, tuple) else (value,))


def _bind_statement(s: ast.SelectStatement, context: QueryContext
                    ) -> tuple[BoundStatement, ...]:
    """One statement (one per window of a GROUP BY with Windows(…))."""
    source = s.source
    binder = Binder(source.reference_name, input_name=source.name.name)
    laterals = bind_laterals(s, binder, context)
    timestamp_by, over = None, ()
    if source.timestamp_by is not None:
        timestamp_by = binder.bind(source.timestamp_by.expr, allow_system_timestamp=False)
        over = tuple(binder.bind(c) for c in source.timestamp_by.over)
    if source.match_recognize is not None:
        return (bind_match_statement(s, binder, timestamp_by, over),)
    partitioned = is_partitioned(source)
    output = s.into.name if s.into is not None else DEFAULT_OUTPUT
    if s.group_by is None:
        where = binder.bind(s.where, analytics=True) if s.where is not None else None
        columns = bind_columns(s.items, binder)
        statement = BoundStatement(output, source.name.name, timestamp_by, over, partitioned,
                                   where, columns, laterals=laterals, span=s.span)
        check_stream_join(statement, s.span)
        return (statement,)
    where = binder.bind(s.where, allow_system_timestamp=False, what="WHERE of a GROUP BY query",
                        analytics=True) if s.where is not None else None
    statements = []
    for aggregation, columns in GroupByBinder(binder, s).bind():
        check_progress_keys(aggregation, over, partitioned, s.group_by)
        statement = BoundStatement(output, source.name.name, timestamp_by, over, partitioned,
                                   where, columns, aggregation, laterals=laterals, span=s.span)
        check_stream_join(statement, s.span)
        statements.append(statement)
    return tuple(statements)


def _beside_match(s: ast.SelectStatement) -> bool:
    """Whether the SELECT does more than ASA's form `SELECT * … MATCH_RECOGNIZE (…) AS alias`
    (a WHERE alone is bound with the clause: it filters the match rows)."""
    star = len(s.items) == 1 and isinstance(s.items[0].expr, ast.Star) and \
        s.items[0].expr.qualifier is None and s.items[0].alias is None
    return bool(s.joins) or s.group_by is not None or s.having is not None or not star


def _bind_beside_match(s: ast.SelectStatement, context: QueryContext
                       ) -> tuple[BoundStatement, ...]:
    """`SELECT … FROM input MATCH_RECOGNIZE (…) AS M [JOIN …] [WHERE …] [GROUP BY …]` reads as a
    step holding the match, `SELECT * FROM input MATCH_RECOGNIZE (…) AS M`, and the SELECT over
    it: whatever a SELECT may do over a step, it does over the match rows (named M.column)."""
    match = s.source.match_recognize
    key, number = f"{match.alias.key}_match", 1
    while key in context.steps:
        key, number = f"{match.alias.key}_match{number}", number + 1
    name = ast.Identifier(name=key, bracketed=True, span=match.alias.span)
    inner = dataclasses.replace(s, items=(ast.SelectItem(expr=ast.Star(span=s.items[0].span),
                                                         span=s.items[0].span),),
                                into=None, joins=(), where=None, group_by=None, having=None)
    context.steps[key] = _bind_select(inner, context)
    outer = dataclasses.replace(s, source=ast.InputSource(name=name, alias=match.alias,
                                                          span=s.source.span))
    return _bind_select(outer, context)


def _bind_match_over_step(s: ast.SelectStatement, stage: BoundStatement) -> BoundStatement:
    """MATCH_RECOGNIZE over a step: the pattern reads the step's rows, written to a stage, in
    their System.Timestamp order."""
    source = s.source
    if source.timestamp_by is not None:
        raise InvalidQueryError(
            f"TIMESTAMP BY applies to inputs; '{source.name.name}' is a step whose rows already "
            "have their System.Timestamp", source.timestamp_by.span)
    binder = Binder(source.reference_name, step=stage, step_name=source.name.name)
    return bind_match_statement(s, binder, None, (), stage=stage)


def _bind_over_step(s: ast.SelectStatement, step: BoundStatement,
                    context: QueryContext) -> tuple[BoundStatement, ...]:
    """A SELECT reading a step, composed with it: names resolve to the step's columns; the
    step's WHERE and the statement's are both applied; over a step that aggregates, the
    statement's WHERE filters the step's window rows (like HAVING)."""
    source = s.source
    if source.timestamp_by is not None:
        raise InvalidQueryError(
            f"TIMESTAMP BY applies to inputs; '{source.name.name}' is a step whose rows already "
            "have their System.Timestamp", source.timestamp_by.span)
    partitioned = step.partition_by_partition_id or is_partitioned(source)
    binder = Binder(source.reference_name, step=step, step_name=source.name.name)
    laterals = step.laterals + bind_laterals(s, binder, context)
    output = s.into.name if s.into is not None else DEFAULT_OUTPUT
    if step.aggregation is not None:
        # A SELECT that groups, joins, applies or has analytic functions reads such a step as
        # a stage (_needs_stage): here it only filters and projects the step's window rows.
        where = binder.bind(s.where, analytics=True) if s.where is not None else None
        aggregation = dataclasses.replace(step.aggregation,
                                          having=conjunction(step.aggregation.having, where))
        return (dataclasses.replace(step, output=output, partition_by_partition_id=partitioned,
                                    columns=bind_columns(s.items, binder),
                                    aggregation=aggregation, span=s.span),)
    if s.group_by is None:
        # The SELECT's analytic functions see only the events the step's WHERE keeps.
        binder.prefilter = step.where
        binder.analytics_over_step = "a step that joins or applies" if step.laterals else None
        where = binder.bind(s.where, analytics=True) if s.where is not None else None
        return (dataclasses.replace(step, output=output, partition_by_partition_id=partitioned,
                                    where=conjunction(step.where, where), laterals=laterals,
                                    columns=bind_columns(s.items, binder), span=s.span),)
    binder.prefilter = step.where
    binder.analytics_over_step = "a step that joins or applies" if step.laterals else None
    where = binder.bind(s.where, allow_system_timestamp=False, what="WHERE of a GROUP BY query",
                        analytics=True) if s.where is not None else None
    statements = []
    for aggregation, columns in GroupByBinder(binder, s).bind():
        # Over a PARTITION BY PartitionId step, a GROUP BY without PartitionId (and without a
        # PARTITION BY of its own) combines the partitions, as ASA does from level 1.2.
        per_partition = is_partitioned(source) or partitioned and groups_partition_id(aggregation)
        check_progress_keys(aggregation, step.over, per_partition, s.group_by)
        statements.append(dataclasses.replace(
            step, output=output, partition_by_partition_id=per_partition,
            where=conjunction(step.where, where), columns=columns, laterals=laterals,
            aggregation=aggregation, span=s.span))
    return tuple(statements)
