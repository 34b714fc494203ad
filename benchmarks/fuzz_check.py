"""`asaql check` on many generated and mutated queries: no internal error, no hang, every error
located (tests/fuzz_queries.py makes the queries and judges each outcome).

    python benchmarks/fuzz_check.py [-n 100000] [--seed 0] [--workers 2] [--timeout 10]

Query i of a run is made by random.Random(f"{seed}:{i}"), so any failure printed can be made
again alone (`--only i`). Each query runs in a worker process under a time limit (SIGALRM, so
a hang inside C code would stall the worker instead: the run then never ends, which shows it
too). Prints the outcomes, the failures grouped by signature (exception type and innermost
asaql frame) with an example of each, the slowest query, and the time `check` takes on 1 MB
queries (wall and CPU: on a shared machine the CPU time is the steadier figure). Exit status
1 when anything failed. `-n 0` prints only the 1 MB timings.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import random
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import fuzz_queries  # noqa: E402  (tests/fuzz_queries.py)

CHUNK = 200


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def _run_chunk(job: tuple[int, int, int, float]) -> list[tuple]:
    """(index, kind, signature, detail, seconds) of each query of one chunk."""
    seed, first, count, timeout = job
    signal.signal(signal.SIGALRM, _alarm)
    out = []
    for index in range(first, first + count):
        data = fuzz_queries.random_query(random.Random(f"{seed}:{index}"))
        started = time.perf_counter()
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            failure = fuzz_queries.outcome(data)
            result = ("ok", "", "") if failure is None else \
                (failure.kind, failure.signature, failure.detail)
        except _Hang:
            result = ("hang", f"no answer after {timeout:g} s", repr(data[:200]))
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        out.append((index, *result, time.perf_counter() - started, len(data)))
    return out


def _one_megabyte_queries() -> dict[str, str]:
    statement = ("SELECT deviceId, temperature * 2 + 1 AS t, EventTime\nINTO alerts\n"
                 "FROM input TIMESTAMP BY EventTime\nWHERE temperature > 25 AND deviceId LIKE 'a%'\n")
    clean = statement * (1_000_000 // len(statement))
    rng = random.Random(1)
    broken = list(clean)
    for _ in range(200):
        broken[rng.randrange(len(broken))] = rng.choice("(),;x+ß")
    comment = "-- " + "x" * 999_990 + "\nSELECT a INTO b FROM c\n"
    return {"dense SQL, LF": clean, "dense SQL, CR only, 200 broken characters":
            "".join(broken).replace("\n", "\r"), "one long comment": comment}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", type=int, default=100_000, help="queries to check")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per query")
    parser.add_argument("--only", type=int, help="check query INDEX alone and print it")
    args = parser.parse_args()
    if args.only is not None:
        data = fuzz_queries.random_query(random.Random(f"{args.seed}:{args.only}"))
        print(repr(data))
        print(fuzz_queries.outcome(data) or "ok")
        return

    started = time.perf_counter()
    jobs = [(args.seed, first, min(CHUNK, args.n - first), args.timeout)
            for first in range(0, args.n, CHUNK)]
    kinds, signatures, examples = collections.Counter(), collections.Counter(), {}
    slowest = [0.0, -1, 0]
    try:
        with multiprocessing.get_context("fork").Pool(args.workers) as pool:
            # kill: report what was done (set after the fork: workers end quietly)
            signal.signal(signal.SIGTERM, signal.default_int_handler)
            for done, results in enumerate(pool.imap_unordered(_run_chunk, jobs), 1):
                for index, kind, signature, detail, seconds, size in results:
                    kinds[kind] += 1
                    slowest = max(slowest, [seconds, index, size])
                    if kind != "ok":
                        signatures[(kind, signature)] += 1
                        examples.setdefault((kind, signature), (index, detail))
                if done % 25 == 0:
                    print(f"  … {sum(kinds.values())} queries, {kinds['ok']} ended well, "
                          f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    except KeyboardInterrupt:
        print("interrupted: the figures below are for the queries checked so far")
    elapsed = time.perf_counter() - started
    checked = sum(kinds.values())

    print(f"queries checked:   {checked} of {args.n} (seed {args.seed}, {args.workers} workers) "
          f"in {elapsed:.0f} s ({checked / max(elapsed, 1e-9):.0f} per second)")
    print(f"ended well:        {kinds['ok']} (clean or a located error)")
    print(f"internal errors:   {kinds['internal error']}")
    print(f"hangs (> {args.timeout:g} s):   {kinds['hang']}")
    print(f"unlocated errors:  {kinds['unlocated error']}")
    print(f"slowest query:     {slowest[0]:.2f} s (query {slowest[1]}, {slowest[2]} bytes)")
    print(f"failures by distinct signature: {len(signatures)}")
    for (kind, signature), count in signatures.most_common():
        index, detail = examples[(kind, signature)]
        print(f"  {count:6d}  {kind}: {signature}\n          e.g. query {index}: {detail[:200]}",
              flush=True)
    failures = sum(signatures.values())

    from asaql.compiler.check import check_query

    for name, text in _one_megabyte_queries().items():
        began, cpu = time.perf_counter(), time.process_time()
        report = check_query(text)
        print(f"1 MB query ({name}): {time.perf_counter() - began:.2f} s "
              f"({time.process_time() - cpu:.2f} s of CPU), {len(report.errors)} errors")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
