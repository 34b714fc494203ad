"""`asaql run` on local[2] against a standalone cluster of two 1-core workers, same machine.

    python benchmarks/cluster_scaling.py [--events 200000] [--files 8] [--repeat 1]

Starts the cluster of tests/spark_cluster.py (its executors import asaql only from the zip the
driver ships), then runs, each as its own `python -m asaql.cli run` process, the IoT sample and
a 10-second tumbling COUNT/AVG per device over generated events (benchmarks/policy_throughput.py
writes them), once on local[2] and once on the cluster. Prints, per run, the process's wall time
(session start included) and the run's own time from its summary line, the ratio
cluster/local, and checks that both give the same rows. The cluster's session gets 8 shuffle
partitions, local[2] gets 2 (asaql/spark/session/builder.py): part of what is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from policy_throughput import WINDOW_QUERY, generate  # noqa: E402
from spark_cluster import standalone_cluster  # noqa: E402

IOT = ROOT / "samples" / "iot_devices"


def asaql_run(work: Path, args: list[str], alias: str, master: str | None, python: str | None):
    """(wall seconds, the run's own seconds, output rows as a multiset)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1",
           "TMPDIR": str(work)}
    if python:
        env["PYSPARK_PYTHON"] = python
    work.mkdir(parents=True, exist_ok=True)
    output = work / "out"
    argv = [sys.executable, "-m", "asaql.cli", "run", *args, "--output", f"{alias}={output}",
            "--late", "5s", "--ooo", "2s", *(["--master", master] if master else [])]
    started = time.perf_counter()
    result = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"asaql failed ({master or 'local[2]'}):\n{result.stderr}")
    own = float(re.search(r"micro-batches in ([\d.]+) s", result.stderr).group(1))
    rows = Counter(json.dumps(json.loads(line), sort_keys=True)
                   for part in output.glob("part-*") for line in part.read_text().splitlines())
    return wall, own, rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=1)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="asaql-scaling-") as folder:
        work = Path(folder)
        source = work / "input"
        source.mkdir()
        generate(source, options.events, options.files)
        query = work / "window.sql"
        query.write_text(WINDOW_QUERY)
        jobs = {"iot sample (304 events)": ([str(IOT / "query.sql"), "--input",
                                             str(IOT / "input.jsonl")], "alerts"),
                f"tumbling window ({options.events:,} events)": ([str(query), "--input",
                                                                 str(source)], "output")}
        with standalone_cluster(work / "cluster") as cluster:
            print(f"{'job':34} {'where':9} {'wall s':>7} {'run s':>7}")
            for name, (args, alias) in jobs.items():
                best = {}
                for where, master, python in (("local[2]", None, None),
                                              ("cluster", cluster.master,
                                               cluster.executor_python)):
                    figures = [asaql_run(work / f"{where}-{len(best)}-{i}", args, alias, master,
                                         python)
                               for i in range(options.repeat)]
                    wall, own = min(f[0] for f in figures), min(f[1] for f in figures)
                    best[where] = (wall, own, figures[0][2])
                    print(f"{name:34} {where:9} {wall:7.1f} {own:7.1f}", flush=True)
                same = best["local[2]"][2] == best["cluster"][2]
                if not same:  # what differs, for whoever explains it
                    only_local = best["local[2]"][2] - best["cluster"][2]
                    only_cluster = best["cluster"][2] - best["local[2]"][2]
                    print(f"  {sum(only_local.values())} rows only on local[2], e.g. "
                          f"{list(only_local)[:3]}\n  {sum(only_cluster.values())} rows only on "
                          f"the cluster, e.g. {list(only_cluster)[:3]}", flush=True)
                print(f"{name:34} cluster/local: wall {best['cluster'][0] / best['local[2]'][0]:.2f}×,"
                      f" run {best['cluster'][1] / best['local[2]'][1]:.2f}×; same rows: {same}",
                      flush=True)


if __name__ == "__main__":
    main()
