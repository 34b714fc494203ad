"""Kafka failures against a real broker (Tansu, tests/kafka_broker.py): bad credentials, a
broker stopped mid-run with a secret in the settings, a checkpoint past the topic's end, empty
and null messages, and a partition that goes silent under --follow. Each is one clear message
and a known exit code (or an errors-file line), within seconds, never a hang or a traceback.

Covered elsewhere: a broker down at start and a missing input topic (test_kafka_input.py), a
broker stopped mid-run (test_kafka_follow.py), a missing output topic (test_kafka_output.py),
malformed messages (test_kafka_input.py). Offsets that fell out of retention cannot be made on
the test broker: it keeps every record (no DeleteRecords, no retention) and answers a fetch
outside its records with nothing rather than OFFSET_OUT_OF_RANGE (docs/kafka.md).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from click.testing import CliRunner
from kafka_broker import read_jsonl, running_broker, stop
from test_follow import wait_for_rows
from test_kafka_input import run_cli

from asaql.cli import cli

SECRET = "s3cr3t-Key-0f-the-hub="


def _asaql(tmp_path, *args: str) -> subprocess.Popen:
    """The real CLI in its own process; TMPDIR in tmp_path, so Spark's log file is there."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    return subprocess.Popen([sys.executable, "-m", "asaql.cli", *args], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("how", ["kafka_config", "connection_string", "output"])
def test_bad_credentials_are_one_line_within_seconds_and_never_show_the_secret(tmp_path, how):
    # Tansu speaks SASL SCRAM only (not Event Hubs' PLAIN), over plain TCP here: the settings
    # file says so, and for a connection string it wins over the string's SASL_SSL/PLAIN.
    config = tmp_path / "client.properties"
    lines = ["security.protocol=SASL_PLAINTEXT", "sasl.mechanisms=SCRAM-SHA-512"]
    with running_broker(tmp_path / "broker.log", authentication=True) as broker:
        target = f"out={tmp_path / 'out.jsonl'}"
        if how in ("kafka_config", "output"):
            lines += ["sasl.username=asaql", f"sasl.password={SECRET}"]
            source = broker.uri("telemetry")
        else:
            source = (f"Endpoint=sb://{broker.address}/;SharedAccessKeyName=listen;"
                      f"SharedAccessKey={SECRET};EntityPath=telemetry")
        if how == "output":  # a file in, the refusing broker's topic out
            (tmp_path / "in.jsonl").write_text('{"id": 1}\n')
            source, target = str(tmp_path / "in.jsonl"), f"out={broker.uri('results')}"
        config.write_text("\n".join(lines) + "\n")
        (tmp_path / "q.sql").write_text("SELECT * INTO out FROM input")
        began = time.monotonic()
        process = _asaql(tmp_path, "run", "q.sql", "--input", source, "--kafka-config",
                         str(config), "--output", target,
                         "--errors", str(tmp_path / "errors.jsonl"))
        stdout, stderr = process.communicate(timeout=120)
        took = time.monotonic() - began
    assert process.returncode == 2, stderr
    assert took < 20, took  # the refusal is seen at once, not after the 10 s answer timeout
    said = stderr.strip().splitlines()
    assert len(said) == 1 and said[0].startswith("error: the Kafka broker "), stderr
    assert "refused the credentials" in said[0] and "authentication" in said[0]
    assert "Traceback" not in stderr
    written = [stdout, stderr] + [path.read_text(errors="replace")
                                  for path in tmp_path.rglob("*")
                                  if path.is_file() and path.name != "client.properties"]
    assert not any(SECRET in text for text in written)


def test_a_broker_stopped_mid_run_leaves_no_secret_in_any_output_or_log(tmp_path):
    """A run that has settings with a secret (ignored by the plain-TCP test broker) fails
    inside Spark when the broker stops: one message, exit 3, and the secret is nowhere: not on
    stdout or stderr, nor in Spark's log, the checkpoint, the errors file or the output."""
    config = tmp_path / "client.properties"
    config.write_text(f"sasl.username=asaql\nsasl.password={SECRET}\n")
    (tmp_path / "q.sql").write_text("SELECT id INTO out FROM input")
    out = tmp_path / "out.jsonl"
    with running_broker(tmp_path / "broker.log") as broker:
        broker.create_topic("guarded", 2)
        broker.produce("guarded", [{"id": i} for i in range(4)],
                       partition_of=lambda r: r["id"] % 2,
                       timestamp_of=lambda r: int(time.time() * 1000))
        process = _asaql(tmp_path, "run", "q.sql", "--input", broker.uri("guarded"),
                         "--kafka-config", str(config), "--output", f"out={out}", "--follow",
                         "--checkpoint", str(tmp_path / "ck"),
                         "--errors", str(tmp_path / "errors.jsonl"))
        try:
            wait_for_rows(out, 4, process, seconds=180)
            broker.produce("guarded", ["not json"], partition_of=lambda r: 0,
                           timestamp_of=lambda r: int(time.time() * 1000))
            deadline = time.monotonic() + 120
            while not (tmp_path / "errors.jsonl").exists() and time.monotonic() < deadline:
                assert process.poll() is None, process.stderr.read()
                time.sleep(0.5)
            stop(broker.process)
            stopped = time.monotonic()
            stdout, stderr = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
    assert time.monotonic() - stopped < 60
    assert process.returncode == 3, stderr
    assert "reading a Kafka input failed" in stderr and "Traceback" not in stderr
    log = tmp_path / "asaql-spark.log"
    assert log.exists() and log.stat().st_size > 0  # Spark's log is where the check looks
    assert read_jsonl(tmp_path / "errors.jsonl")[0]["offset"] == 2
    written = [stdout, stderr] + [path.read_text(errors="replace")
                                  for path in tmp_path.rglob("*")
                                  if path.is_file() and path != config]
    assert not any(SECRET in text for text in written)


def test_a_checkpoint_past_the_end_of_a_re_created_topic_is_refused(spark, kafka_broker,
                                                                    tmp_path):
    stamp = lambda r: 1_767_225_600_000 + r["id"] * 1000  # noqa: E731
    kafka_broker.create_topic("recreated", 2)
    kafka_broker.produce("recreated", [{"id": i} for i in range(6)],
                         partition_of=lambda r: r["id"] % 2, timestamp_of=stamp)
    checkpoint = str(tmp_path / "checkpoint")
    code, said, rows, _ = run_cli(tmp_path / "run", "SELECT id INTO out FROM input",
                                  kafka_broker.uri("recreated"), "--checkpoint", checkpoint)
    assert code == 0, said
    assert sorted(r["id"] for r in rows) == list(range(6))

    kafka_broker.delete_topic("recreated")
    kafka_broker.create_topic("recreated", 2)  # the same name, new and shorter: ends 1 and 0
    kafka_broker.produce("recreated", [{"id": 100}], partition_of=lambda r: 0,
                         timestamp_of=stamp)
    began = time.monotonic()
    code, said, rows, _ = run_cli(tmp_path / "run", "SELECT id INTO out FROM input",
                                  kafka_broker.uri("recreated"), "--checkpoint", checkpoint)
    assert code == 3, said
    assert time.monotonic() - began < 60
    assert "the checkpoint has read partition" in said
    assert "deleted or emptied; use a new --checkpoint" in said
    assert "Traceback" not in said and "ConfigurationError" not in said
    assert sorted(r["id"] for r in rows) == list(range(6))  # nothing read from elsewhere


def _produce_every(broker, topic: str, partition: int, seconds: float, stop: threading.Event,
                   sent: list) -> None:
    """One record stamped now to `partition` every `seconds`, until `stop`."""
    while not stop.wait(seconds):
        moment = int(time.time() * 1000)
        broker.produce(topic, [{"n": len(sent)}], partition_of=lambda r: partition,
                       timestamp_of=lambda r: moment)
        sent.append(moment)


def test_windows_close_under_follow_while_one_partition_is_silent(spark, tmp_path):
    """Partition 1 sends one record and falls silent; partition 0 goes on. The combined
    watermark does not wait for partition 1: windows after its last record close by the
    arrival clock. Then partition 0 stops too, and the tick records close its last window.
    Ctrl-C stops the run cleanly: exit 0 and the summary, every record counted once; a later
    run on the same checkpoint reads only what came since."""
    query = ("SELECT COUNT(*) AS n, System.Timestamp() AS windowEnd INTO out FROM input "
             "GROUP BY TumblingWindow(second, 2)")
    (tmp_path / "q.sql").write_text(query)
    out = tmp_path / "out.jsonl"
    with running_broker(tmp_path / "broker.log") as broker:
        broker.create_topic("quiet", 2)
        silent_since = int(time.time() * 1000)
        broker.produce("quiet", [{"n": -1}, {"n": -2}], partition_of=lambda r: -r["n"] - 1,
                       timestamp_of=lambda r: silent_since)
        stop, sent = threading.Event(), []
        producer = threading.Thread(target=_produce_every,
                                    args=(broker, "quiet", 0, 0.5, stop, sent), daemon=True)
        process = _asaql(tmp_path, "run", "q.sql", "--input", broker.uri("quiet"), "--output",
                         f"out={out}", "--follow", "--late", "1s", "--checkpoint",
                         str(tmp_path / "ck"))
        producer.start()
        try:
            # a window that starts 4 s after partition 1's last record: only partition 0
            # feeds it, and it closes while partition 1 says nothing and partition 0 sends
            window = _window_closed(out, process, silent_since + 4000, seconds=240)
            assert not stop.is_set() and process.poll() is None
            in_it = sum(1 for moment in sent if window <= moment < window + 2000)
            stop.set()
            producer.join(10)
            # now nothing arrives at all: the window of the last record closes by the ticks
            _window_closed(out, process, max(sent) - 2000 + 1, seconds=90)
            process.send_signal(signal.SIGINT)
            _, stderr = process.communicate(timeout=120)
            assert process.returncode == 0, stderr
            assert "Traceback" not in stderr
            total = len(sent) + 2
            assert f"asaql: {total} input events, " in stderr  # the summary, as for files
            rows = read_jsonl(out)
            assert sum(row["n"] for row in rows) == total
            assert {_ms(row["windowEnd"]) - 2000: row["n"] for row in rows}[window] == in_it

            # a later run on the same checkpoint goes on after what the stopped one read (the
            # same command, on the shared session: it needs no process of its own)
            moment = int(time.time() * 1000)
            broker.produce("quiet", [{"n": i} for i in range(3)], partition_of=lambda r: 1,
                           timestamp_of=lambda r: moment)
            later = CliRunner().invoke(cli, [
                "run", str(tmp_path / "q.sql"), "--input", broker.uri("quiet"), "--output",
                f"out={out}", "--late", "1s", "--checkpoint", str(tmp_path / "ck"),
                "--errors", str(tmp_path / "asaql-errors.jsonl")])
        finally:
            stop.set()
            producer.join(10)
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
    assert later.exit_code == 0, later.output
    assert "asaql: 3 input events, " in later.stderr
    assert sum(row["n"] for row in read_jsonl(out)) == total + 3


def _window_closed(out, process, starting_at: int, seconds: float) -> int:
    """Waits for a window starting at or after `starting_at` (ms) in the output; its start."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read()
        starts = [_ms(row["windowEnd"]) - 2000 for row in (read_jsonl(out) if out.exists()
                                                           else [])]
        later = [start for start in starts if start >= starting_at]
        if later:
            return min(later)
        time.sleep(0.5)
    raise AssertionError(f"no window starting at or after {starting_at} within {seconds} s")


def _ms(text: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def test_empty_and_null_messages_are_set_aside_not_lost(spark, kafka_broker, tmp_path):
    """A tombstone (no value), an empty and a blank message, and JSON null: none is an event,
    each is an errors-file line with its offset (a blank line in a file is nothing; a message
    is something a producer sent)."""
    from confluent_kafka import Producer

    kafka_broker.create_topic("hollow", 1)
    values = [b'{"id": 1}', None, b"", b"   ", b"null", b'{"id": 2}']
    producer = Producer({"bootstrap.servers": kafka_broker.address})
    for value in values:
        producer.produce("hollow", value, partition=0, timestamp=1_767_225_600_000)
    assert producer.flush(15) == 0
    code, said, rows, errors = run_cli(tmp_path, "SELECT id INTO out FROM input",
                                       kafka_broker.uri("hollow"))
    assert code == 0, said
    assert sorted(r["id"] for r in rows) == [1, 2]
    assert f"{len(values)} events read = 2 accepted + 0 dropped + 4 malformed" in said
    assert sorted(e["offset"] for e in errors) == [1, 2, 3, 4]
    assert all(e["reason"] and e["topic"] == "hollow" for e in errors)
