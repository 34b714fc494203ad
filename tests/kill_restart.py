"""Kill -9 and restart: the harness shared by tests/cli/test_kill_restart.py and
tests/cli/test_kafka_kill_restart.py (kills placed where they prove the most) and
tests/kill_restart_soak.py (many).

One query covers each kind of streaming query asaql starts — a pass-through, tumbling windows,
a stream–stream join, and a stage (windows over a step that aggregates) — each written to a
`.jsonl` file and to a folder. `asaql run --checkpoint` runs in its own process group, killed
with SIGKILL at a moment its own progress shows (just after a micro-batch wrote an output and
before Spark commits it, or after a commit), and restarted until it finishes; its outputs must
equal an uninterrupted run's, row for row: 0 lost, 0 duplicated."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

QUERY = """
WITH PerMinute AS (
    SELECT dev, COUNT(*) AS n FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(minute, 1)
)
SELECT * INTO pass_file FROM readings
SELECT * INTO pass_folder FROM readings
SELECT dev, COUNT(*) AS n, System.Timestamp() AS WindowEnd INTO win_file
FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 30)
SELECT dev, COUNT(*) AS n, System.Timestamp() AS WindowEnd INTO win_folder
FROM readings TIMESTAMP BY t GROUP BY dev, TumblingWindow(second, 30)
SELECT r.id, r.dev, a.level, System.Timestamp() AS ts INTO join_file
FROM readings r TIMESTAMP BY t JOIN alerts a TIMESTAMP BY t
ON r.dev = a.dev AND DATEDIFF(second, r, a) BETWEEN 0 AND 10
SELECT r.id, r.dev, a.level, System.Timestamp() AS ts INTO join_folder
FROM readings r TIMESTAMP BY t JOIN alerts a TIMESTAMP BY t
ON r.dev = a.dev AND DATEDIFF(second, r, a) BETWEEN 0 AND 10
SELECT dev, MAX(n) AS peak, SUM(n) AS total, System.Timestamp() AS WindowEnd INTO stage_file
FROM PerMinute GROUP BY dev, TumblingWindow(minute, 5)
SELECT dev, MAX(n) AS peak, SUM(n) AS total, System.Timestamp() AS WindowEnd INTO stage_folder
FROM PerMinute GROUP BY dev, TumblingWindow(minute, 5)
"""
KINDS = ("pass", "win", "join", "stage")
OUTPUTS = {f"{kind}_{how}": f"{kind}_{how}.jsonl" if how == "file" else f"{kind}_{how}"
           for kind in KINDS for how in ("file", "folder")}
STEADY = ("pass_file", "pass_folder", "join_file", "join_folder")  # rows in most micro-batches
ERRORS = "errors.jsonl"
FILE_SUFFIXES = (".jsonl", ".csv", ".json", ".parquet")  # file outputs; others are folders
START = datetime(2021, 1, 1, tzinfo=timezone.utc)


def write_inputs(folder: Path, files: int, events_per_file: int, seed: int) -> dict[str, str]:
    """readings (5 devices, an event a second, a few out of order, one malformed line) and
    alerts (now and then, per device), one file per micro-batch; modification times in file
    order, as the file source admits them."""
    rng = random.Random(seed)
    paths = {"readings": folder / "readings", "alerts": folder / "alerts"}
    for path in paths.values():
        path.mkdir(parents=True)
    number = 0
    for index in range(files):
        readings, alerts = [], []
        for _ in range(events_per_file):
            at = START + timedelta(seconds=number)
            t = at - timedelta(seconds=rng.choice((0, 0, 0, 0, 2)))
            readings.append(json.dumps({"id": number, "dev": number % 5, "t": _iso(t),
                                        "EventEnqueuedUtcTime": _iso(at)}))
            if rng.random() < 0.2:
                alerts.append(json.dumps({"dev": rng.randrange(5), "level": rng.randrange(3),
                                          "t": _iso(at), "EventEnqueuedUtcTime": _iso(at)}))
            number += 1
        if index == 1:
            readings.insert(3, '{"id": "broken", ')
        for alias, lines in (("readings", readings), ("alerts", alerts)):
            target = paths[alias] / f"part-{index:04d}.jsonl"
            target.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
            os.utime(target, (1_600_000_000 + index, 1_600_000_000 + index))
    return {alias: str(path) for alias, path in paths.items()}


def input_lines(inputs: dict[str, str]) -> int:
    """Every non-blank line of the input folders: what a run reads."""
    return sum(1 for folder in inputs.values() for part in Path(folder).iterdir()
               for line in part.read_text(encoding="utf-8").splitlines() if line.strip())


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def run_arguments(query: Path, inputs: dict[str, str], out: Path, checkpoint: Path,
                  outputs: dict[str, str] = OUTPUTS,
                  formats: dict[str, str] | None = None) -> list[str]:
    argv = [sys.executable, "-m", "asaql.cli", "run", str(query), "--checkpoint", str(checkpoint),
            "--max-files-per-trigger", "1", "--errors", str(out / ERRORS)]
    for alias, path in inputs.items():
        argv += ["--input", f"{alias}={path}"]
    for alias, name in outputs.items():
        argv += ["--output", f"{alias}={out / name}"]
    for alias, fmt in (formats or {}).items():
        argv += ["--output-format", f"{alias}={fmt}"]
    return argv


def committed_batches(checkpoint: Path) -> int:
    """Micro-batches Spark committed, over every streaming query of the checkpoint."""
    return sum(1 for p in checkpoint.glob("source-*/commits/*") if p.name.isdigit())


@dataclass
class KilledRun:
    kills: int
    runs: int
    log: str


# Where a kill lands, placed by the run's observable progress (never by the clock alone), once
# the started process has committed a micro-batch of its own: so each restart must keep what
# was committed, restore the windows' and joins' state, and redo only what was not.
WRITTEN = "written"  # within 50 ms of a micro-batch growing an output, before Spark commits it
COMMITTED = "committed"  # up to max_delay seconds after a commit: between micro-batches
PROGRESS_TIMEOUT = 600  # seconds without the awaited progress: the run is stuck, the test fails


def written_so_far(path: Path) -> int:
    """Bytes of an output a reader sees (a `.jsonl` file, a folder's part files; not what
    Spark is still writing): they grow when a micro-batch has written it."""
    total = 0
    for part in ([path] if path.suffix in FILE_SUFFIXES else path.glob("part-*")):
        try:
            total += part.stat().st_size
        except FileNotFoundError:  # not yet written, or replaced meanwhile
            pass
    return total


def run_with_kills(argv: list[str], checkpoint: Path, out: Path, moments: tuple[str, ...],
                   rng: random.Random, log_folder: Path, outputs: dict[str, str] = OUTPUTS,
                   steady: tuple = STEADY, max_delay: float = 1.0,
                   final_argv: list[str] | None = None,
                   before_final: Callable[[], None] = lambda: None) -> KilledRun:
    """Starts the run and SIGKILLs its process group (the driver, its JVM and Python workers
    at once, as a machine dies) at each of `moments` in turn (WRITTEN watches one of `steady`,
    chosen at random); then calls `before_final` and lets `final_argv` (or `argv`) run to its
    end. A run that ends before a kill's moment counts that kill as not made."""
    runs, kills = 0, 0
    log = log_folder / "runs.log"
    with open(log, "a", encoding="utf-8") as stderr:
        for moment in moments:
            runs += 1
            process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr,
                                       start_new_session=True)
            placed = _await(moment, process, checkpoint, out / outputs[rng.choice(steady)],
                            rng, max_delay, log)
            if process.poll() is not None:  # it ended first: no kill
                if process.returncode != 0:
                    raise AssertionError(f"asaql run exited {process.returncode}; see {log}")
                continue
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            kills += 1
            stderr.write(f"-- killed {placed}, {committed_batches(checkpoint)} commits\n")
            stderr.flush()
        before_final()
        runs += 1
        final = subprocess.run(final_argv or argv, stdout=subprocess.DEVNULL, stderr=stderr,
                               start_new_session=True, timeout=PROGRESS_TIMEOUT)
    if final.returncode != 0:
        raise AssertionError(f"asaql run exited {final.returncode}; see {log}")
    return KilledRun(kills, runs, log.read_text(encoding="utf-8"))


def _await(moment: str, process: subprocess.Popen, checkpoint: Path, watched: Path,
           rng: random.Random, max_delay: float, log: Path) -> str:
    """Waits for `moment` of the started process (or its end); → how the kill was placed."""
    def until(reached: Callable[[], bool]) -> None:
        deadline = time.monotonic() + PROGRESS_TIMEOUT
        while process.poll() is None and not reached():
            if time.monotonic() > deadline:
                os.killpg(process.pid, signal.SIGKILL)
                raise AssertionError(f"no progress in {PROGRESS_TIMEOUT} s; see {log}")
            time.sleep(0.005)

    started = committed_batches(checkpoint)
    until(lambda: committed_batches(checkpoint) > started)  # a micro-batch of its own
    if moment == WRITTEN:
        size = written_so_far(watched)
        until(lambda: written_so_far(watched) != size)
        commits = committed_batches(checkpoint)
        time.sleep(rng.uniform(0, 0.05))
        return f"after {watched.name} grew at {commits} commits"  # equal at the kill: uncommitted
    if moment != COMMITTED:
        raise ValueError(f"a kill is placed {WRITTEN!r} or {COMMITTED!r}, not {moment!r}")
    time.sleep(rng.uniform(0, max_delay))
    return "after a commit"


SUMMARY = re.compile(r"(\d+) events read = (\d+) accepted \+ (\d+) dropped \+ (\d+) malformed")


def record_accounting(log: str) -> tuple[int, int, int, int]:
    """(read, accepted, dropped, malformed) of the last summary `asaql run` printed: what the
    start that finished read (the killed starts print none, so not the whole input's)."""
    found = SUMMARY.findall(log)
    assert found, f"no summary of a finished run in the log:\n{log[-3000:]}"
    return tuple(int(n) for n in found[-1])


def read_outputs(out: Path, outputs: dict[str, str] = OUTPUTS) -> dict[str, Counter]:
    """Each output's rows (and the errors file's) as a multiset of lines: JSON lines, CSV lines
    (a `.csv` file's header too: once; a folder's CSV rows each with its part's header), a
    Parquet file's or a JSON array's rows as JSON."""
    found = {}
    for alias, name in {**outputs, "errors": ERRORS}.items():
        path = out / name
        if path.suffix == ".parquet":
            import pyarrow.parquet as pq

            rows = pq.read_table(path).to_pylist() if path.exists() else []
            lines = [json.dumps(row, default=str) for row in rows]
        elif path.suffix == ".json":
            rows = json.loads(path.read_text(encoding="utf-8")) if path.exists() else []
            lines = [json.dumps(row) for row in rows]
        elif path.is_dir():
            lines = [line for part in sorted(path.glob("part-*")) for line in _part_lines(part)]
        else:
            lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        found[alias] = Counter(line for line in lines if line.strip())
    return found


def _part_lines(part: Path) -> list[str]:
    """A folder's part file: JSON lines, CSV rows (each part starts with the header, once:
    checked, not counted, as how many parts a replay's rows fall into is not an output), or
    Parquet rows as JSON."""
    if part.suffix == ".parquet":
        import pyarrow.parquet as pq

        return [json.dumps(row, default=str) for row in pq.read_table(part).to_pylist()]
    lines = part.read_text(encoding="utf-8").splitlines()
    if part.suffix == ".csv":
        header, *rows = lines
        assert header and header not in rows, f"{part}: no header first, or it is repeated"
        return [f"{header} | {row}" for row in rows]
    return lines


def compare(expected: dict[str, Counter], got: dict[str, Counter]) -> dict[str, tuple]:
    """Per output: (expected rows, lost, duplicated or unexpected)."""
    return {alias: (sum(rows.values()), sum((rows - got[alias]).values()),
                    sum((got[alias] - rows).values()))
            for alias, rows in expected.items()}


def differing_lines(expected: dict[str, Counter], got: dict[str, Counter],
                    limit: int = 5) -> dict[str, dict[str, list[str]]]:
    """Per output that differs: a few of its lost and its duplicated lines (for a message)."""
    found = {}
    for alias, rows in expected.items():
        lost, extra = rows - got[alias], got[alias] - rows
        if lost or extra:
            found[alias] = {"lost": sorted(lost)[:limit], "duplicated": sorted(extra)[:limit]}
    return found
