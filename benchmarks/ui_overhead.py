"""What watching a run costs: the same query with and without the live page (`run --ui`: the
monitor listening, Spark's progress read between waits, the server answering a poll every
second as an open page does), alternating, in one session.

    python benchmarks/ui_overhead.py [--events 1000000] [--files 20] [--rounds 3]

Prints each run's time and the median ratio watched / unwatched (1.00: no cost).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from targets import QUERIES, inputs  # noqa: E402

from asaql.compiler.pipeline import compile_query  # noqa: E402
from asaql.pages.monitor import RunMonitor  # noqa: E402
from asaql.pages.page import job_page  # noqa: E402
from asaql.pages.server import LiveServer  # noqa: E402
from asaql.plan.job_graph import job_graph  # noqa: E402
from asaql.plan.policy import EventOrderingPolicy  # noqa: E402
from asaql.run.runner import RunOptions, run  # noqa: E402


def once(spark, compiled, source: Path, out: Path, watched: bool, max_files: int) -> float:
    options = RunOptions(inputs={"input": str(source)}, outputs={"output": str(out)},
                         errors_path=f"{out}-errors.jsonl", max_files_per_trigger=max_files)
    server, stop = None, threading.Event()
    if watched:
        graph = job_graph(compiled.plan)
        monitor = RunMonitor(graph, options.errors_path, "benchmark")
        options.listeners = (monitor,)
        server = LiveServer(monitor, job_page(graph, "live", "benchmark"), "127.0.0.1", 0)

        def poll():  # an open page
            while not stop.wait(1.0):
                with urllib.request.urlopen(server.url + "api/status") as answer:
                    answer.read()

        threading.Thread(target=poll, daemon=True).start()
    started = time.perf_counter()
    try:
        run(compiled, options, spark=spark)
        return time.perf_counter() - started
    finally:
        stop.set()
        if server is not None:
            server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--query", default="passthrough", choices=sorted(QUERIES))
    args = parser.parse_args()
    from asaql.spark.failures import default_spark_log
    from asaql.spark.session.builder import build_session

    spark = build_session(spark_log=default_spark_log())
    compiled = compile_query(QUERIES[args.query], EventOrderingPolicy.from_options("5s", "2s"))
    with inputs(args.events, args.files, 100) as (work, big, small):
        # several micro-batches (a file each): the per-batch work of watching shows
        max_files = max(1, args.files // 10)
        once(spark, compiled, big, work / "warm", False, max_files)  # JIT, caches: not measured
        ratios = []
        for number in range(args.rounds):
            plain = once(spark, compiled, big, work / f"plain-{number}", False, max_files)
            watched = once(spark, compiled, big, work / f"watched-{number}", True, max_files)
            ratios.append(watched / plain)
            print(f"round {number + 1}: unwatched {plain:6.2f} s, watched {watched:6.2f} s, "
                  f"ratio {watched / plain:5.3f}", flush=True)
    print(f"{args.query}, {args.events:,} events in {args.files} files, {max_files} per "
          f"micro-batch: watched / unwatched = {statistics.median(ratios):.3f} (median of "
          f"{args.rounds})")


if __name__ == "__main__":
    main()
