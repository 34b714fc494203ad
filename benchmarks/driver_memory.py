"""Memory as the input grows: 1,000,000 events against 10,000,000 through the same job.

    python benchmarks/driver_memory.py [--events 1000000,10000000] [--files-per-million 10]
        [--only passthrough_file,tumbling] [--master local[2]]

Each job of benchmarks/whole_process.py runs as `asaql run` (one micro-batch over every file,
as a user's first run over a folder is) on benchmarks/policy_throughput.py's input at each
size, 10 files per million events. While it runs, the peak resident memory of the Python driver
and of its JVM (which in local mode also hosts the executors, and so the micro-batch's cache) is
sampled from /proc every 50 ms (the open windows' state as the input grows: `targets.py
--state`). Flat means:
ten times the events do not take the Python driver's memory up (no micro-batch is gathered
there), and the JVM's stays within its heap (the cache spills to disk, it does not grow it).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from policy_throughput import generate  # noqa: E402
from targets import QUERIES  # noqa: E402
from whole_process import JOBS  # noqa: E402


def _rss_kib(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"VmRSS:\s+(\d+) kB", status)
    return int(found.group(1)) if found else 0


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _java_of(pid: int) -> int | None:
    for child in _children(pid):
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"java" in command:
            return child
    return None


def measured(job: str, source: Path, work: Path, master: str) -> tuple[float, int, int, str]:
    """(seconds, the Python driver's peak RSS in MiB, the JVM's, the summary line)."""
    name, output = JOBS[job]
    query = work / f"{name}.sql"
    query.write_text(QUERIES[name])
    folder = work / f"asaql-{time.time_ns()}"
    folder.mkdir()
    command = [shutil.which("asaql") or "asaql", "run", str(query), "--input",
               f"input={source}", "--output", f"output={folder / output}", "--late", "5s",
               "--ooo", "2s", "--master", master, "--errors", str(folder / "errors.jsonl")]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    python_peak = java_peak = 0
    java = None
    while process.poll() is None:
        python_peak = max(python_peak, _rss_kib(process.pid))
        java = java or _java_of(process.pid)
        if java is not None:
            java_peak = max(java_peak, _rss_kib(java))
        time.sleep(0.05)
    elapsed = time.perf_counter() - started
    stderr = process.stderr.read()
    shutil.rmtree(folder, ignore_errors=True)
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{stderr[-3000:]}")
    summary = [line for line in stderr.splitlines() if line.startswith("asaql:")][-1:]
    return elapsed, python_peak // 1024, java_peak // 1024, summary[0] if summary else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", default="1000000,10000000")
    parser.add_argument("--files-per-million", type=int, default=10)
    parser.add_argument("--only", default="passthrough_file,tumbling")
    parser.add_argument("--master", default="local[2]")
    args = parser.parse_args()
    sizes = [int(n) for n in args.events.split(",")]
    with tempfile.TemporaryDirectory(prefix="asaql-memory-") as folder:
        work = Path(folder)
        print(f"{args.master}; peak resident memory sampled every 50 ms", flush=True)
        for events in sizes:
            files = max(1, events * args.files_per_million // 1_000_000)
            source = work / f"in-{events}"
            source.mkdir()
            began = time.perf_counter()
            generate(source, events, files)
            print(f"{events:,} events in {files} files generated in "
                  f"{time.perf_counter() - began:.0f} s", flush=True)
            for job in args.only.split(","):
                seconds, python_mib, java_mib, summary = measured(job, source, work,
                                                                  args.master)
                events_read = re.search(r"(\d+) events read", summary)
                print(f"  {job:18s} {seconds:6.1f} s   Python driver peak {python_mib:5d} MiB   "
                      f"JVM peak {java_mib:5d} MiB   events read "
                      f"{events_read.group(1) if events_read else '?'}", flush=True)
            shutil.rmtree(source)


if __name__ == "__main__":
    main()
