"""Where `asaql check` spends its time, phase by phase, in-process (no Spark).

    python benchmarks/check_speed.py [--repeat 3]

For the three 1 MB queries of benchmarks/fuzz_check.py and the 50-line query of
benchmarks/check_latency.py, prints the CPU and wall time of each phase of
asaql.compiler.check.check_query — the parse (lark and the AST, without the depth check), the depth
check (asaql/syntax/limits.py), the analysis, the job functions (the tree is walked only when
the text names UDF or UDA, which these queries do not: "functions, walked" is what the walk
would cost, outside the sum), the planning, the checks
against samples (none given here: the query is checked alone, as `asaql check QUERY` does) —
and of check_query itself, whole, as it runs (with its garbage-collection policy,
asaql/compiler/gc_pause.py). The phases are timed with collection paused as check_query pauses it; the
last column is check_query whole with collection left on, the cost the policy saves. Each
figure is the best of `--repeat` runs (the 50-line query: per check, over 200 checks); on a
shared machine the CPU time is the steadier figure.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from check_latency import query_50_lines  # noqa: E402
from fuzz_check import _one_megabyte_queries  # noqa: E402

from asaql import diagnose  # noqa: E402
from asaql.analysis.analyzer import analyze  # noqa: E402
from asaql.compiler.gc_pause import paused_gc  # noqa: E402
from asaql.plan.planner import plan_statements  # noqa: E402
from asaql.plan.policy import EventOrderingPolicy  # noqa: E402
from asaql.syntax.limits import check_depth  # noqa: E402
from asaql.syntax.recovery import parse_all  # noqa: E402

PHASES = ("parse", "depth", "analysis", "functions", "functions, walked", "plan", "samples",
          "check", "check, gc on")
AFTER_PARSE = ("depth", "analysis", "functions", "plan", "samples")


def _timed(action, times: int = 1) -> tuple[object, float, float]:
    """(the last result, CPU seconds, wall seconds) per call of `action`."""
    cpu, wall = time.process_time(), time.perf_counter()
    for _ in range(times):
        result = action()
    return result, (time.process_time() - cpu) / times, (time.perf_counter() - wall) / times


def phase_times(text: str, times: int) -> dict[str, tuple[float, float]]:
    """Phase → (CPU, wall) seconds of one check of `text`."""
    out = {}
    with paused_gc():
        tree, _ = (result := _timed(lambda: parse_all(text), times))[0]
        _, *depth = _timed(lambda: check_depth(tree) if tree else None, times)
        out["parse"] = (result[1] - depth[0], result[2] - depth[1])
        out["depth"] = tuple(depth)
        statements, *out["analysis"] = _timed(lambda: analyze(tree, (), errors=[]) if tree else (),
                                              times)
        _, *out["functions"] = _timed(lambda: diagnose._functions(tree, text) if tree else (),
                                      times)
        # the walk of the tree that the same query would cost if its text named UDF. or UDA.
        _, *out["functions, walked"] = _timed(
            lambda: diagnose._functions(tree, "udf") if tree else (), times)
        _, *out["plan"] = _timed(lambda: plan_statements(statements, EventOrderingPolicy()),
                                 times)
        _, *out["samples"] = _timed(lambda: diagnose._check_columns(statements, {}), times)
    _, *out["check"] = _timed(lambda: diagnose.check_query(text), times)
    gc.collect()
    _, *out["check, gc on"] = _timed(lambda: _with_gc_on(text), times)
    return out


def _with_gc_on(text: str):
    """check_query with its pause undone: collection runs as Python's defaults have it."""
    original = diagnose.paused_gc
    diagnose.paused_gc = contextlib.nullcontext
    try:
        return diagnose.check_query(text)
    finally:
        diagnose.paused_gc = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per query; the best is kept")
    args = parser.parse_args()
    queries = {**{f"1 MB, {name}": (text, 1) for name, text in _one_megabyte_queries().items()},
               "50 lines (per check)": (query_50_lines(), 200)}
    width = len("all but the parse")
    for name, (text, times) in queries.items():
        runs = [phase_times(text, times) for _ in range(args.repeat)]
        print(f"{name} ({len(text):,} characters) — CPU s / wall s, best of {args.repeat}")
        scale, unit = (1000, "ms") if times > 1 else (1, "s")
        for phase in PHASES:
            cpu = min(run[phase][0] for run in runs)
            wall = min(run[phase][1] for run in runs)
            print(f"  {phase:<{width}}  {cpu * scale:8.3f} {unit} CPU  {wall * scale:8.3f} {unit}"
                  " wall")
        rest = min(sum(run[phase][0] for phase in AFTER_PARSE) for run in runs)
        print(f"  {'all but the parse':<{width}}  {rest * scale:8.3f} {unit} CPU", flush=True)


if __name__ == "__main__":
    main()
