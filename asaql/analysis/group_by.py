"""GROUP BY bound: the window (or windows of Windows(…)), the grouping expressions, the
aggregates, and SELECT and HAVING rewritten over GroupRef, AggregateRef and System.Timestamp."""

from __future__ import annotations

import dataclasses

from asaql.analysis.aggregates import bind_aggregate, is_aggregate
from asaql.analysis.analytics import is_analytic
from asaql.analysis.binder import Binder, check_unique, column_name, is_system_window
from asaql.analysis.bound import (
    AggregateCall, AggregateRef, AnalyticCall, EventTimestamp, Field, GroupRef, WindowId,
    map_children, transform, walk,
)
from asaql.analysis.statements import Aggregation, OutputColumn, comparable
from asaql.analysis.windows import (
    SessionWindow, SnapshotWindow, is_multiple_windows, is_window_call, window_alternatives,
    window_spec,
)
from asaql.errors import InvalidQueryError
from asaql.syntax import ast


def groups_partition_id(aggregation: Aggregation) -> bool:
    return comparable(Field(path=("PartitionId",))) in {comparable(e) for e in aggregation.group_by}


def check_progress_keys(aggregation: Aggregation, over, partitioned: bool, group_by) -> None:
    """ASA: with substreams every GROUP BY holds the OVER columns; a PARTITION BY PartitionId
    step groups within a partition, so GROUP BY holds PartitionId."""
    grouped = {comparable(e) for e in aggregation.group_by}
    for field in over:
        if comparable(field) not in grouped:
            raise InvalidQueryError(
                f"with TIMESTAMP BY … OVER, GROUP BY must include the OVER column "
                f"'{'.'.join(field.path)}' (each substream has its own watermark)", group_by.span)
    if partitioned and comparable(Field(path=("PartitionId",))) not in grouped:
        raise InvalidQueryError("with PARTITION BY PartitionId, GROUP BY must include PartitionId "
                                "(each partition is aggregated on its own)", group_by.span)


class GroupByBinder:
    """Binds a GROUP BY statement: the window, the grouping expressions, the aggregates, and
    SELECT and HAVING rewritten over them."""

    def __init__(self, binder: "Binder", s: ast.SelectStatement):
        self.binder = binder
        self.s = s
        self.aggregates: list[AggregateCall] = []

    def bind(self) -> list[tuple[Aggregation, tuple]]:
        """(aggregation, SELECT columns) per window: one, or one per window of Windows(…),
        whose results ASA unions (System.Window().Id tells them apart)."""
        windows, group_by = self._group_by()
        self.group_keys = [comparable(e) for e in group_by]
        columns, by_alias = [], {}
        seen: dict[str, ast.Node] = {}
        for position, item in enumerate(self.s.items, start=1):
            if isinstance(item.expr, ast.Star):
                raise InvalidQueryError("SELECT * cannot be used with GROUP BY: name the grouped "
                                        "columns and aggregates", item.span)
            name = column_name(item, position)
            check_unique(name, item, seen)
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
        windows, window_item, group_by, stamps = None, None, [], []
        bind_partition = lambda e: self.binder.bind(e, allow_system_timestamp=False)
        for item in self.s.group_by.items:
            if isinstance(item, ast.SystemTimestamp):
                stamps.append(item)  # a snapshot window, or a key beside another window
                continue
            if is_window_call(item) or is_multiple_windows(item):
                if windows is not None:
                    raise InvalidQueryError("only one window is allowed in GROUP BY (ASA's "
                                            "Windows(…) combines several)", item.span)
                window_item = item
                windows = window_alternatives(item, bind_partition) if is_multiple_windows(item) \
                    else ((None, window_spec(item, bind_partition)),)
                continue
            if any(is_aggregate(n) for n in walk(item)):
                raise InvalidQueryError("GROUP BY cannot contain an aggregate", item.span)
            group_by.append(self.binder.bind(item, allow_system_timestamp=False,
                                             what="GROUP BY expressions", analytics=True))
        if stamps and windows is None:
            window_item, windows = stamps[0], ((None, SnapshotWindow()),)
        elif stamps and not any(isinstance(e, EventTimestamp) for e in group_by):
            # ASA: "when combined with another window function, System.Timestamp() is treated
            # as a key and not as a window definition"
            group_by.append(EventTimestamp(span=stamps[0].span))
        if windows is None:
            raise InvalidQueryError(
                "a window must be specified: GROUP BY over a stream needs TumblingWindow, "
                "HoppingWindow, SlidingWindow, SessionWindow or System.Timestamp()",
                self.s.group_by.span)
        keys = {comparable(e) for e in group_by}
        for _, window in windows:
            if isinstance(window, SessionWindow) and any(comparable(e) not in keys
                                                         for e in window.partition_by):
                raise InvalidQueryError("the OVER (PARTITION BY …) keys of a SessionWindow "
                                        "must also be in GROUP BY", window_item.span)
        return windows, group_by

    def _bind(self, node):
        """Bind an expression of SELECT or HAVING; aggregates become AggregateCall."""
        if is_system_window(node):
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
        normal = comparable(expr)
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
