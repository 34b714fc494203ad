"""Kill -9 and restart with a topic as input: a folder output and a topic output equal an
uninterrupted run's, row for row (0 lost, 0 duplicated), both for a finite run read in several
micro-batches and for a --follow run while records keep arriving. Set ASAQL_KILL_SEED to replay
a failure."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from kafka_broker import consume_all

QUERY = """
SELECT id, dev, v INTO pass_folder FROM readings
SELECT id, dev, v INTO pass_topic FROM readings
SELECT dev, COUNT(*) AS n, SUM(v) AS total, System.Timestamp() AS WindowEnd INTO win_folder
FROM readings GROUP BY dev, TumblingWindow(second, 20)
"""
FOLLOW_QUERY = """
SELECT id, dev, v INTO pass_folder FROM readings
SELECT id, dev, v INTO pass_topic FROM readings
"""
BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def _records(first: int, count: int) -> list[dict]:
    return [{"id": i, "dev": i % 4, "v": i % 7} for i in range(first, first + count)]


def _produce(broker, topic: str, records: list[dict]) -> None:
    broker.produce(topic, records, partition_of=lambda r: r["id"] % 2,
                   timestamp_of=lambda r: BASE_MS + r["id"] * 250)


def _argv(query: Path, broker, source: str, out: Path, output_topic: str, checkpoint: Path,
          *extra: str) -> list[str]:
    return [sys.executable, "-m", "asaql.cli", "run", str(query), "--input",
            f"readings={broker.uri(source)}", "--output", f"pass_folder={out / 'pass_folder'}",
            "--output", f"pass_topic={broker.uri(output_topic)}",
            *(["--output", f"win_folder={out / 'win_folder'}"] if "win_folder" in
              query.read_text() else []),
            "--checkpoint", str(checkpoint), "--errors", str(out / "errors.jsonl"), *extra]


def _commits(checkpoint: Path) -> int:
    return sum(1 for p in checkpoint.glob("source-*/commits/*") if p.name.isdigit())


def _kill_and_restart(argv: list[str], checkpoint: Path, kills: int, rng: random.Random,
                      log: Path, final_argv: list[str] | None = None,
                      before_final=lambda: None) -> int:
    """Runs `argv`, killing its process group `kills` times at random moments after a commit;
    then calls `before_final` and runs `final_argv` (or `argv`) to its end. → the kills made."""
    done = 0
    with open(log, "a", encoding="utf-8") as stderr:
        while done < kills:
            commits = _commits(checkpoint)
            process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=stderr,
                                       start_new_session=True)
            deadline = time.monotonic() + 300
            while process.poll() is None and _commits(checkpoint) <= commits:
                assert time.monotonic() < deadline, f"no commit in 300 s\n{log.read_text()}"
                time.sleep(0.01)
            time.sleep(rng.uniform(0, 1.0))
            if process.poll() is not None:
                assert process.returncode == 0, log.read_text()[-3000:]
                break
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            done += 1
            stderr.write(f"-- killed, {_commits(checkpoint)} commits\n")
            stderr.flush()
        before_final()
        final = subprocess.run(final_argv or argv, stdout=subprocess.DEVNULL, stderr=stderr,
                               start_new_session=True, timeout=600)
    assert final.returncode == 0, log.read_text()[-3000:]
    return done


def _outputs(folder: Path, broker, topic: str) -> dict[str, Counter]:
    found = {}
    for name in ("pass_folder", "win_folder"):
        lines = [line for part in sorted((folder / name).glob("part-*"))
                 for line in part.read_text().splitlines() if line.strip()]
        found[name] = Counter(lines)
    found["pass_topic"] = Counter(m.value().decode() for m in consume_all(broker.address, topic))
    return found


def _expected(tmp_path: Path, broker, query: Path, source: str) -> dict[str, Counter]:
    out = tmp_path / "expected"
    broker.create_topic(f"{source}_expected", 2)
    result = subprocess.run(_argv(query, broker, source, out, f"{source}_expected",
                                  tmp_path / "expected_checkpoint"),
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    return _outputs(out, broker, f"{source}_expected")


def _assert_same(expected: dict, got: dict, seed: int, log: Path) -> None:
    for name, rows in expected.items():
        lost, extra = rows - got[name], got[name] - rows
        assert not lost and not extra, (
            f"seed {seed} (ASAQL_KILL_SEED={seed} replays it): {name}: {sum(rows.values())} "
            f"expected, {sum(lost.values())} lost, {sum(extra.values())} duplicated or "
            f"unexpected\n{log.read_text()[-3000:]}")


def test_kill_9_during_a_finite_run_over_a_topic(kafka_broker, tmp_path):
    seed = int(os.environ.get("ASAQL_KILL_SEED", random.randrange(1_000_000)))
    rng = random.Random(seed)
    kafka_broker.create_topic("kill_in", 2)
    kafka_broker.create_topic("kill_out", 2)
    _produce(kafka_broker, "kill_in", _records(0, 300))
    query = tmp_path / "q.sql"
    query.write_text(QUERY)
    out, checkpoint, log = tmp_path / "killed", tmp_path / "checkpoint", tmp_path / "runs.log"
    kills = _kill_and_restart(_argv(query, kafka_broker, "kill_in", out, "kill_out", checkpoint,
                                    "--max-events-per-trigger", "40"), checkpoint, 2, rng, log)
    assert kills >= 1, f"seed {seed}: the run ended before any kill"
    got = _outputs(out, kafka_broker, "kill_out")
    expected = _expected(tmp_path, kafka_broker, query, "kill_in")
    assert sum(expected["pass_folder"].values()) == 300 and expected["win_folder"]
    _assert_same(expected, got, seed, log)


def test_kill_9_while_records_keep_arriving(kafka_broker, tmp_path):
    seed = int(os.environ.get("ASAQL_KILL_SEED", random.randrange(1_000_000)))
    rng = random.Random(seed)
    kafka_broker.create_topic("live_in", 2)
    kafka_broker.create_topic("live_out", 2)
    _produce(kafka_broker, "live_in", _records(0, 50))
    stop = threading.Event()

    def keep_producing() -> None:
        first = 50
        while not stop.wait(0.3) and first < 10_000:
            _produce(kafka_broker, "live_in", _records(first, 10))
            first += 10

    producer = threading.Thread(target=keep_producing, daemon=True)
    producer.start()
    query = tmp_path / "q.sql"
    query.write_text(FOLLOW_QUERY)
    out, checkpoint, log = tmp_path / "killed", tmp_path / "checkpoint", tmp_path / "runs.log"
    following = _argv(query, kafka_broker, "live_in", out, "live_out", checkpoint, "--follow")
    finite = _argv(query, kafka_broker, "live_in", out, "live_out", checkpoint)

    def stop_producing() -> None:  # the final, finite run reads to the end found at its start
        stop.set()
        producer.join()

    try:
        kills = _kill_and_restart(following, checkpoint, 2, rng, log, final_argv=finite,
                                  before_final=stop_producing)
    finally:
        stop_producing()
    assert kills == 2
    got = _outputs(out, kafka_broker, "live_out")
    expected = _expected(tmp_path, kafka_broker, query, "live_in")
    _assert_same(expected, got, seed, log)
