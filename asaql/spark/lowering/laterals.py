"""JOIN with reference data and CROSS/OUTER APPLY on Spark: for each event, the array of its
partner combinations (one struct per combination, a field per alias), built with Spark's
higher-order functions so that no row leaves its micro-batch and no shuffle is added."""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.core.fields import field_names
from asaql.errors import ConfigurationError
from asaql.plan import expressions as E
from asaql.plan.clauses import ApplyElements, ReferenceJoin, StreamJoin
from asaql.plan.nodes import ApplyToElements, JoinReference, JoinStreams, PlanNode
from asaql.runtime import columns as C
from asaql.spark.lowering.expressions import Scope, lower_expr
from asaql.spark.lowering.variants import as_variant
from asaql.spark.sources.present_keys import keys_column
from asaql.spark.lowering.keys import key_text, pair_time, partners_type

_SEED = "_asaql_seed"
_HOISTED = "_asaql_udf"  # seed fields: the event's own UDF results (event_udf_calls)


def laterals_below(node) -> list:
    """The join/apply nodes of a statement, in FROM order (the plan holds them top-down)."""
    found = []
    while node.children:
        if isinstance(node, (JoinReference, ApplyToElements, JoinStreams)):
            found.append(node.apply if isinstance(node, ApplyToElements) else node.join)
        node = node.children[0]
    return list(reversed(found))


def event_udf_calls(write: PlanNode) -> list[E.FunctionCall]:
    """The `udf.` calls of a statement that read no joined row or element. Spark runs no Python
    function inside a lambda (UNSUPPORTED_FEATURE.LAMBDA_FUNCTION_WITH_PYTHON_UDF), so these
    are evaluated once per event, in the seed of the combinations, outside every lambda."""
    found: dict = {}

    def visit(value) -> bool:
        """Whether `value` reads a joined row or an element (an alias)."""
        if isinstance(value, tuple):
            return any([visit(v) for v in value])
        if not hasattr(type(value), "__dataclass_fields__"):
            return False
        aliased = isinstance(value, E.AliasField)
        for name in field_names(type(value)):
            aliased = visit(getattr(value, name)) or aliased
        if isinstance(value, E.FunctionCall) and not aliased \
                and value.name.name.lower().startswith("udf."):
            found.setdefault(value, None)
        return aliased

    visit(write)
    return list(found)


def combinations(laterals: list, scope: Scope, udf_calls: list = ()) -> Column:
    """array<struct<alias: row, …>>: every combination of partners of the event, in order; the
    ON of a later join sees the rows of the earlier ones. `udf_calls` (event_udf_calls) are
    evaluated here, once per event: a failure is the event's (`scope.failures`)."""
    seed = [F.lit(True).alias(_SEED)]
    scope.hoisted, scope.event_errors = {}, []
    for number, call in enumerate(udf_calls):
        name = f"{_HOISTED}{number}"
        probe = scope.for_statement()  # the call's failures travel in the seed too
        seed.append(lower_expr(call, probe).alias(name))
        for k, (flag, why) in enumerate(probe.failures):
            scope.event_errors.append(f"{name}_e{k}")
            seed.append(F.when(F.coalesce(flag, F.lit(False)), why).alias(scope.event_errors[-1]))
        scope.hoisted[call] = name
    if any(isinstance(lateral, StreamJoin) for lateral in laterals):
        seed.append(F.col(C.SYSTEM_TIMESTAMP).alias(C.JOIN_TIME))  # the left event's own
    combos = F.array(F.struct(*seed))
    for lateral in laterals:
        if isinstance(lateral, ReferenceJoin):
            table = scope.references.get(lateral.input_name.lower())
            if table is not None:
                scope.alias_schemas[lateral.alias] = table.schema
        elif isinstance(lateral, StreamJoin):
            scope.alias_schemas[lateral.alias] = scope.partners[lateral.alias][1]
    for k, lateral in enumerate(laterals):
        combos = F.flatten(F.transform(combos, _extender(lateral, laterals[:k], scope, combos)))
    return combos


def _extender(lateral, earlier: list, scope: Scope, combos: Column):
    """A one-argument function for Spark's transform (it counts the parameters). Spark cannot
    type an expression over the lambda's variable: the first combination so far stands in for
    it where a type is needed (APPLY over an earlier APPLY's elements)."""
    aliases = [previous.alias for previous in earlier]
    typing = bind(scope, F.try_element_at(combos, F.lit(1)), aliases)
    return lambda combo: _extend(combo, lateral, bind(scope, combo, aliases), typing)


def event_failure(combo: Column, scope: Scope) -> Column | None:
    """Why a UDF of the event's own fields failed on it (NULL: none did), read from a
    combination (every one carries the event's seed); None when no such call can fail."""
    if not scope.event_errors:
        return None
    return F.coalesce(*[combo.getField(name) for name in scope.event_errors])


def event_failure_of(combos: Column, scope: Scope) -> Column | None:
    """The same for the event, over its combinations: an event without partners has none (its
    UDFs in SELECT or WHERE never run, as in ASA)."""
    if not scope.event_errors:
        return None
    return F.try_element_at(F.filter(F.transform(combos, lambda c: event_failure(c, scope)),
                                     lambda why: why.isNotNull()), F.lit(1))


def bind(scope: Scope, combo: Column, aliases: list[str]) -> Scope:
    bound = scope.with_aliases({alias: combo.getField(alias) for alias in aliases})
    bound.combo = combo
    if any(alias in scope.partners for alias in aliases):  # a joined row's own time
        bound.timestamp = combo.getField(C.JOIN_TIME)
    return bound


def _extend(combo: Column, lateral, scope: Scope, typing: Scope) -> Column:
    partners, element = _partners(lateral, scope, typing)
    if lateral.outer if isinstance(lateral, ApplyElements) else lateral.left:
        partners = F.when(F.size(partners) > 0, partners).otherwise(
            F.array(F.lit(None).cast(element)))
    if isinstance(lateral, StreamJoin):
        # System.Timestamp, JOIN after JOIN as ASA's left-deep joins: the later of the rows
        # joined so far and the partner; without a partner, theirs + the upper bound
        return F.transform(partners, lambda partner: combo.withField(
            lateral.alias, partner.getField("r")).withField(
            _time_field(lateral.alias), partner.getField("t")).withField(
            C.JOIN_TIME, pair_time(combo.getField(C.JOIN_TIME), partner, lateral.upper_us)))
    return F.transform(partners, lambda partner: combo.withField(lateral.alias, partner))


def _partners(lateral, scope: Scope, typing: Scope) -> tuple[Column, T.DataType]:
    if isinstance(lateral, ReferenceJoin):
        return _reference_partners(lateral, scope)
    if isinstance(lateral, StreamJoin):
        return _stream_partners(lateral, scope)
    return _elements(lateral, scope, typing)


def _time_field(alias: str) -> str:
    """A combination's field holding a joined stream's event time (µs; NULL unmatched)."""
    return f"{C.JOIN_TIME}_{alias}"


def _stream_partners(join: StreamJoin, scope: Scope) -> tuple[Column, T.DataType]:
    """The right events the step paired with the left one, kept by the rest of ON (and by each
    DATEDIFF relating the new input with a stream joined before: the step used a wider bound)."""
    candidates, schema = scope.partners[join.alias]
    candidates_type = partners_type(schema)
    bounds = [(join.anchor, join.lower_us, join.upper_us)] if join.anchor is not None else []
    for alias, low, high in [*bounds, *join.other_bounds]:
        related = F.unix_micros(F.col(C.SYSTEM_TIMESTAMP)) if alias is None \
            else scope.combo.getField(_time_field(alias))
        candidates = F.filter(candidates, _within(related, low, high))
    if join.residual is not None:
        candidates = F.filter(candidates, lambda partner: F.coalesce(lower_expr(
            join.residual, _with_partner(scope, join, partner)), F.lit(False)))
    return F.coalesce(candidates, F.array().cast(candidates_type)), candidates_type.elementType


def _within(related: Column, low: int | None, high: int | None):
    """A one-argument test of a partner (Spark counts the parameters): lower ≤ its time −
    `related` ≤ upper, an open end unbounded; NULL (a LEFT side without a partner) false."""
    def test(partner: Column) -> Column:
        gap = partner.getField("t") - related
        holds = F.lit(True)
        if low is not None:
            holds = holds & (gap >= low)
        if high is not None:
            holds = holds & (gap <= high)
        return F.coalesce(holds, F.lit(False))
    return test


def _with_partner(scope: Scope, join: StreamJoin, partner: Column) -> Scope:
    bound = scope.with_aliases({join.alias: partner.getField("r")})
    bound.timestamp = None
    return bound


def _reference_partners(join: ReferenceJoin, scope: Scope) -> tuple[Column, T.DataType]:
    table = scope.references.get(join.input_name.lower())
    if table is None:
        raise ConfigurationError(f"no file given for reference data '{join.input_name}': use "
                                 f"--reference {join.input_name}=PATH")
    own = scope.with_aliases({join.alias: table.record()})
    if join.keys:
        table_keys = [lower_expr(reference, own) for _, reference in join.keys]
        event_keys = [lower_expr(event, scope) for event, _ in join.keys]
        candidates = F.coalesce(F.try_element_at(table.by_key(table_keys), key_text(event_keys)),
                                F.array().cast(T.ArrayType(table.schema)))
    else:
        candidates = table.rows()
    if join.residual is not None:
        candidates = F.filter(candidates, lambda row: F.coalesce(
            lower_expr(join.residual, scope.with_aliases({join.alias: row})), F.lit(False)))
    return candidates, table.schema


def _elements(apply: ApplyElements, scope: Scope, typing: Scope) -> tuple[Column, T.DataType]:
    """The elements of an array (properties of a record). ASA reads schema on read: a value that
    is not an array (record) — NULL, a number, a field no event has — has no elements."""
    value = lower_expr(apply.argument, scope)
    kind = scope.type_of(value) or typing.type_of(lower_expr(apply.argument, typing))
    if isinstance(kind, T.VariantType):  # typed per event: an array's or a record's, or none
        shape = "array<variant>" if apply.function == "getarrayelements" \
            else "map<string, variant>"
        value = F.try_variant_get(value, "$", shape)
        kind = T.ArrayType(T.VariantType()) if apply.function == "getarrayelements" \
            else T.MapType(T.StringType(), T.VariantType())
    name, content = apply.element_fields
    if apply.function == "getarrayelements":
        item = kind.elementType if isinstance(kind, T.ArrayType) else T.StringType()
        element = T.StructType([T.StructField(name, T.LongType()), T.StructField(content, item)])
        elements = F.transform(value, lambda x, i: F.struct(i.cast("bigint").alias(name),
                                                            x.alias(content))) \
            if isinstance(kind, T.ArrayType) else None
    else:
        # Property values differ in type: they travel as VARIANT (written as their JSON).
        element = T.StructType([T.StructField(name, T.StringType()),
                                T.StructField(content, T.VariantType())])
        elements = F.when(value.isNotNull(), F.array(*[
            F.struct(F.lit(f.name).alias(name), as_variant(value.getField(f.name), f.dataType)
                     .alias(content))
            for f in kind.fields])) if isinstance(kind, T.StructType) else None
        if isinstance(kind, T.MapType):  # a record typed per event: its properties
            elements = F.transform(F.map_entries(value), lambda e: F.struct(
                e.getField("key").alias(name), e.getField("value").alias(content)))
        present = _present_keys(apply.argument, scope)
        if elements is not None and present is not None:  # only the properties it has
            keys = F.transform(present, lambda key: F.lower(key))  # ASA's names ignore case
            elements = F.filter(elements, lambda e: F.coalesce(
                F.array_contains(keys, F.lower(e.getField(name))), F.lit(True)))
    scope.alias_schemas[apply.alias] = element  # its fields' types, known inside the lambdas
    scope.element_aliases.add(apply.alias)
    empty = F.array().cast(T.ArrayType(element))
    return (empty if elements is None else F.coalesce(elements, empty)), element


def _present_keys(argument, scope: Scope) -> Column | None:
    """The keys the event's record at `argument` has, when the reader noted them
    (present_keys.py): a field of the input's own events."""
    if not isinstance(argument, E.Field) or scope.frame is None:
        return None
    column = keys_column(argument.path)
    return F.col(f"`{column}`") if column in scope.frame.columns else None
