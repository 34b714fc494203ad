"""`asaql run --follow` on a topic, in a real process against its own real broker: new records
are picked up as they come, and a broker that stops is one clear error within seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from kafka_broker import running_broker, stop
from test_follow import wait_for_rows


def _now_ms(_record) -> int:
    return int(time.time() * 1000)


def test_follow_reads_new_records_and_a_stopped_broker_is_a_clear_error(tmp_path):
    with running_broker(tmp_path / "broker.log") as broker:
        broker.create_topic("live", 2)
        broker.produce("live", [{"id": i} for i in range(4)],
                       partition_of=lambda r: r["id"] % 2, timestamp_of=_now_ms)
        (tmp_path / "q.sql").write_text("SELECT id INTO out FROM input")
        out = tmp_path / "out.jsonl"
        process = subprocess.Popen(
            [sys.executable, "-m", "asaql.cli", "run", str(tmp_path / "q.sql"), "--input",
             broker.uri("live"), "--output", f"out={out}", "--follow", "--checkpoint",
             str(tmp_path / "ck")],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for_rows(out, 4, process)
            broker.produce("live", [{"id": i} for i in range(4, 7)],
                           partition_of=lambda r: r["id"] % 2, timestamp_of=_now_ms)
            rows = wait_for_rows(out, 7, process, seconds=60)
            assert sorted(r["id"] for r in rows) == list(range(7))

            stop(broker.process)
            stopped = time.monotonic()
            _, stderr = process.communicate(timeout=120)
            assert process.returncode == 3, stderr
            assert time.monotonic() - stopped < 60
            assert "reading a Kafka input failed" in stderr
            assert "did not answer" in stderr or "stopped answering" in stderr
            assert "Traceback" not in stderr
        finally:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGKILL)
