"""Text → AST time of the fast parser against lark, and a differential run between the two.

    python benchmarks/parse_speed.py                      # the 1 MB queries, fast vs lark
    python benchmarks/parse_speed.py --differential 100000 [--seed 0] [--workers 2]

The first prints the CPU time of `asaql.syntax.parser.parse_slice` (fast parser, lark from the
failing statement on) and of lark + AstBuilder over the whole text, on the 1 MB queries of
benchmarks/fuzz_check.py, with the garbage collector off as the budget is stated (and the
parse_slice time with it on), then the time `check` takes on them. The second runs N queries
of tests/fuzz_queries.py through both (tests/parser_differential.py) and prints the
disagreements by signature: a different outcome (AST, any span, or error), or a query lark
reads that the fast parser refused. Exit status 1 when there is any.
"""

from __future__ import annotations

import argparse
import collections
import gc
import multiprocessing
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import fuzz_queries  # noqa: E402  (tests/fuzz_queries.py)
from fuzz_check import _one_megabyte_queries  # noqa: E402
from parser_differential import compare, lark_parse_slice  # noqa: E402

from asaql.errors import AsaqlError  # noqa: E402
from asaql.syntax.query_text import QueryFileError, decode_query, normalize_newlines  # noqa: E402
from asaql.syntax.parser import parse_slice  # noqa: E402
from asaql.syntax.positions import LineIndex  # noqa: E402

CHUNK = 250


def _cpu(parse, lines: LineIndex, collect: bool = False) -> tuple[float, str]:
    """Least CPU seconds of three runs, and how the parse ended."""
    best, ended = float("inf"), ""
    for _ in range(3):
        if not collect:
            gc.disable()
        began = time.process_time()
        try:
            parse(lines, 0, len(lines.text), "query")
            ended = "parsed"
        except AsaqlError as error:
            ended = f"error at line {error.span.line if error.span else '?'}: {error.message[:50]}"
        best = min(best, time.process_time() - began)
        gc.enable()
    return best, ended


def speed() -> None:
    from asaql.compiler.check import check_query

    for name, text in _one_megabyte_queries().items():
        lines = LineIndex(normalize_newlines(text))
        fast, ended = _cpu(parse_slice, lines)
        fast_gc, _ = _cpu(parse_slice, lines, collect=True)
        lark, _ = _cpu(lark_parse_slice, lines)
        began = time.process_time()
        report = check_query(text)
        checked = time.process_time() - began
        print(f"1 MB query ({name}): {ended}\n"
              f"  text → AST, CPU s, gc off: fast parser {fast:.2f}, lark {lark:.2f} "
              f"({lark / max(fast, 1e-9):.1f}x); fast with gc on {fast_gc:.2f}\n"
              f"  check: {checked:.2f} s of CPU, {len(report.errors)} errors", flush=True)


def _chunk(job: tuple[int, int, int]) -> list[tuple[str, str, int, str]]:
    """(signature, fast parser's own result, index, detail) of each disagreement in a chunk,
    and one ("", fast, index, "") per query that agreed."""
    seed, first, count = job
    out = []
    for index in range(first, first + count):
        data = fuzz_queries.random_query(random.Random(f"{seed}:{index}"))
        try:
            text = decode_query(data, "fuzz.sql")
        except QueryFileError:
            continue
        result = compare(text)
        problem = result.disagreement
        if problem is None:
            out.append(("", result.fast, index, ""))
            continue
        lark_said = "parsed" if result.old[0] == "ok" else result.old[2][:60]
        out.append((f"{problem}; fast parser: {result.fast}; lark: {lark_said}", result.fast,
                    index, f"{text[:300]!r}\n    new: {str(result.new)[:300]}\n"
                           f"    old: {str(result.old)[:300]}"))
    return out


def differential(count: int, seed: int, workers: int) -> int:
    started = time.perf_counter()
    jobs = [(seed, first, min(CHUNK, count - first)) for first in range(0, count, CHUNK)]
    fast_results, signatures, examples = collections.Counter(), collections.Counter(), {}
    compared = 0
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        for done, results in enumerate(pool.imap_unordered(_chunk, jobs), 1):
            for signature, fast, index, detail in results:
                compared += 1
                fast_results[fast] += 1
                if signature:
                    signatures[signature] += 1
                    examples.setdefault(signature, (index, detail))
            if done % 40 == 0:
                print(f"  … {compared} queries compared, {sum(signatures.values())} "
                      f"disagreements, {time.perf_counter() - started:.0f} s",
                      file=sys.stderr, flush=True)
    print(f"queries generated: {count} (seed {seed}); compared (decoded as text): {compared}, "
          f"in {time.perf_counter() - started:.0f} s with {workers} workers")
    print("fast parser alone: " + ", ".join(f"{kind} {n}" for kind, n in
                                            sorted(fast_results.items())))
    print(f"disagreements: {sum(signatures.values())}, by distinct signature: {len(signatures)}")
    for signature, n in signatures.most_common():
        index, detail = examples[signature]
        print(f"  {n:6d}  {signature}\n          e.g. query {index}: {detail}")
    return sum(signatures.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--differential", type=int, metavar="N",
                        help="compare the parsers on N fuzz queries instead of timing")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if args.differential is None:
        speed()
        return
    sys.exit(1 if differential(args.differential, args.seed, args.workers) else 0)


if __name__ == "__main__":
    main()
