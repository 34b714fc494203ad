"""JavaScript functions run in an embedded V8 (mini-racer: docs/dependencies.md says why).

One isolate per function and Python worker process, kept for the worker's life; a batch of rows
crosses into it as one JSON text and comes back as one: the loop over the rows runs inside V8,
not as a Python round trip per row. Values cross with ASA's documented type mapping (ASA →
JavaScript: bigint and float → Number, nvarchar(max) → String, datetime → Date, record →
Object, array → Array, NULL → null; back: a whole Number within a 64-bit integer → bigint, any
other Number → float, Date → datetime, String → nvarchar(max), Object → record, Array → array,
null and undefined → NULL).

Isolation: the context is bare ECMAScript (no require, process, fetch, file or network); the
timers and console mini-racer adds are removed. A call that runs past the time limit (a runaway
loop) stops with an error; a row whose call throws comes back with the reason.
No pyspark: the Spark lowering and the general step's aggregates both use this.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import re
from datetime import datetime, timezone

from asaql.errors import AsaqlError

DATE_TAG = "\u0000d"  # a Date crosses the JSON boundary as {"\u0000d": milliseconds}
ROWS_PER_CALL = 1000  # rows per engine call: the time limit applies to one call
DEFAULT_TIME_LIMIT = 5.0  # seconds per call of ROWS_PER_CALL rows; ASAQL_JS_TIME_LIMIT sets it
MEMORY_LIMIT = 256 * 1024 * 1024  # bytes of V8 heap per function


class JavaScriptError(AsaqlError):
    """A JavaScript function that cannot run: a syntax error, the time or memory limit."""


def time_limit() -> float:
    text = os.environ.get("ASAQL_JS_TIME_LIMIT", "")
    try:
        return float(text) if text else DEFAULT_TIME_LIMIT
    except ValueError:
        raise JavaScriptError(f"ASAQL_JS_TIME_LIMIT={text!r}: a number of seconds") from None


# Run once per isolate, before the user's script: what the context exposes beyond ECMAScript
# goes, and the batch helpers are defined out of the user's reach.
_PRELUDE = r"""
for (const name of ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "console",
                    "queueMicrotask", "setImmediate"]) {
  try { delete globalThis[name]; } catch (e) {}
  if (name in globalThis) Object.defineProperty(globalThis, name, {value: undefined});
}
var __asaql = (function () {
  const TAG = "\u0000d";
  function revive(key, value) {
    if (value !== null && typeof value === "object" && TAG in value) return new Date(value[TAG]);
    return value;
  }
  function replace(key, value) {
    const original = this[key];
    if (original instanceof Date) return {[TAG]: original.getTime()};
    if (typeof original === "function" || typeof original === "symbol")
      throw new TypeError("a " + typeof original + " is no ASA value");
    if (typeof original === "bigint") return Number(original);
    return value;
  }
  function reason(error) {
    return (error && error.stack ? String(error.stack).split("\n")[0] : String(error));
  }
  function encode(value) {
    if (value === undefined) return "null";
    return JSON.stringify(value, replace);
  }
  return {
    // rows: a JSON array of argument lists → a JSON array of [0, value] or [1, reason]
    call(fn, rows) {
      const args = JSON.parse(rows, revive);
      const out = new Array(args.length);
      for (let i = 0; i < args.length; i++) {
        try { out[i] = "[0," + encode(fn.apply(null, args[i])) + "]"; }
        catch (error) { out[i] = JSON.stringify([1, reason(error)]); }
      }
      return "[" + out.join(",") + "]";
    },
    // groups: a JSON array of windows, each an array of [value, timestamp] in event order →
    // a JSON array of each window's computeResult()
    aggregate(Uda, groups) {
      const windows = JSON.parse(groups, revive);
      const out = new Array(windows.length);
      for (let i = 0; i < windows.length; i++) {
        const uda = new Uda();
        if (typeof uda.init === "function") uda.init();
        for (const [value, timestamp] of windows[i]) uda.accumulate(value, timestamp);
        out[i] = encode(uda.computeResult());
      }
      return "[" + out.join(",") + "]";
    },
    revive, encode, reason,
  };
})();
"""


def _function_expression(script: str, name: str) -> str:
    """The script's function as an expression: a lone function (`function (a) {…}`, as the
    portal and ARM templates keep it, or `function hex2Int(a) {…}`, as project files do) is
    one; a script with helpers around its function gives the one called `main`, else the one
    named as the function, else the first it declares."""
    declared = re.findall(r"^\s*function\s+([A-Za-z_$][\w$]*)", script, re.M)
    chosen = next((n for n in ("main", name) if n in declared), declared[0] if declared else None)
    body = f"{script}\n;return {chosen};" if chosen else 'throw new SyntaxError("no function");'
    return ("(function () { try { return eval(" + json.dumps(f"({script}\n)") + "); } "
            "catch (e) { if (!(e instanceof SyntaxError)) throw e; } " + body + " })()")


_ENGINES: dict[tuple, "Engine"] = {}


@atexit.register
def _close_engines() -> None:
    # an isolate still open when the interpreter exits hangs it (mini-racer's V8 thread)
    while _ENGINES:
        _ENGINES.popitem()[1].context.close()


def engine_for(name: str, script: str, limit: float) -> "Engine":
    """The worker's isolate for this function (made on first use)."""
    key = (name, script, limit)
    engine = _ENGINES.get(key)
    if engine is None:
        engine = _ENGINES[key] = Engine(name, script, limit)
    return engine


def _isolate(make):
    """A MiniRacer with its own event loop thread. Made where an asyncio loop runs (Jupyter,
    an async application), it would take that loop as its own and then refuse the time limit
    of every call; so it is made in a thread of its own there."""
    import asyncio
    import concurrent.futures

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return make()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(make).result()


class Engine:
    def __init__(self, name: str, script: str, limit: float):
        from py_mini_racer import MiniRacer

        self.name = name
        self.limit = limit
        self.context = _isolate(MiniRacer)
        self.context.set_hard_memory_limit(MEMORY_LIMIT)
        self._eval(_PRELUDE, "starting its engine")
        self._eval(f"var __asaql_fn = {_function_expression(script, name.split('.', 1)[-1])};",
                   "loading its script")
        if self._eval("typeof __asaql_fn", "loading its script") != "function":
            raise JavaScriptError(f"{name}: its script defines no function")

    def _eval(self, code: str, doing: str):
        from py_mini_racer import JSEvalException, JSOOMException, JSTimeoutException

        try:
            return self.context.eval(code, timeout_sec=self.limit)
        except JSTimeoutException:
            raise JavaScriptError(f"{self.name} ran past the time limit of {self.limit:g} s "
                                  f"{doing} (a loop that never ends?); ASAQL_JS_TIME_LIMIT "
                                  "sets the limit in seconds") from None
        except (JSEvalException, JSOOMException) as error:
            if isinstance(error, JSOOMException) or self.context.was_hard_memory_limit_reached():
                raise JavaScriptError(f"{self.name} used more than {MEMORY_LIMIT >> 20} MB "
                                      f"{doing}") from None
            lines = [line.strip() for line in str(error).splitlines()
                     if re.match(r"\s*\w*(Error|Exception)\b|\s*Uncaught", line)]
            why = lines[0] if lines else (str(error).strip().splitlines() or [""])[0]
            raise JavaScriptError(f"{self.name}: {doing} failed: "
                                  f"{why or type(error).__name__}") from None

    def call_rows(self, rows: list[list]) -> list[tuple[object, str | None]]:
        """Each row's arguments → (value, None), or (None, the reason) when the call threw."""
        out: list[tuple[object, str | None]] = []
        for start in range(0, len(rows), ROWS_PER_CALL):
            text = to_json(rows[start:start + ROWS_PER_CALL])
            answer = self._eval(f"__asaql.call(__asaql_fn, {json.dumps(text)})",
                                f"on {min(ROWS_PER_CALL, len(rows) - start)} rows")
            for failed, value in from_json(answer):
                out.append((None, str(value)) if failed else (value, None))
        return out


    def aggregate_groups(self, text: str, groups: int) -> list:
        """Each window's result (a UDA); what it throws stops the run."""
        return from_json(self._eval(f"__asaql.aggregate(__asaql_fn, {json.dumps(text)})",
                                    f"on {groups} windows"))


def _default(value):
    if isinstance(value, datetime):
        stamp = value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
        return {DATE_TAG: stamp.timestamp() * 1000.0}
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    if hasattr(value, "isoformat"):  # a date
        return value.isoformat()
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    raise TypeError(f"{type(value).__name__} is no ASA value")


def _finite(value):
    """NaN and infinities are no JSON (and no ASA value): NULL."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def to_json(value) -> str:
    try:
        return json.dumps(value, default=_default, allow_nan=False, separators=(",", ":"))
    except ValueError:
        return json.dumps(_finite(value), default=_default, separators=(",", ":"))


def _hook(obj: dict):
    if len(obj) == 1 and DATE_TAG in obj:
        millis = obj[DATE_TAG]
        if millis is None:  # an invalid Date (NaN time)
            return None
        return datetime.fromtimestamp(millis / 1000.0, tz=timezone.utc)
    return obj


def from_json(text: str):
    return json.loads(text, object_hook=_hook)
