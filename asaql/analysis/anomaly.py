"""ASA's anomaly detection functions → `AnalyticCall`, with ASA's argument rules checked at
their position:

  AnomalyDetection_SpikeAndDip(expr, confidence, historySize, mode)
  AnomalyDetection_ChangePoint(expr, confidence, historySize)
      OVER ([PARTITION BY …] LIMIT DURATION(unit, n) [WHEN cond])

confidence is a number in [1, 100], historySize a positive integer, mode 'spikes', 'dips' or
'spikesanddips'. The model (asaql/runtime/anomaly.py) reads the calls' `model`:
(confidence, historySize, mode) — mode is None for ChangePoint.
"""

from __future__ import annotations

from asaql.analysis.bound import AnalyticCall
from asaql.analysis.windows import signed_constant
from asaql.errors import InvalidQueryError
from asaql.syntax import ast

# lower-case name → the function the runtime evaluates
ANOMALY = {"anomalydetection_spikeanddip": "spikeanddip",
           "anomalydetection_changepoint": "changepoint"}
LABELS = {"anomalydetection_spikeanddip": "AnomalyDetection_SpikeAndDip",
          "anomalydetection_changepoint": "AnomalyDetection_ChangePoint"}
MODES = ("spikes", "dips", "spikesanddips")
# historySize events are scored one by one against each other: a bound keeps that bounded
MAX_HISTORY = 100_000


def bind_anomaly(call: ast.FunctionCall, label: str, bind, partition_by, duration: int,
                 when) -> AnalyticCall:
    function = ANOMALY[call.name.key]
    spike = function == "spikeanddip"
    arity = 4 if spike else 3
    if call.star:
        raise InvalidQueryError(f"{label}: the wildcard * is not allowed; give the value to "
                                "score", call.span)
    if call.distinct or len(call.args) != arity:
        shape = "(expression, confidence, historySize, mode)" if spike else \
            "(expression, confidence, historySize)"
        raise InvalidQueryError(f"{label} takes {shape}", call.span)
    confidence = _confidence(call.args[1], label)
    history = _history(call.args[2], label)
    mode = _mode(call.args[3], label) if spike else None
    return AnalyticCall(function=function, arg=bind(call.args[0]), partition_by=partition_by,
                        duration_us=duration, when=when, model=(confidence, history, mode),
                        span=call.span)


def _confidence(node, label) -> float:
    value = signed_constant(node)
    if value is None or not 1 <= value <= 100:
        raise InvalidQueryError(f"{label}: confidence must be a number from 1 to 100 "
                                "(a percentage)", node.span)
    return float(value)


def _history(node, label) -> int:
    value = signed_constant(node)
    if value is None or not float(value).is_integer() or value < 1:
        raise InvalidQueryError(f"{label}: historySize must be a positive integer constant "
                                "(a number of events)", node.span)
    if value > MAX_HISTORY:
        raise InvalidQueryError(f"{label}: historySize is at most {MAX_HISTORY:,} events "
                                "here", node.span)
    return int(value)


def _mode(node, label) -> str:
    if isinstance(node, ast.Literal) and isinstance(node.value, str) \
            and node.value.lower() in MODES:
        return node.value.lower()
    raise InvalidQueryError(f"{label}: mode must be 'spikes', 'dips' or 'spikesanddips'",
                            getattr(node, "span", None))
