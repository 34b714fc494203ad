"""ASA window functions in GROUP BY → window specifications (sizes in microseconds).

Every window is (start, end], aligned to 1970-01-01T00:00:00Z, and its System.Timestamp is its end.
Forms accepted, as in the ASA reference:
  TumblingWindow(unit, size [, offset])       TumblingWindow(Duration(unit, n) [, Offset(unit, n)])
  HoppingWindow(unit, size, hop [, offset])   HoppingWindow(Duration(…), Hop(…) [, Offset(…)])
  SlidingWindow(unit, size)                   SlidingWindow(Duration(unit, n))
  SessionWindow(unit, timeout, maxduration)   SessionWindow(Timeout(…), MaxDuration(…))
                                              [OVER (PARTITION BY key, …)]
  GROUP BY System.Timestamp()                 a snapshot window
Short names (Tumbling, Hopping, Sliding, Session) are the same functions.
"""

from __future__ import annotations

from asaql.core.windows import (  # noqa: F401 (the analysis' window vocabulary)
    MAX_WINDOW_US, MICROSECONDS, HoppingWindow, SessionWindow, SlidingWindow, SnapshotWindow,
    TumblingWindow, WindowSpec,
)
from asaql.errors import InvalidQueryError, UnsupportedFeatureError
from asaql.syntax import ast

_KINDS = {
    "tumblingwindow": "tumbling", "tumbling": "tumbling",
    "hoppingwindow": "hopping", "hopping": "hopping",
    "slidingwindow": "sliding", "sliding": "sliding",
    "sessionwindow": "session", "session": "session",
}
_MULTIPLE = {"windows", "window"}


def is_window_call(node) -> bool:
    return isinstance(node, ast.FunctionCall) and node.name.key in _KINDS


def is_multiple_windows(node) -> bool:
    return isinstance(node, ast.FunctionCall) and node.name.key in _MULTIPLE


def window_alternatives(call: ast.FunctionCall, bind_partition
                        ) -> tuple[tuple[str | None, WindowSpec], ...]:
    """`Windows(def, …)` or `Windows(Window('id', def), …)` → (id, window) per definition
    (ASA: the query runs once per window and the results are their union). Ids are text,
    given for every window or for none, unique case-insensitively."""
    if call.name.key != "windows":
        raise InvalidQueryError("Window('id', window) is a member of Windows(…)", call.span)
    if not call.args or call.star or call.distinct or call.over is not None:
        raise InvalidQueryError("Windows takes window definitions: Windows(TumblingWindow(…), "
                                "HoppingWindow(…), …) or Windows(Window('id', …), …)", call.span)
    alternatives, seen = [], set()
    for arg in call.args:
        window_id = None
        if isinstance(arg, ast.FunctionCall) and arg.name.key == "window":
            if len(arg.args) != 2 or not isinstance(arg.args[0], ast.Literal) \
                    or not isinstance(arg.args[0].value, str):
                raise InvalidQueryError("Window takes an id (a text literal, not NULL) and a "
                                        "window: Window('10 min', TumblingWindow(minute, 10))",
                                        arg.span)
            window_id = arg.args[0].value
            if window_id.lower() in seen:
                raise InvalidQueryError(f"the window id '{window_id}' is used twice in Windows(…)",
                                        arg.args[0].span)
            seen.add(window_id.lower())
            arg = arg.args[1]
        if is_multiple_windows(arg):
            raise InvalidQueryError("Windows(…) cannot be nested", arg.span)
        if isinstance(arg, ast.SystemTimestamp):
            alternatives.append((window_id, SnapshotWindow()))
        elif is_window_call(arg):
            alternatives.append((window_id, window_spec(arg, bind_partition)))
        else:
            raise InvalidQueryError("expected a window (TumblingWindow, HoppingWindow, "
                                    "SlidingWindow, SessionWindow or System.Timestamp())",
                                    getattr(arg, "span", call.span))
    if len({window_id is None for window_id, _ in alternatives}) > 1:
        raise InvalidQueryError("give every window of Windows(…) an id with Window('id', …), "
                                "or none", call.span)
    return tuple(alternatives)


def window_spec(call: ast.FunctionCall, bind_partition) -> WindowSpec:
    """The specification of a window call; `bind_partition` binds OVER (PARTITION BY …) items."""
    kind = _KINDS[call.name.key]
    reader = _Arguments(call, kind)
    if call.over is not None and kind != "session":
        raise InvalidQueryError(f"{call.name.name.upper()} takes no OVER clause (only SessionWindow "
                                "has OVER (PARTITION BY …))", call.over.span)
    if kind == "tumbling":
        size, offset = reader.sizes(("Duration",), optional=("Offset",))
        _check_offset(offset, size, "window size", call)
        return TumblingWindow(size, offset)
    if kind == "hopping":
        size, hop, offset = reader.sizes(("Duration", "Hop"), optional=("Offset",))
        # A hop larger than the window samples the stream: events between windows are in none.
        _check_offset(offset, hop, "hop size", call)
        return HoppingWindow(size, hop, offset)
    if kind == "sliding":
        (size,) = reader.sizes(("Duration",))
        return SlidingWindow(size)
    timeout, max_duration = reader.sizes(("Timeout", "MaxDuration"))
    if timeout > max_duration:
        raise InvalidQueryError("the timeout of a SessionWindow cannot be larger than its maximum "
                                "duration", call.span)
    over = call.over
    if over is not None and (over.order_by or over.limit_duration or over.when):
        raise InvalidQueryError("SessionWindow's OVER clause takes only PARTITION BY", over.span)
    partition = tuple(bind_partition(e) for e in over.partition_by) if over is not None else ()
    return SessionWindow(timeout, max_duration, partition)


def _check_offset(offset: int, period: int, what: str, call: ast.FunctionCall) -> None:
    if abs(offset) >= period:
        raise InvalidQueryError(f"the offset must be smaller than the {what}", call.span)


class _Arguments:
    """Reads `(unit, n, n…)` or `(Duration(unit, n), Hop(unit, n)…)` arguments."""

    def __init__(self, call: ast.FunctionCall, kind: str):
        self.call = call
        self.kind = kind
        self.name = call.name.name.upper()

    def sizes(self, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> tuple[int, ...]:
        args = self.call.args
        if self.call.star or self.call.distinct or not args:
            raise self._usage()
        if isinstance(args[0], ast.FunctionCall):
            values = self._named(args, required, optional)
        else:
            values = self._positional(args, len(required), len(optional))
        for value, arg in zip(values[:len(required)], args):
            if value <= 0:
                raise InvalidQueryError(f"the sizes of {self.name} must be positive", arg.span)
            if value > MAX_WINDOW_US:
                raise InvalidQueryError(f"{self.name} is larger than 7 days, ASA's largest window",
                                        arg.span)
        return tuple(values) + (0,) * (len(required) + len(optional) - len(values))

    def _positional(self, args, required: int, optional: int) -> list[int]:
        if not required <= len(args) - 1 <= required + optional:
            raise self._usage()
        unit = _unit(args[0])
        return [_number(arg) * unit for arg in args[1:]]

    def _named(self, args, required, optional) -> list[int]:
        names = required + optional
        if not len(required) <= len(args) <= len(names):
            raise self._usage()
        values = []
        for expected, arg in zip(names, args):
            if not isinstance(arg, ast.FunctionCall) or arg.name.key != expected.lower():
                raise InvalidQueryError(f"expected {expected}(unit, n) here in {self.name}",
                                        arg.span)
            if len(arg.args) != 2:
                raise InvalidQueryError(f"{expected} takes (unit, n)", arg.span)
            values.append(_number(arg.args[1]) * _unit(arg.args[0]))
        return values

    def _usage(self) -> InvalidQueryError:
        forms = {
            "tumbling": "(unit, size [, offset])",
            "hopping": "(unit, windowsize, hopsize [, offset])",
            "sliding": "(unit, size)",
            "session": "(unit, timeout, maxduration)",
        }
        return InvalidQueryError(f"{self.name} takes {forms[self.kind]}", self.call.span)


def duration_of(unit, n, what: str) -> int:
    """`(unit, n)` of LIMIT DURATION or ISFIRST → microseconds."""
    return _number(n, what) * _unit(unit)


def _unit(node) -> int:
    if isinstance(node, ast.ColumnRef) and len(node.parts) == 1 and not node.parts[0].bracketed:
        unit = MICROSECONDS.get(node.parts[0].key)
        if unit is not None:
            return unit
    if isinstance(node, ast.NameArgument) and node.name.lower() in MICROSECONDS:
        return MICROSECONDS[node.name.lower()]
    raise InvalidQueryError("expected a time unit: day (dd, d), hour (hh), minute (mi, n), "
                            "second (ss, s), millisecond (ms) or microsecond (mcs)",
                            getattr(node, "span", None))


def signed_constant(node):
    """A numeric literal, with its sign (`-2`); None if the node is not one."""
    sign = 1
    while isinstance(node, ast.UnaryOp) and node.op in ("-", "+"):
        sign = -sign if node.op == "-" else sign
        node = node.operand
    if isinstance(node, ast.Literal) and isinstance(node.value, (int, float)) \
            and not isinstance(node.value, bool):
        return sign * node.value
    return None


def _number(node, what: str = "window sizes") -> int:
    """An integer literal, possibly negative (offsets); whole-number floats are accepted."""
    value = signed_constant(node)
    if value is not None:
        if float(value).is_integer():
            return int(value)
        while isinstance(node, ast.UnaryOp):  # the message points at the number itself
            node = node.operand
        raise UnsupportedFeatureError(f"fractional {what} are not supported yet", node.span)
    raise InvalidQueryError(f"expected a number ({what} are constants)",
                            getattr(node, "span", None))
