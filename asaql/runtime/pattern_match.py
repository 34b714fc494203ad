"""MATCH_RECOGNIZE's matcher: the PATTERN compiled once into an NFA, run over each partition's
events in processing order, one attempt per start row (AFTER MATCH SKIP TO NEXT ROW: the next
attempt starts at the row after the previous attempt's first row, so matches may overlap).

An attempt follows every way of mapping its rows to variables at once (threads of the NFA, in
greedy priority order: a quantifier first tries one more repetition, an alternation its first
option). A row extends a thread when the variable's DEFINE is true for it, the variable's
running aggregates counting the row itself; a variable without DEFINE takes any row. Threads in
the same NFA state with the same aggregates behave the same from then on: only the first (by
priority) is kept.

An attempt's match is its longest accepted mapping (the first by priority among equally long
ones), and it is emitted once it can no longer grow: no thread is left, the next event lies
LIMIT DURATION or more after its first row, or the watermark has passed first row + LIMIT
DURATION (no later event can join). The result does not depend on how events were cut into
micro-batches: the state between calls (`PartitionState`) is the open attempts. A match has at
least one row; its System.Timestamp is its last row's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from asaql.core.match_pattern import Aggregate, Classifier, Lit, MatchPattern, Op, Read
from asaql.runtime import columns as C
from asaql.runtime.bucket import to_datetimes
from asaql.runtime.policy import NONE

ANY = "."  # the variable of `.` rows (Classifier() gives NULL for them)
_ACCEPT = -1


@dataclass(frozen=True, slots=True)
class Nfa:
    """State i: `label[i]` a variable key (or ANY) consuming one row then going to `next[i]`,
    or None: an epsilon state going to `eps[i]` in priority order. `start`; _ACCEPT ends."""

    label: tuple
    next: tuple
    eps: tuple
    start: int


def compile_pattern(pattern: tuple) -> Nfa:
    label: list = []
    nxt: list = []
    eps: list = []

    def new(lab=None, to=None, epsilon=()):
        label.append(lab)
        nxt.append(to)
        eps.append(list(epsilon))
        return len(label) - 1

    def build(node, follow: int) -> int:
        kind = node[0]
        if kind == "var":
            return new(node[1], follow)
        if kind == "any":
            return new(ANY, follow)
        if kind == "seq":
            for item in reversed(node[1]):
                follow = build(item, follow)
            return follow
        if kind == "alt":
            return new(epsilon=[build(option, follow) for option in node[1]])
        quantifier, item = node[1], node[2]
        if quantifier == "?":
            return new(epsilon=[build(item, follow), follow])
        loop = new()
        body = build(item, loop)
        eps[loop] = [body, follow]  # greedy: one more repetition first
        return loop if quantifier == "*" else body

    start = build(pattern, _ACCEPT)
    return Nfa(tuple(label), tuple(nxt), tuple(tuple(e) for e in eps), start)


def closure(nfa: Nfa, state: int) -> tuple[list[int], bool]:
    """The consuming states reachable from `state` by epsilon moves, in priority order, and
    whether the end of the pattern is."""
    out, accepts, seen, stack = [], False, set(), [state]
    while stack:
        s = stack.pop()
        if s == _ACCEPT:
            accepts = True
            continue
        if s in seen:
            continue
        seen.add(s)
        if nfa.label[s] is not None:
            out.append(s)
        else:
            stack.extend(reversed(nfa.eps[s]))
    return out, accepts


# ------------------------------------------------------------------ running aggregates
# A summary: {slot: (rows, ((first, last, min, max, sum, present) per field))}, slot a
# variable key or None (every row); stored as a sorted tuple so it can key a dict.

def _add(summary: tuple, slot, row: tuple) -> tuple:
    table = dict(summary)
    count, stats = table.get(slot, (0, None))
    if stats is None:
        stats = tuple((v, v, v, v, v, 0 if v is None else 1) for v in row)
    else:
        stats = tuple(_fold(st, v) for st, v in zip(stats, row))
    table[slot] = (count + 1, stats)
    return tuple(sorted(table.items(), key=lambda kv: (kv[0] is None, kv[0] or "")))


def _fold(st: tuple, v) -> tuple:
    first, _last, lo, hi, total, present = st
    if v is None:
        return first, None, lo, hi, total, present
    try:
        lo = v if lo is None or v < lo else lo
        hi = v if hi is None or v > hi else hi
    except TypeError:
        pass
    try:
        total = v if total is None else total + v
    except TypeError:
        total = None
    return first, v, lo, hi, total, present + 1


def _aggregate(summary: tuple, node: Aggregate):
    entry = dict(summary).get(node.variable)
    if entry is None:
        return 0 if node.function == "count" else None
    count, stats = entry
    if node.field is None:
        return count
    first, last, lo, hi, total, present = stats[node.field]
    if node.function == "count":
        return present
    if not present and node.function in ("max", "min", "sum", "avg"):
        return None
    if node.function == "avg":
        return None if total is None else total / present
    return {"first": first, "last": last, "max": hi, "min": lo, "sum": total}[node.function]


# ------------------------------------------------------------------ expressions
_COMPARE = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b,
            "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
_ARITHMETIC = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
               "/": lambda a, b: a / b, "%": lambda a, b: a % b}


def evaluate(node, row: tuple | None, summary: tuple, last_variable):
    """The value of a DEFINE condition (`row` the candidate row) or a measure (row None)."""
    if isinstance(node, Lit):
        return node.value
    if isinstance(node, Read):
        return row[node.field]
    if isinstance(node, Aggregate):
        return _aggregate(summary, node)
    if isinstance(node, Classifier):
        return last_variable
    op = node.op
    if op == "AND" or op == "OR":  # three-valued logic
        a = evaluate(node.args[0], row, summary, last_variable)
        b = evaluate(node.args[1], row, summary, last_variable)
        if op == "AND":
            return False if a is False or b is False else (None if a is None or b is None else True)
        return True if a is True or b is True else (None if a is None or b is None else False)
    values = [evaluate(a, row, summary, last_variable) for a in node.args]
    if op == "isnull":
        return values[0] is None
    if op == "notnull":
        return values[0] is not None
    if any(v is None for v in values):
        return None
    try:
        if op == "NOT":
            return not values[0]
        if op == "neg":
            return -values[0]
        if op in _COMPARE:
            return bool(_COMPARE[op](*values))
        if op == "/":
            return values[0] / values[1]
        return _ARITHMETIC[op](*values)
    except (TypeError, ZeroDivisionError, ValueError):
        return None


# ------------------------------------------------------------------ the matcher
@dataclass(frozen=True, slots=True)
class Compiled:
    nfa: Nfa
    duration_us: int
    defines: dict  # key → condition
    names: dict  # key → name as written
    measures: tuple  # (alias, node)


def prepare(pattern: MatchPattern) -> Compiled:
    return Compiled(compile_pattern(pattern.pattern), pattern.duration_us, dict(pattern.defines),
                    dict(pattern.names), pattern.measures)


@dataclass
class Attempt:
    start_ts: int
    threads: list  # (state, summary, last variable) in priority order
    best: tuple | None = None  # (summary, last variable, last ts)


@dataclass
class PartitionState:
    attempts: list = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Match:
    start_ts: int
    end_ts: int
    values: tuple  # per measure


def _step(c: Compiled, attempt: Attempt, row: tuple, ts: int) -> None:
    threads, kept = [], set()
    for state, summary, _last in attempt.threads:
        for s in closure(c.nfa, state)[0]:
            variable = c.nfa.label[s]
            tentative = _add(_add(summary, None, row), variable, row) if variable != ANY \
                else _add(summary, None, row)
            condition = c.defines.get(variable)
            if condition is not None and evaluate(condition, row, tentative, None) is not True:
                continue
            key = (c.nfa.next[s], tentative, variable)
            if key not in kept:
                kept.add(key)
                threads.append(key)
    attempt.threads = threads
    for state, summary, variable in threads:
        if closure(c.nfa, state)[1]:
            attempt.best = (summary, variable, ts)  # longer than any before: rows only grow
            break


def _result(c: Compiled, attempt: Attempt) -> Match | None:
    if attempt.best is None:
        return None
    summary, variable, end_ts = attempt.best
    last = None if variable == ANY else c.names.get(variable, variable)
    return Match(attempt.start_ts, end_ts,
                 tuple(evaluate(node, None, summary, last) for _alias, node in c.measures))


def feed(c: Compiled, state: PartitionState, rows, watermark: int) -> list[Match]:
    """Runs the partition's next events — (System.Timestamp µs, field values) in processing
    order, each below `watermark` — and closes what the watermark passed; → the matches that
    can no longer grow, in the order their attempts started."""
    out: list[tuple[int, Match]] = []
    for ts, row in rows:
        still = []
        for attempt in state.attempts:
            if ts - attempt.start_ts >= c.duration_us:
                still.append((attempt, False))
                continue
            _step(c, attempt, row, ts)
            still.append((attempt, bool(attempt.threads)))
        attempt = Attempt(ts, [(c.nfa.start, (), None)])
        _step(c, attempt, row, ts)
        still.append((attempt, bool(attempt.threads)))
        state.attempts = []
        for attempt, alive in still:
            if alive:
                state.attempts.append(attempt)
            else:
                found = _result(c, attempt)
                if found is not None:
                    out.append(found)
    open_attempts = []
    for attempt in state.attempts:
        if watermark - attempt.start_ts >= c.duration_us:
            found = _result(c, attempt)
            if found is not None:
                out.append(found)
        else:
            open_attempts.append(attempt)
    state.attempts = open_attempts
    out.sort(key=lambda m: m.start_ts)  # stable: attempts with equal starts keep their order
    return out


# ------------------------------------------------------------------ the stateful step's hook
@dataclass(frozen=True, slots=True)
class PatternSpec:
    """A MATCH_RECOGNIZE statement as the step sees it: the pattern with `fields` naming the
    step's input columns, and per measure its result kind ('long', 'double', 'boolean', …)."""

    pattern: MatchPattern
    kinds: tuple[str, ...]


def run_statement(st, s, rows, marks: dict, combined: bool, closed_until: dict):
    """The step's windowed-statement call for MATCH_RECOGNIZE: `rows` (pending and new events,
    columns ts, key, arrival, file, line, the partition values `st.groups`, the fields) → the
    result rows of the matches that can no longer grow (None when there are none); events the
    watermark has not passed stay pending, the open attempts stay in `s.anchors`."""
    spec: PatternSpec = st.window
    compiled = prepare(spec.pattern)
    row_keys = rows["key"].to_numpy(object)
    due = rows["ts"].to_numpy(np.int64) < s.per_row(marks, row_keys, combined)
    s.pending[st.index] = rows[~due].reset_index(drop=True)
    ready = rows[due]
    ready = ready.iloc[np.lexsort((ready["line"].to_numpy(),
                                   pd.factorize(ready["file"], sort=True)[0],
                                   ready["arrival"].to_numpy(np.int64),
                                   ready["ts"].to_numpy(np.int64)))]
    states: dict = s.anchors.setdefault(st.index, {})
    partition = [_plain(ready[c]) for c in ("key", *st.groups)]
    values = [_plain(ready[c]) for c in spec.pattern.fields]
    stamps = ready["ts"].to_numpy(np.int64).tolist()
    batches: dict = {}
    for position, ts in enumerate(stamps):
        name = tuple(_hashable(p[position]) for p in partition)
        batches.setdefault(name, []).append((ts, tuple(v[position] for v in values)))
    out = []
    for name in list(dict.fromkeys([*states, *batches])):
        key = name[0]
        watermark = marks.get("*" if combined else key, NONE)
        state = states.get(name) or PartitionState()
        events = batches.get(name, [])
        for match in feed(compiled, state, events, watermark):
            out.append((match.end_ts, str(key), match.start_ts, name, match.values))
        if state.attempts:
            states[name] = state
        else:
            states.pop(name, None)
        if events:
            label = "*" if combined else key
            closed_until[label] = max(closed_until.get(label, NONE), events[-1][0])
    if not out:
        return None
    out.sort(key=lambda m: m[:3])
    frame = pd.DataFrame({
        C.ROW_KIND: C.RESULT, C.STATEMENT: st.index, C.KEY: [m[3][0] for m in out],
        C.SYSTEM_TIMESTAMP: to_datetimes(np.array([m[0] for m in out], np.int64)),
    })
    for j, column in enumerate(st.result_groups):
        frame[column] = pd.Series([m[3][j + 1] for m in out], dtype=object)
    for k, (column, kind) in enumerate(zip(st.result_aggregates, spec.kinds)):
        frame[column] = pd.Series([_as(kind, m[4][k]) for m in out], dtype=object)
    return frame


def _plain(series) -> list:
    """A column's values as Python values, NULL as None."""
    values = series.astype(object).tolist()
    return [None if v is None or (not isinstance(v, (str, bytes, list, dict, tuple))
                                  and pd.isna(v) is True) else
            (v.item() if hasattr(v, "item") and not isinstance(v, (str, bytes)) else v)
            for v in values]


def _hashable(value):
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _as(kind: str, value):
    """A measure's value as its result type reads it (a sum of integers read as floats where
    the column had NULLs is an integer again; a comparison is a boolean)."""
    if value is None:
        return None
    try:
        if kind == "long":
            return int(value)
        if kind == "double":
            return float(value)
        if kind == "boolean":
            return bool(value)
        if kind == "string":
            return str(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return value
