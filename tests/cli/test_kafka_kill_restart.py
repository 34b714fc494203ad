"""Kill -9 and restart with a topic as input: a folder output and a topic output equal an
uninterrupted run's, row for row (0 lost, 0 duplicated), and the record accounting too, both for
a finite run read in several micro-batches and for a --follow run while records keep arriving
(the kills: tests/kill_restart.py). Both read the same records, so one uninterrupted run, in
this process on the session's Spark, is the reference of both. Set ASAQL_KILL_SEED to replay a
failure."""

from __future__ import annotations

import os
import random
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest

from asaql.compiler.pipeline import compile_query
from asaql.kafka.endpoints import kafka_topic
from asaql.run.runner import RunOptions, run
from kafka_broker import consume_all
from kill_restart import COMMITTED, WRITTEN, committed_batches, record_accounting, run_with_kills

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
RECORDS = 300
BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z
FOLDERS = {"pass_folder": "pass_folder", "win_folder": "win_folder"}  # as run_with_kills sees them
SEED = int(os.environ.get("ASAQL_KILL_SEED", random.randrange(1_000_000)))


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


def _outputs(folder: Path, broker, topic: str) -> dict[str, Counter]:
    found = {}
    for name in ("pass_folder", "win_folder"):
        lines = [line for part in sorted((folder / name).glob("part-*"))
                 for line in part.read_text().splitlines() if line.strip()]
        found[name] = Counter(lines)
    found["pass_topic"] = Counter(m.value().decode() for m in consume_all(broker.address, topic))
    return found


@pytest.fixture(scope="module")
def uninterrupted(spark, kafka_broker, tmp_path_factory):
    """The records on a topic, and the uninterrupted run's rows (each record read, once)."""
    out = tmp_path_factory.mktemp("kafka_kill_restart") / "expected"
    for topic in ("kill_in", "kill_expected"):
        kafka_broker.create_topic(topic, 2)
    _produce(kafka_broker, "kill_in", _records(0, RECORDS))
    counts = run(compile_query(QUERY), RunOptions(
        inputs={"readings": kafka_topic(kafka_broker.uri("kill_in"))},
        outputs={"pass_folder": str(out / "pass_folder"), "win_folder": str(out / "win_folder"),
                 "pass_topic": kafka_topic(kafka_broker.uri("kill_expected"))},
        errors_path=str(out / "errors.jsonl")), spark=spark)
    rows = _outputs(out, kafka_broker, "kill_expected")
    assert sum(rows["pass_folder"].values()) == RECORDS and rows["win_folder"]
    assert counts.read == counts.accepted == RECORDS and not counts.dropped + counts.malformed
    return rows


def _assert_same(expected: dict, got: dict, log: str) -> None:
    for name, rows in expected.items():
        lost, extra = rows - got[name], got[name] - rows
        assert not lost and not extra, (
            f"seed {SEED} (ASAQL_KILL_SEED={SEED} replays it): {name}: {sum(rows.values())} "
            f"expected, {sum(lost.values())} lost, {sum(extra.values())} duplicated or "
            f"unexpected\n{log[-3000:]}")
    read, accepted, dropped, malformed = record_accounting(log)  # the last start's
    assert read == accepted + dropped + malformed and read <= RECORDS, log[-3000:]


def test_kill_9_during_a_finite_run_over_a_topic(uninterrupted, kafka_broker, tmp_path):
    expected = uninterrupted
    kafka_broker.create_topic("kill_out", 2)
    query = tmp_path / "q.sql"
    query.write_text(QUERY)
    out, checkpoint = tmp_path / "killed", tmp_path / "checkpoint"
    killed = run_with_kills(
        _argv(query, kafka_broker, "kill_in", out, "kill_out", checkpoint,
              "--max-events-per-trigger", "40"), checkpoint, out, (WRITTEN, COMMITTED),
        random.Random(SEED), tmp_path, FOLDERS, steady=("pass_folder",))
    assert killed.kills == 2, f"seed {SEED}: the run ended before a kill\n{killed.log}"
    _assert_same(expected, _outputs(out, kafka_broker, "kill_out"), killed.log)


def test_kill_9_while_records_keep_arriving(uninterrupted, kafka_broker, tmp_path):
    """The same records arrive while a --follow run reads them: it is killed just after a
    micro-batch wrote; a finite run on its checkpoint reads the rest."""
    expected = uninterrupted
    for topic in ("live_in", "live_out"):
        kafka_broker.create_topic(topic, 2)
    _produce(kafka_broker, "live_in", _records(0, 50))
    out, checkpoint = tmp_path / "killed", tmp_path / "checkpoint"
    stop, produced, meanwhile = threading.Event(), [50], []

    def keep_producing() -> None:  # from the run's first commit on, while it runs
        while not stop.wait(0.05) and committed_batches(checkpoint) == 0:
            pass
        while not stop.wait(0.3) and produced[0] < RECORDS:
            _produce(kafka_broker, "live_in", _records(produced[0], 5))
            produced[0] += 5

    producer = threading.Thread(target=keep_producing, daemon=True)
    producer.start()

    def the_rest() -> None:  # the final, finite run reads to the end found at its start
        stop.set()
        producer.join()
        meanwhile.append(produced[0] - 50)
        _produce(kafka_broker, "live_in", _records(produced[0], RECORDS - produced[0]))

    query = tmp_path / "q.sql"
    query.write_text(FOLLOW_QUERY)
    following = _argv(query, kafka_broker, "live_in", out, "live_out", checkpoint, "--follow")
    finite = _argv(query, kafka_broker, "live_in", out, "live_out", checkpoint)
    try:
        killed = run_with_kills(following, checkpoint, out, (WRITTEN,), random.Random(SEED),
                                tmp_path, FOLDERS, steady=("pass_folder",), final_argv=finite,
                                before_final=the_rest)
    finally:
        stop.set()
    assert killed.kills == 1, f"seed {SEED}: the --follow run ended\n{killed.log}"
    assert meanwhile[0] > 0, f"no record arrived while the --follow run ran\n{killed.log}"
    _assert_same({name: expected[name] for name in ("pass_folder", "pass_topic")},
                 _outputs(out, kafka_broker, "live_out"), killed.log)
