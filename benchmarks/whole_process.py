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

`--before DIR` adds asaql as another checkout has it (a `git worktree` of an earlier commit,
put first on PYTHONPATH: its own engine jar is built and cached beside the current one), run
in the same rounds: an A/B on one machine in one hour. `--no-small` skips the 10-event runs.
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


def asaql(job: str, source: Path, work: Path, env: dict, master: str,
          before: str | None = None) -> float:
    name, output = JOBS[job]
    query = work / f"{name}.sql"
    query.write_text(QUERIES[name])
    folder = work / f"asaql-{time.time_ns()}"
    folder.mkdir()
    try:
        command = [shutil.which("asaql") or "asaql"] if before is None else \
            [sys.executable, "-c", "from asaql.cli import main; main()"]
        return run_process(
            [*command, "run", str(query), "--input", f"input={source}",
             "--output", f"output={folder / output}", "--late", "5s", "--ooo", "2s",
             "--master", master, "--errors", str(folder / "errors.jsonl")],
            env if before is None else {**env, "PYTHONPATH": before})
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=",".join(JOBS))
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--before", help="another checkout's folder, run as 'before'")
    parser.add_argument("--no-small", action="store_true", help="no 10-event runs")
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
        runners = {"native": native, "asaql": asaql}
        if args.before:
            runners["before"] = lambda *a: asaql(*a, before=args.before)
        for job in args.only.split(","):
            times: dict[str, list[float]] = {}
            for _ in range(args.repeats):  # alternately, so that a noisy moment hits all
                for label, function in runners.items():
                    extra = (args.master,) if label != "native" else ()
                    if not args.no_small:
                        times.setdefault(f"{label} small", []).append(
                            function(job, small, work, env, *extra))
                    times.setdefault(label, []).append(function(job, big, work, env, *extra))
            print(_report(job, {label: statistics.median(values)
                                for label, values in times.items()}, times), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _report(job: str, median: dict, times: dict) -> str:
    text = f"{job}: native {median['native']:.1f} s; asaql {median['asaql']:.1f} s " \
           f"(whole process {median['native'] / median['asaql']:.2f}x)"
    if "before" in median:
        text += f"; before {median['before']:.1f} s ({median['native'] / median['before']:.2f}x)"
    if "native small" in median:
        query = {label: median[label] - median[f"{label} small"]
                 for label in median if f"{label} small" in median}
        text += "; 10 events: " + ", ".join(f"{label} {median[label + ' small']:.1f} s"
                                            for label in query)
        text += "; query time: " + ", ".join(
            f"{label} {value:.1f} s ({query['native'] / max(value, 1e-9):.2f}x)"
            for label, value in query.items())
        text += f"; fixed cost {median['asaql small'] - median['native small']:+.1f} s"
    return text + "; runs " + ", ".join(
        f"{label} {'/'.join(f'{v:.1f}' for v in values)}" for label, values in times.items())


if __name__ == "__main__":
    main()
