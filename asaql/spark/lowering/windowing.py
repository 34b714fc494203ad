"""A windowed statement on Spark: the columns computed natively before the stateful step (WHERE,
group values, what the aggregates read), the step's view of it (StatementSpec), the typed result
columns it adds to the step's output, and the per-batch projection after the step (JSON results
parsed, HAVING, SELECT)."""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.core.match_pattern import MatchPattern
from asaql.core.windows import SessionWindow
from asaql.errors import InternalError
from asaql.plan import expressions as E
from asaql.plan.expressions import AggregateCall
from asaql.plan.nodes import Filter, Project, WindowAggregate, WriteOutput
from asaql.runtime.aggregates import AggregateSpec
from asaql.runtime import columns as C
from asaql.runtime.step import StatementSpec
from asaql.spark.lowering.expressions import Scope, first_failure, lower_expr
from asaql.spark.lowering.laterals import (bind, combinations, event_failure_of, event_udf_calls,
                                           laterals_below)
from asaql.spark.lowering.pattern import prepare_pattern
from asaql.spark.lowering.variants import read_variant_as, with_float_numbers

_INTEGRAL = (T.ByteType, T.ShortType, T.IntegerType, T.LongType)
_NUMERIC = _INTEGRAL + (T.FloatType, T.DoubleType, T.DecimalType)
_JSON_RESULTS = {"topone", "collect", "collecttop"}
_NUMERIC_AGGREGATES = {"sum", "avg", "stdev", "stdevp", "var", "varp"}
_PERCENTILES = {"percentile_cont", "percentile_disc"}


@dataclass
class WindowedStatement:
    index: int
    write: WriteOutput
    aggregate: WindowAggregate
    having: object | None
    project: Project
    inputs: dict[str, Column]  # columns added to the step's input
    spec: StatementSpec
    result_fields: list[T.StructField]  # the step's output columns for this statement
    finish: list[Column]  # the results as SELECT and HAVING read them (JSON parsed)


def split_windowed(write: WriteOutput) -> tuple[Project, object | None, WindowAggregate, object | None]:
    """WriteOutput → Project → [Filter HAVING] → WindowAggregate → [Filter WHERE] → source."""
    project = write.input
    node = project.input
    having = None
    if isinstance(node, Filter):
        having, node = node.predicate, node.input
    if not isinstance(project, Project) or not isinstance(node, WindowAggregate):
        raise InternalError("unexpected plan shape above a window aggregate")
    where = node.input.predicate if isinstance(node.input, Filter) else None
    return project, having, node, where


def is_windowed(write: WriteOutput) -> bool:
    node = write
    while node.children:
        if isinstance(node, WindowAggregate):
            return True
        node = node.children[0]
    return False


def prepare(index: int, write: WriteOutput, events: DataFrame, scope: Scope,
            record: Column) -> WindowedStatement:
    """`events` is the stream before the step (for types); `record` the input record as JSON.

    With JOINs of reference data or APPLY, an event counts once per partner combination: its
    inputs travel as an array of structs (one per combination) that the step explodes."""
    project, having, aggregate, where = split_windowed(write)
    if isinstance(aggregate.window, MatchPattern):  # MATCH_RECOGNIZE: no HAVING, no WHERE
        inputs, spec, fields, finish = prepare_pattern(index, aggregate, events, scope)
        return WindowedStatement(index, write, aggregate, None, project, inputs, spec, fields,
                                 finish)
    scope = scope.for_statement()  # its own failures (the group's statements share the scope)
    prefix = f"asaql__s{index}_"
    laterals = laterals_below(write)
    aliases = [lateral.alias for lateral in laterals]
    combos = combinations(laterals, scope, event_udf_calls(write)) if laterals else None
    # With laterals, types come from the first combination (lambda variables have none).
    typed_scope = bind(scope, F.try_element_at(combos, F.lit(1)), aliases) if laterals else scope
    built = _statement_inputs(aggregate, where, prefix, typed_scope, record)
    inputs, groups, session_keys, values, specs = built
    types = _types(events, inputs)
    # a group value typed per event (a variant: Spark groups none) is grouped by its JSON text
    # and read back as the value it was
    texts = {name for name in groups if isinstance(types.get(name), T.VariantType)}
    for name in texts:
        inputs[name], types[name] = F.to_json(inputs[name]), T.StringType()
    converted = set()
    for spec in specs:  # numeric aggregates read numbers: anything else is converted (or NULL)
        column = spec.order_by[0][0] if spec.function in _PERCENTILES else spec.column
        if spec.function in _NUMERIC_AGGREGATES | _PERCENTILES and column is not None \
                and not isinstance(types[column], _NUMERIC):
            inputs[column] = inputs[column].try_cast("double")
            types[column] = T.DoubleType()
            converted.add(column)
    failure = record_column = exploded = None
    if laterals:
        exploded = prefix + "rows"
        inputs = {exploded: _per_combination(combos, aggregate, where, prefix, scope, record,
                                             aliases, converted)}
        reason = event_failure_of(combos, scope)  # a UDF of the event's own fields failed
        if reason is not None:  # the event is set aside: no combination of it counts
            failure, record_column = prefix + "failure", prefix + "record"
            inputs[exploded] = F.when(reason.isNull(), inputs[exploded])
            inputs[failure] = reason
            inputs[record_column] = record
    elif typed_scope.failures:  # a failed CAST sets the event aside from this statement's windows
        failure, record_column = prefix + "failure", prefix + "record"
        reason = first_failure(typed_scope.failures)[1]
        inputs[failure] = reason
        inputs[record_column] = record
        inputs[prefix + "where"] = inputs.get(prefix + "where", F.lit(True)) & reason.isNull()
    result_groups = [f"asaql__r{index}_g{j}" for j in range(len(groups))]
    result_aggregates = [f"asaql__r{index}_a{k}" for k in range(len(specs))]
    fields = [T.StructField(name, T.LongType() if source == C.EVENT_TIMESTAMP else types[source],
                            True)
              for name, source in zip(result_groups, groups)]
    finish = [with_float_numbers(F.parse_json(F.col(name))) if source in texts else F.col(name)
              for name, source in zip(result_groups, groups)]
    for call, spec, name in zip(aggregate.aggregates, specs, result_aggregates):
        step_type, final = _result_type(call, spec, types, scope.schema)
        fields.append(T.StructField(name, step_type, True))
        finish.append(F.from_json(F.col(name), final) if (call.function in _JSON_RESULTS
                                                          or spec.script is not None)
                      and step_type == T.StringType() and final != T.StringType() else F.col(name))
    spec = StatementSpec(
        index=index, window=aggregate.window,
        where=prefix + "where" if prefix + "where" in inputs else None,
        groups=tuple(groups), session_keys=tuple(session_keys), values=tuple(values),
        aggregates=tuple(specs), result_groups=tuple(result_groups),
        result_aggregates=tuple(result_aggregates), failure=failure, record=record_column,
        exploded=exploded)
    return WindowedStatement(index, write, aggregate, having, project, inputs, spec, fields, finish)


def _statement_inputs(aggregate: WindowAggregate, where, prefix: str, scope: Scope,
                      record: Column):
    """The columns the step reads for one statement: WHERE, group values, session keys, what
    the aggregates read. → (inputs, groups, session keys, values, aggregate specs)."""
    inputs: dict[str, Column] = {}
    if where is not None:
        inputs[prefix + "where"] = F.coalesce(lower_expr(where, scope), F.lit(False))
    groups = []
    for j, expr in enumerate(aggregate.group_by):
        if isinstance(expr, E.EventTimestamp):  # the step's own System.Timestamp column
            groups.append(C.EVENT_TIMESTAMP)
            continue
        groups.append(prefix + f"g{j}")
        inputs[groups[-1]] = lower_expr(expr, scope)
    session_keys = []
    if isinstance(aggregate.window, SessionWindow):
        for m, expr in enumerate(aggregate.window.partition_by):
            session_keys.append(prefix + f"k{m}")
            inputs[session_keys[-1]] = lower_expr(expr, scope)
    values: list[str] = []
    specs = [_aggregate_inputs(call, f"{prefix}a{k}", scope, record, inputs, values)
             for k, call in enumerate(aggregate.aggregates)]
    return inputs, groups, session_keys, values, specs


def _per_combination(combos: Column, aggregate: WindowAggregate, where, prefix: str,
                     scope: Scope, record: Column, aliases: list[str], converted: set) -> Column:
    """array<struct<the statement's inputs>>: one element per partner combination that WHERE
    keeps (a failed CAST there gives NULL, as TRY_CAST)."""
    def element(combo: Column) -> Column:
        inputs = _statement_inputs(aggregate, where, prefix, bind(scope, combo, aliases), record)[0]
        return F.struct(*[(column.try_cast("double") if name in converted else column).alias(name)
                          for name, column in inputs.items()])

    elements = F.transform(combos, element)
    if where is None:
        return elements
    return F.filter(elements, lambda e: e.getField(prefix + "where"))


def _types(events: DataFrame, inputs: dict) -> dict:
    if not inputs:
        return {}
    return {f.name: f.dataType for f in events.select(*[c.alias(n) for n, c in inputs.items()]).schema.fields}


def _aggregate_inputs(call: AggregateCall, name: str, scope: Scope, record: Column,
                      inputs: dict, values: list) -> AggregateSpec:
    """Adds the columns the aggregate reads to `inputs`; → its AggregateSpec."""
    def add(column_name: str, column: Column) -> str:
        inputs[column_name] = column
        values.append(column_name)
        return column_name

    order = tuple((add(f"{name}_o{m}", lower_expr(key.expr, scope)), key.descending)
                  for m, key in enumerate(call.order_by))
    column = add(name, _numeric_if_variant(call, lower_expr(call.arg, scope), scope)) \
        if call.arg is not None else None
    record_column = json_column = script = output_type = None
    if call.function.startswith("uda."):  # its values cross as JSON: records and arrays intact
        from asaql.spark.lowering.javascript import aggregate_function

        function = aggregate_function(call)
        script, output_type = function.script, function.output_type
        json_column = add(f"{name}_json", F.to_json(F.array(lower_expr(call.arg, scope))))
    elif call.function in _JSON_RESULTS:
        if call.arg is None:
            record_column = add(f"{name}_rec", record)
        elif call.function != "topone":
            json_column = add(f"{name}_json", F.to_json(F.array(lower_expr(call.arg, scope))))
    return AggregateSpec(function=call.function, column=column, distinct=call.distinct,
                         order_by=order, limit=call.limit, fraction=call.fraction,
                         record_column=record_column, json_column=json_column,
                         script=script, output_type=output_type)


# Aggregates of numbers: a value typed per event (a variant: a field whose events disagree in
# type) is read as a float, as ASA's MIN and MAX convert theirs ("will try to implicitly cast
# it to FLOAT"); a value that is no number (text that does not convert, a record) is a data
# error: the event is set aside from the statement's windows, as for a failed CAST.
def _numeric_if_variant(call: AggregateCall, argument: Column, scope: Scope) -> Column:
    """A variant argument of MIN, MAX or an aggregate of numbers, as a float: ASA's MIN and MAX
    "try to implicitly cast it to FLOAT. Type mismatches will result in errors"."""
    if call.function not in _NUMERIC_AGGREGATES | {"min", "max"} \
            or not isinstance(scope.type_of(argument), T.VariantType):
        return argument
    return read_variant_as(argument, "double", call.function.upper(), call.span, scope)


def _result_type(call: AggregateCall, spec: AggregateSpec, types: dict, record_type: T.StructType):
    """→ (type in the step's output, type after parsing JSON results)."""
    argument = types.get(spec.column)
    function = call.function
    if function == "count":
        return T.LongType(), T.LongType()
    if function == "sum":
        kind = T.LongType() if isinstance(argument, _INTEGRAL) else T.DoubleType()
        return kind, kind
    if function in {"avg", "stdev", "stdevp", "var", "varp", "percentile_cont"}:
        return T.DoubleType(), T.DoubleType()
    if function == "percentile_disc":
        kind = types[spec.order_by[0][0]]
        return kind, kind
    if function in {"min", "max"}:
        return argument, argument
    if spec.script is not None:
        from asaql.spark.lowering.javascript import output_spark_type

        kind = output_spark_type(spec.output_type)
        return kind, T.ArrayType(T.StringType()) if spec.output_type == "array" else kind
    element = record_type if call.arg is None else argument
    if function == "topone":
        return (argument, argument) if call.arg is not None else (T.StringType(), record_type)
    if function == "collect":
        return T.StringType(), T.ArrayType(element)
    if function == "collecttop":
        return T.StringType(), T.ArrayType(T.StructType([
            T.StructField("rank", T.LongType()), T.StructField("value", element)]))
    raise InternalError(f"no result type for {function}")


def results_scope(statement: WindowedStatement, schema: T.StructType, stream=None) -> Scope:
    """What HAVING and SELECT of the statement read, on a batch of its results."""
    groups = len(statement.spec.groups)
    return Scope(schema, statement.finish[:groups], statement.finish[groups:], frame=stream)
