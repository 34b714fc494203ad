"""What a user waits for: `asaql run` against `python native.py`, whole processes, same run.

    python benchmarks/whole_process.py [--events 1000000] [--files 20] [--repeats 3]
        [--only passthrough_file,passthrough_folder,tumbling,arrival] [--master local[2]]

For each job, the native Spark script (benchmarks/native_script.py: a session, the JSON file
source with the events' schema, `withWatermark` + `window` where it windows, a JSON folder sink,
availableNow) and `asaql run QUERY --input … --output … --late 5s --ooo 2s` run as processes of
their own, alternately, on the input of benchmarks/policy_throughput.py (100 devices, 4
partitions, some late, early and out-of-order events). Each is also run on 10 events: that
process's time is the fixed cost of a run, and the difference is the query time on the data.
Prints medians; ratios are native time / asaql time (1.0: as fast as the native script).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from policy_throughput import generate  # noqa: E402
from targets import QUERIES  # noqa: E402

NATIVE = Path(__file__).with_name("native_script.py")
# job → (the query of benchmarks/targets.py, asaql's output: a single file or a folder)
JOBS = {
    "passthrough_file": ("passthrough", "out.jsonl"),
    "passthrough_folder": ("passthrough", "out"),
    "tumbling": ("tumbling", "out.jsonl"),
    "arrival": ("arrival", "out.jsonl"),
}


def run_process(command: list[str], env: dict) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")
    return elapsed


def native(job: str, source: Path, work: Path, env: dict) -> float:
    out = work / f"native-{time.time_ns()}"
    try:
        return run_process([sys.executable, str(NATIVE), JOBS[job][0], str(source), str(out)],
                           env)
    finally:
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(f"{out}-checkpoint", ignore_errors=True)


def asaql(job: str, source: Path, work: Path, env: dict, master: str) -> float:
    name, output = JOBS[job]
    query = work / f"{name}.sql"
    query.write_text(QUERIES[name])
    folder = work / f"asaql-{time.time_ns()}"
    folder.mkdir()
    try:
        return run_process(
            [shutil.which("asaql") or "asaql", "run", str(query), "--input", f"input={source}",
             "--output", f"output={folder / output}", "--late", "5s", "--ooo", "2s",
             "--master", master, "--errors", str(folder / "errors.jsonl")], env)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=",".join(JOBS))
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    env = {**os.environ, "NATIVE_MASTER": args.master, "SPARK_LOCAL_IP": "127.0.0.1"}
    work = Path(tempfile.mkdtemp(prefix="asaql-whole-"))
    try:
        big, small = work / "input", work / "small"
        big.mkdir()
        small.mkdir()
        generate(big, args.events, args.files)
        generate(small, 10, 1)
        print(f"{args.events:,} events in {args.files} files, {args.master}, whole processes, "
              f"medians of {args.repeats}; query time = time on the input − time on 10 events",
              flush=True)
        for job in args.only.split(","):
            times: dict[str, list[float]] = {}
            for _ in range(args.repeats):  # alternately, so that a noisy moment hits both
                for label, function in (("native", native), ("asaql", asaql)):
                    extra = (args.master,) if label == "asaql" else ()
                    times.setdefault(f"{label} small", []).append(
                        function(job, small, work, env, *extra))
                    times.setdefault(label, []).append(function(job, big, work, env, *extra))
            median = {label: statistics.median(values) for label, values in times.items()}
            query = {label: median[label] - median[f"{label} small"]
                     for label in ("native", "asaql")}
            print(f"{job}: native {median['native']:.1f} s (10 events {median['native small']:.1f}"
                  f" s, query {query['native']:.1f} s); asaql {median['asaql']:.1f} s (10 events "
                  f"{median['asaql small']:.1f} s, query {query['asaql']:.1f} s); whole process "
                  f"{median['native'] / median['asaql']:.2f}x, query "
                  f"{query['native'] / max(query['asaql'], 1e-9):.2f}x, fixed cost "
                  f"+{median['asaql small'] - median['native small']:.1f} s; runs "
                  + ", ".join(f"{label} {'/'.join(f'{v:.1f}' for v in values)}"
                              for label, values in times.items()), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
