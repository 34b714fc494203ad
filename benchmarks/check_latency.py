"""How long `asaql check` takes on a 50-line query, end to end in a new process (no JVM),
against the interpreter's own start-up measured in the same run.

    python benchmarks/check_latency.py [--runs 10]

Prints the median wall time of: `python -c pass` (the floor no command can go below),
`python -c "import click"`, and `asaql check` on a generated 50-line query (ten windowed
statements), without and with an input sample; then the part that is asaql's own.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "samples" / "iot_devices" / "input.jsonl"


def query_50_lines() -> str:
    lines = []
    for i in range(10):
        lines += [f"SELECT deviceId, AVG(temperature) AS t{i}, COUNT(*) AS n, "
                  "System.Timestamp() AS ts",
                  f"INTO out{i}", "FROM input TIMESTAMP BY EventTime OVER deviceId",
                  f"WHERE temperature > {i}", "GROUP BY deviceId, TumblingWindow(second, 10)"]
    return "\n".join(lines) + "\n"


def median_seconds(command: list[str], runs: int, env: dict) -> float:
    subprocess.run(command, capture_output=True, env=env)  # warm the file cache and .pyc files
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run(command, capture_output=True, env=env)
        times.append(time.perf_counter() - started)
        if result.returncode not in (0, 1):
            raise SystemExit(result.stderr.decode())
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    runs = parser.parse_args().runs
    # .pyc files as a normal installation has them (some sandboxes set this variable)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as tmp:
        query = Path(tmp) / "q50.sql"
        query.write_text(query_50_lines())
        cli = [sys.executable, "-m", "asaql.cli", "check", str(query)]
        bare = median_seconds([sys.executable, "-c", "pass"], runs, env)
        click = median_seconds([sys.executable, "-c", "import click"], runs, env)
        check = median_seconds(cli, runs, env)
        sampled = median_seconds([*cli, "--input", str(SAMPLE)], runs, env)
    print(f"python -c pass                         {bare * 1000:7.0f} ms")
    print(f"python -c 'import click'               {click * 1000:7.0f} ms")
    print(f"asaql check (50 lines)                 {check * 1000:7.0f} ms")
    print(f"asaql check (50 lines, --input sample) {sampled * 1000:7.0f} ms")
    print(f"asaql's own part (check − python)      {(check - bare) * 1000:7.0f} ms")


if __name__ == "__main__":
    main()
