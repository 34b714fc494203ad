"""FROM's joins and APPLY bound: reference data joins, APPLY, and JOINs of streams with ASA's
rules for them (the time bound, OVER and PARTITION BY on every side). JOIN after JOIN joins a
third (fourth, …) stream: each DATEDIFF relates the pair it names, the new input and the SELECT's
input or an input joined before it."""

from __future__ import annotations

from asaql.analysis.binder import Binder
from asaql.analysis.bound import AliasField, Field, walk
from asaql.analysis.joins import StreamJoin, split_time_bounds
from asaql.analysis.laterals import APPLY_FUNCTIONS, ApplyElements, ReferenceJoin, split_condition
from asaql.analysis.stages import QueryContext, stage_view
from asaql.analysis.statements import (
    BoundStatement, comparable, conjunction, is_partitioned, unsupported,
)
from asaql.errors import InternalError, InvalidQueryError
from asaql.syntax import ast


def bind_laterals(s: ast.SelectStatement, binder: "Binder", context: QueryContext) -> tuple:
    """JOINs with reference data and APPLY operators, left to right: each ON or APPLY
    argument sees the input and the aliases before it."""
    laterals = []
    for item in s.joins:
        if isinstance(item, ast.Apply):
            laterals.append(_bind_apply(item, binder))
        else:
            laterals.append(_bind_join(item, binder, context, earlier=tuple(laterals)))
        binder.aliases[laterals[-1].alias] = laterals[-1]
    return tuple(laterals)


def _bind_apply(item: ast.Apply, binder: "Binder") -> ApplyElements:
    function = item.call.name.key
    if function not in APPLY_FUNCTIONS:
        raise InvalidQueryError(f"APPLY takes GetArrayElements() or GetRecordProperties(), not "
                                f"{item.call.name.name}()", item.call.span)
    if len(item.call.args) != 1 or item.call.star:
        raise InvalidQueryError(f"{item.call.name.name}() takes one argument", item.call.span)
    argument = binder.bind(item.call.args[0], allow_system_timestamp=False, what="APPLY")
    return ApplyElements(item.alias.key, function, argument, item.kind == "OUTER")


def _bind_join(join: ast.Join, binder: "Binder", context: QueryContext,
               earlier: tuple) -> ReferenceJoin | StreamJoin:
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
        stage = stage_view(source.name, step, context) if step is not None else None
        return _bind_stream_join(join, binder, earlier, stage)
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


def _bind_stream_join(join: ast.Join, binder: "Binder", earlier: tuple,
                      stage: BoundStatement | None = None) -> StreamJoin:
    """`stage`: the right side is a WITH step, read as a stage (its columns by name);
    `earlier`: the JOINs and APPLYs before this one in FROM."""
    source = join.source
    if binder.step is not None and not binder.step.stage_input:
        raise InternalError("a step joined with a stream is read as a stage")
    if any(not isinstance(lateral, StreamJoin) for lateral in earlier):
        unsupported("a JOIN of two streams after an APPLY or a JOIN with reference data in the "
                    "same SELECT", join.span)
    alias = source.reference_name.key
    if alias == binder.alias.key or any(j.alias == alias for j in earlier):
        raise InvalidQueryError(f"the alias '{source.reference_name.name}' is used twice: give "
                                "each input of the JOIN its own alias", source.span)
    # DATEDIFF names an input by its alias, or by its name when no other side has that name
    sides = {None: (binder.input_key, binder.alias.key)}
    sides.update({j.alias: (j.input_name.lower(), j.alias) for j in earlier})
    names = [name for name, _ in sides.values()] + [source.name.key]
    side_names = {side: {own} | ({name} if names.count(name) == 1 else set())
                  for side, (name, own) in sides.items()}
    right_names = {alias} | ({source.name.key} if names.count(source.name.key) == 1 else set())
    anchor, bound, others, rest = split_time_bounds(join.condition, side_names, right_names,
                                                    join.span)
    right = Binder(source.reference_name)
    timestamp_by, over = None, ()
    if source.timestamp_by is not None:
        timestamp_by = right.bind(source.timestamp_by.expr, allow_system_timestamp=False)
        over = tuple(right.bind(c) for c in source.timestamp_by.over)
    binder.aliases[alias] = None  # visible in its own ON
    condition = None
    for conjunct in rest:
        condition = conjunction(condition, binder.bind(conjunct, allow_system_timestamp=False,
                                                what="ON"))
    keys, residual = split_condition(condition, alias) if condition is not None else ((), None)
    keys, residual = _left_keys(keys, residual)
    if stage is not None:
        return StreamJoin(alias, stage.input_name, join.kind == "LEFT", None, (),
                          is_partitioned(source), keys, bound.lower_us, bound.upper_us, residual,
                          stage_input=True, anchor=anchor, other_bounds=others)
    return StreamJoin(alias, source.name.name, join.kind == "LEFT", timestamp_by, over,
                      is_partitioned(source), keys, bound.lower_us, bound.upper_us, residual,
                      anchor=anchor, other_bounds=others)


def _left_keys(keys: tuple, residual):
    """The equalities the step matches on read the SELECT's input only on the event side; one
    that reads a stream joined before is tested with the rest of ON, after the step."""
    kept = []
    for event, joined in keys:
        if any(isinstance(n, AliasField) for n in walk(event)):
            equal = ast.BinaryOp(op="=", left=event, right=joined)
            residual = equal if residual is None else ast.BinaryOp(op="AND", left=residual,
                                                                   right=equal)
        else:
            kept.append((event, joined))
    return tuple(kept), residual


def check_stream_join(statement: "BoundStatement", span) -> None:
    """ASA's rules for JOINs of two streams: OVER on both inputs or neither, and its columns
    equal in ON; PARTITION BY PartitionId on both or neither, and PartitionId equal in ON."""
    for join in statement.laterals:
        if isinstance(join, StreamJoin):
            _check_join_of(statement, join, span)


def _check_join_of(statement: "BoundStatement", join: StreamJoin, span) -> None:
    equal = {(comparable(a), comparable(b)) for a, b in join.keys}

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
