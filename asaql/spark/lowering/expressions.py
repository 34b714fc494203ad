"""Plan expressions → pyspark Columns."""

from __future__ import annotations

import copy
import sys
from functools import singledispatch

from pyspark.errors import AnalysisException
from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.errors import InternalError, UnsupportedFeatureError
from asaql.plan import expressions as E
from asaql.plan.expressions import (
    AggregateRef, AliasField, AnalyticCall, Field, FieldAccess, GroupRef,
)
from asaql.runtime import columns as C
from asaql.spark.lowering.scalar_functions import lower_call, lower_like
from asaql.spark.lowering.variants import (NESTED, as_variant, unwrap_variants, variant_text,
                                           with_float_numbers)

SPARK_TYPES = {
    "bigint": "bigint",
    "float": "double",
    "nvarchar(max)": "string",
    "datetime": "timestamp",
    "bit": "boolean",
}

_CAST_TYPES = {"bigint": T.LongType(), "double": T.DoubleType(), "string": T.StringType(),
               "timestamp": T.TimestampType(), "boolean": T.BooleanType()}

_BINARY = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "%": lambda a, b: a % b,
    "&": lambda a, b: a.bitwiseAND(b),
    "|": lambda a, b: a.bitwiseOR(b),
    "^": lambda a, b: a.bitwiseXOR(b),
    "=": lambda a, b: a == b,
    "<>": lambda a, b: a != b,
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
    "AND": lambda a, b: a & b,
    "OR": lambda a, b: a | b,
}


class Scope:
    """What a column reference can see: the input's payload schema; above a window aggregate,
    the columns holding its group values and aggregates."""

    def __init__(self, schema: T.StructType, groups: list[Column] = (), aggregates: list[Column] = (),
                 frame=None):
        self.schema = schema
        self.groups = list(groups)
        self.aggregates = list(aggregates)
        self.frame = frame  # a DataFrame the columns resolve against (for types), if known
        self.warned: set[str] = set()
        # the columns of fields whose events disagree in type (variants), as lowered here
        self.mixed: list[Column] = []
        self.element_aliases: set[str] = set()  # APPLY's aliases: elements, not input rows
        self.aliases: dict[str, Column] = {}  # joined reference rows, applied elements
        self.references: dict = {}  # reference data tables by input name (lower case)
        self.alias_schemas: dict[str, T.StructType] = {}  # joined reference rows' fields
        # CASTs that can fail on a row: (failed, reason) columns, so the row is set aside
        self.failures: list[tuple[Column, Column]] = []
        # analytic calls → their value, computed by the stateful step (asaql/spark/lowering/analytics.py)
        self.analytics: dict = {}
        # JOIN of two streams: the right input's alias → (its partners per left event, schema)
        self.partners: dict = {}
        # System.Timestamp() when it is not the row's own (a joined row's, per combination)
        self.timestamp: Column | None = None
        # With JOINs or APPLY: UDF calls that read the event only, evaluated once per event
        # beside the lambdas (call → field of `combo`, the combination being lowered)
        self.hoisted: dict = {}
        self.event_errors: list[str] = []  # the seed fields holding their failures
        self.combo: Column | None = None
        # Types known when lowering (e.g. a reference row's field) of columns Spark cannot
        # type here (inside a lambda): (column, type), shared by the copies of the scope
        self.known_types: list[tuple[Column, T.DataType]] = []

    def is_mixed(self, column: Column) -> bool:
        return any(column is mixed for mixed in self.mixed)

    def record_failure(self, failed: Column, reason: Column) -> None:
        # Inside a join or APPLY (Spark lambda) a failure cannot reach the row: the value is
        # NULL there, as TRY_CAST gives (docs/design.md).
        if not self.aliases:
            self.failures.append((failed, reason))

    def for_statement(self) -> "Scope":
        """The same scope with no failures recorded yet: one statement's own."""
        scope = copy.copy(self)
        scope.failures = []
        return scope

    def with_aliases(self, aliases: dict[str, Column]) -> "Scope":
        """The same scope with rows bound to aliases (inside a lambda over partner rows)."""
        scope = copy.copy(self)
        scope.aliases = {**self.aliases, **aliases}
        return scope

    def typed(self, column: Column, kind: T.DataType | None) -> Column:
        """`column`, its type noted for type_of (which cannot ask Spark inside a lambda)."""
        if kind is not None:
            self.known_types.append((column, kind))
        return column

    def type_of(self, column: Column) -> T.DataType | None:
        """The Spark type of a lowered expression, or None when no frame is known."""
        known = next((kind for noted, kind in self.known_types if noted is column), None)
        if known is not None:
            return known
        if self.frame is None:
            return None
        try:
            return self.frame.select(column).schema.fields[0].dataType
        except AnalysisException:  # inside a Spark lambda (joins, APPLY): not resolvable here
            return None

    def field(self, node: Field) -> Column:
        if not node.path:  # the whole event (`UDF.f(input)`): its payload as a record
            return F.struct(*[F.col(f"`{f.name}`") for f in self.schema.fields])
        head = next((f for f in self.schema.fields if f.name.lower() == node.path[0].lower()), None)
        if head is None and node.text_if_missing is not None:
            return F.lit(node.text_if_missing)  # `"text"` that names no field
        if head is None:
            # ASA is schema-on-read: a field no record has is NULL, not an error (a run reports
            # it before it starts, as check does: RunOptions.on_schemas)
            return F.lit(None)
        value = field_path(F.col(f"`{head.name}`"), node.path[1:], head.dataType)
        if isinstance(head.dataType, T.VariantType):  # a field whose events disagree in type
            value = self.typed(with_float_numbers(value), T.VariantType())
            self.mixed.append(value)
        return value

    def warn_missing(self, name: str, span, source: str = "input record") -> None:
        if name not in self.warned:
            self.warned.add(name)
            where = f" (line {span.line})" if span else ""
            print(f"warning: no {source} has a field '{name}'{where}; it reads as NULL",
                  file=sys.stderr)


def first_failure(failures: list[tuple[Column, Column]]) -> tuple[Column, Column]:
    """(whether any CAST failed on the row, the reason of the first that did)."""
    failed = F.lit(False)
    reason = F.lit(None).cast("string")
    for flag, why in reversed(failures):
        failed = failed | F.coalesce(flag, F.lit(False))
        reason = F.when(F.coalesce(flag, F.lit(False)), why).otherwise(reason)
    return failed, reason


@singledispatch
def lower_expr(node, scope: Scope) -> Column:
    raise UnsupportedFeatureError(f"{type(node).__name__} is not supported yet",
                                  getattr(node, "span", None))


@lower_expr.register
def _(node: Field, scope: Scope) -> Column:
    return scope.field(node)


@lower_expr.register
def _(node: AliasField, scope: Scope) -> Column:
    schema = scope.alias_schemas.get(node.alias)
    if schema is not None and node.path and \
            node.path[0].lower() not in {f.name.lower() for f in schema.fields}:
        # schema on read, as for input fields: a field no row has is NULL (a joined input's
        # and a reference's are reported before the run, as check does; an element's here)
        if node.alias in scope.element_aliases:
            scope.warn_missing(".".join((node.alias, *node.path)), node.span, "element")
        return F.lit(None)
    column = scope.aliases[node.alias]
    if schema is None:
        return field_path(column, node.path, scope.type_of(column))
    return scope.typed(field_path(column, node.path, schema), path_type(schema, node.path))


@lower_expr.register
def _(node: FieldAccess, scope: Scope) -> Column:
    column = lower_expr(node.operand, scope)
    return field_path(column, node.path, scope.type_of(column))


def field_path(column: Column, path, kind: T.DataType | None) -> Column:
    """`column.a.b`: ASA reads a field a record does not have, or a field of a value that is
    no record, as NULL (Spark would fail the query). `kind`: the column's type (None: not
    known here, e.g. inside a Spark lambda; then Spark resolves the path)."""
    for part in path:
        if kind is None:
            column = column.getField(part)
        elif isinstance(kind, T.StructType):
            field = next((f for f in kind.fields if f.name.lower() == part.lower()), None)
            if field is None:
                return F.lit(None)
            column, kind = column.getField(field.name), field.dataType
        elif isinstance(kind, T.MapType) and isinstance(kind.keyType, T.StringType):
            column, kind = F.try_element_at(column, F.lit(part)), kind.valueType
        elif isinstance(kind, T.VariantType):  # JSON_PARSE's value: the field, if it has one
            quoted = part.replace("\\", "\\\\").replace("'", "\\'")
            column = F.try_variant_get(column, f"$['{quoted}']", "variant")
        else:
            return F.lit(None)
    return column


def path_type(kind: T.DataType | None, path) -> T.DataType | None:
    """The type field_path gives `column.a.b` of a record of type `kind` (None: not known)."""
    for part in path:
        if isinstance(kind, T.StructType):
            field = next((f for f in kind.fields if f.name.lower() == part.lower()), None)
            kind = field.dataType if field is not None else None
        elif isinstance(kind, T.MapType):
            kind = kind.valueType
        else:
            return None
    return kind


@lower_expr.register
def _(node: GroupRef, scope: Scope) -> Column:
    return scope.groups[node.index]


@lower_expr.register
def _(node: AnalyticCall, scope: Scope) -> Column:
    if node not in scope.analytics:
        raise InternalError(f"no value for the analytic call {node.function.upper()}()", node.span)
    return scope.analytics[node]


@lower_expr.register
def _(node: AggregateRef, scope: Scope) -> Column:
    return scope.aggregates[node.index]


@lower_expr.register
def _(node: E.Literal, scope: Scope) -> Column:
    return F.lit(node.value)


@lower_expr.register
def _(node: E.SystemTimestamp, scope: Scope) -> Column:
    return scope.timestamp if scope.timestamp is not None else F.col(C.SYSTEM_TIMESTAMP)


@lower_expr.register
def _(node: E.UnaryOp, scope: Scope) -> Column:
    operand = lower_expr(node.operand, scope)
    if node.op == "NOT":
        return ~operand
    if node.op == "-":
        return -_bit_as_number(operand, scope)
    if node.op == "~":
        if isinstance(scope.type_of(operand), T.BooleanType):
            return ~operand  # ~ of a bit is a bit
        return F.bitwise_not(_as_bigint(operand, scope))
    return operand


@lower_expr.register
def _(node: E.BinaryOp, scope: Scope) -> Column:
    left, right = lower_expr(node.left, scope), lower_expr(node.right, scope)
    if node.op == "+" and _is_text(left, scope) and _is_text(right, scope):
        return F.concat(left, right)  # T-SQL: nvarchar + nvarchar joins them (NULL if one is)
    if node.op in _COMPARISONS or node.op in ("+", "-", "*", "/", "%"):
        left, right = unwrap_variants(left, right, scope, node.op, node.span)
    if node.op in _COMPARISONS:
        left, right = _as_numbers_if_mixed(left, right, scope)
    if node.op in _ARITHMETIC:  # a bit in arithmetic is 0 or 1 (Spark refuses BOOLEAN there)
        left, right = (_bit_as_number(side, scope) for side in (left, right))
    if node.op in _BITWISE:
        return _bitwise(node.op, left, right, scope)
    return _BINARY[node.op](left, right)


_BITWISE = {"&": "AND", "|": "OR", "^": "XOR"}
_ARITHMETIC = ("+", "-", "*", "/", "%")


def _bit_as_number(value: Column, scope: Scope) -> Column:
    return value.cast("bigint") if isinstance(scope.type_of(value), T.BooleanType) else value


def _bitwise(op: str, left: Column, right: Column, scope: Scope) -> Column:
    """T-SQL's bitwise operators: two bits give a bit; otherwise both sides as bigints (a bit
    is 0 or 1, text that is a whole number converts, anything else gives NULL). A NULL operand
    gives NULL, bits too: bitwise on 0 and 1, not SQL's logical AND (NULL AND false is false)."""
    if all(isinstance(scope.type_of(side), T.BooleanType) for side in (left, right)):
        return _BINARY[op](left.cast("bigint"), right.cast("bigint")).cast("boolean")
    return _BINARY[op](_as_bigint(left, scope), _as_bigint(right, scope))


def _as_bigint(value: Column, scope: Scope) -> Column:
    kind = scope.type_of(value)
    if kind is None:  # not known here (inside a Spark lambda): as it is
        return value
    if isinstance(kind, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return value.cast("bigint")
    if isinstance(kind, T.BooleanType):
        return value.cast("bigint")
    if isinstance(kind, (T.FloatType, T.DoubleType, T.DecimalType)):
        return F.when(value == F.floor(value), value.cast("bigint"))
    if isinstance(kind, T.StringType):
        return F.trim(value).try_cast("bigint")
    return F.lit(None).cast("bigint")


_COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")


def _as_numbers_if_mixed(left: Column, right: Column, scope: Scope) -> tuple[Column, Column]:
    """Text compared with a number is read as a float (a CSV input's values are text): Spark
    would cast the text to the number's type, and '25.6' > 25 would compare 25 with 25. Text
    that is not a number reads as NULL, so the comparison is not true. A bit compared with a
    number is 0 or 1, as T-SQL converts it (Spark refuses to compare them)."""
    kinds = [scope.type_of(side) for side in (left, right)]
    numeric = [isinstance(kind, T.NumericType) for kind in kinds]
    text = [isinstance(kind, T.StringType) for kind in kinds]
    bit = [isinstance(kind, T.BooleanType) for kind in kinds]
    if (text[0] and numeric[1]) or (numeric[0] and text[1]):
        return left.cast("double"), right.cast("double")
    if (bit[0] and numeric[1]) or (numeric[0] and bit[1]):
        return _bit_as_number(left, scope), _bit_as_number(right, scope)
    return left, right


def _is_text(column: Column, scope: Scope) -> bool:
    return isinstance(scope.type_of(column), T.StringType)


@lower_expr.register
def _(node: E.IsNull, scope: Scope) -> Column:
    operand = lower_expr(node.operand, scope)
    return operand.isNotNull() if node.negated else operand.isNull()


@lower_expr.register
def _(node: E.Like, scope: Scope) -> Column:
    operand = lower_expr(node.operand, scope)
    if scope.is_mixed(operand):  # LIKE reads text: each event's value as text
        operand = variant_text(operand)
    result = lower_like(operand, lower_expr(node.pattern, scope), node.pattern)
    return ~result if node.negated else result


@lower_expr.register
def _(node: E.InList, scope: Scope) -> Column:
    operand, items = lower_expr(node.operand, scope), [lower_expr(i, scope) for i in node.items]
    if items:  # a value typed per event, read as the type of what it is compared with
        operand = unwrap_variants(operand, items[0], scope, "IN", node.span)[0]
    result = operand.isin(*items)
    return ~result if node.negated else result


@lower_expr.register
def _(node: E.Between, scope: Scope) -> Column:
    operand = lower_expr(node.operand, scope)
    low, high = lower_expr(node.low, scope), lower_expr(node.high, scope)
    operand = unwrap_variants(operand, low, scope, "BETWEEN", node.span)[0]
    result = operand.between(low, high)
    return ~result if node.negated else result


@lower_expr.register
def _(node: E.Cast, scope: Scope) -> Column:
    target = SPARK_TYPES.get(node.type_name)
    if target is None:
        raise UnsupportedFeatureError(f"CAST to {node.type_name} is not supported yet", node.span)
    operand = lower_expr(node.operand, scope)
    value = convert(operand, scope.type_of(operand), target)
    if not node.try_cast:
        # ASA stops the job on a failed CAST; asaql sets the row aside with the reason.
        where = f" (line {node.span.line}, column {node.span.column})" if node.span else ""
        scope.record_failure(operand.isNotNull() & value.isNull(), F.concat(
            F.lit("CAST of '"), operand.cast("string"), F.lit(f"' AS {node.type_name} failed{where}")))
    return scope.typed(value, _CAST_TYPES[target])  # known inside a lambda too


def convert(value: Column, source: T.DataType | None, target: str) -> Column:
    """ASA's conversions where they differ from Spark's cast: datetimes become text as ASA
    writes them; text becomes a datetime only when it is one (ISO 8601)."""
    if target == "string" and isinstance(source, (T.TimestampType, T.TimestampNTZType)):
        return F.concat(F.date_format(value, "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"), F.lit("0Z"))
    if target == "timestamp" and isinstance(source, T.StringType):
        return F.try_to_timestamp(value)
    if target == "bigint" and isinstance(source, (T.FloatType, T.DoubleType)):
        return F.when(value.isNotNull() & ~F.isnan(value), value.try_cast("bigint"))
    return value.try_cast(target)


@lower_expr.register
def _(node: E.FunctionCall, scope: Scope) -> Column:
    return lower_call(node, [lower_expr(a, scope) for a in node.args], scope)


@lower_expr.register
def _(node: E.NameArgument, scope: Scope) -> Column:
    return F.lit(None)  # a date part or an alias: the function reads it from the call


@lower_expr.register
def _(node: E.Case, scope: Scope) -> Column:
    operand = lower_expr(node.operand, scope) if node.operand is not None else None
    conditions = []
    for when in node.whens:
        condition = lower_expr(when.condition, scope)
        conditions.append(operand == condition if operand is not None else condition)
    results = [lower_expr(when.result, scope) for when in node.whens]
    if node.else_ is not None:
        results.append(lower_expr(node.else_, scope))
    results = _one_type(results, scope)
    result = None
    for condition, value in zip(conditions, results):
        result = F.when(condition, value) if result is None else result.when(condition, value)
    if node.else_ is not None:
        result = result.otherwise(results[-1])
    return result



def _one_type(values: list[Column], scope: Scope) -> list[Column]:
    """ASA is typed per value: a CASE may give a record in one row and text in another. When
    its results mix records or arrays with other types, Spark has no common type: they become
    variants, each value written as itself."""
    kinds = [scope.type_of(value) for value in values]
    nested = [isinstance(kind, NESTED) for kind in kinds]
    if not any(nested) or all(nested) and len({k.simpleString() for k in kinds}) == 1:
        return values
    if any(kind is None for kind in kinds):  # not known here (a Spark lambda): as they are
        return values
    return [as_variant(value, kind) for value, kind in zip(values, kinds)]

