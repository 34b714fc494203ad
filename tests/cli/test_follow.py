"""`asaql run --follow` keeps running, picks up new files, and stops cleanly on Ctrl-C.

Ctrl-C and the exit code are a real process's (the first test); what --follow does with what
arrives meanwhile (windows closed by the arrival clock, a changed reference file) is the same
command run in a thread on the shared session, which saves a JVM start a test.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from arrivals import arrive
from thread_run import ThreadRun

EVENT = ('{{"id": {id}, "t": "2021-01-01T00:00:0{id}Z", '
         '"EventEnqueuedUtcTime": "2021-01-01T00:00:0{id}Z", "PartitionId": 0}}\n')


def wait_for_rows(path: Path, count: int, process, seconds: float = 120) -> list[dict]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read()
        if path.exists():
            rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
            if len(rows) >= count:
                return rows
        time.sleep(0.5)
    raise AssertionError(f"fewer than {count} rows in {path} after {seconds} s")


@contextlib.contextmanager
def following(tmp_path, query_text: str, *options: str):
    """`asaql run --follow` in a real process over tmp_path/inbox; yields (process, output path,
    a function that sends Ctrl-C and returns stderr); never leaves the process behind."""
    query = tmp_path / "q.sql"
    query.write_text(query_text)
    out = tmp_path / "out.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "asaql.cli", "run", str(query), "--input", str(tmp_path / "inbox"),
         "--output", f"out={out}", "--follow", "--checkpoint", str(tmp_path / "ck"), *options],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def interrupt() -> str:
        process.send_signal(signal.SIGINT)
        return process.communicate(timeout=120)[1]

    try:
        yield process, out, interrupt
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGKILL)


def test_follow_picks_up_new_files_and_stops_cleanly_on_ctrl_c(tmp_path):
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "a.jsonl").write_text(EVENT.format(id=1) + EVENT.format(id=2))
    query = "SELECT id, System.Timestamp() AS ts INTO out FROM input TIMESTAMP BY t"
    with following(tmp_path, query) as (process, out, interrupt):
        assert [r["id"] for r in wait_for_rows(out, 2, process)] == [1, 2]
        arrive(inbox / "b.jsonl", EVENT.format(id=3))
        rows = wait_for_rows(out, 3, process)
        assert [r["id"] for r in rows] == [1, 2, 3]
        assert rows[2]["ts"] == "2021-01-01T00:00:03.0000000Z"
        stderr = interrupt()
    assert process.returncode == 0, stderr
    assert "asaql: 3 input events, 3 output events" in stderr
    assert "Traceback" not in stderr


@contextlib.contextmanager
def following_in_session(spark, tmp_path, query_text: str, *options: str):
    """`asaql run --follow` over tmp_path/inbox on the shared session; yields (run, output
    path, a function that stops it between micro-batches, as Ctrl-C does, and returns its
    result); never leaves its streaming queries behind."""
    query = tmp_path / "q.sql"
    query.write_text(query_text)
    out = tmp_path / "out.jsonl"
    run = ThreadRun(["run", str(query), "--input", str(tmp_path / "inbox"), "--output",
                      f"out={out}", "--follow", "--checkpoint", str(tmp_path / "ck"),
                      "--errors", str(tmp_path / "errors.jsonl"), *options])

    def stop():
        for query in spark.streams.active:  # the run ends when its queries do
            query.stop()
        run.thread.join(120)
        assert not run.thread.is_alive(), "the run did not end after its queries stopped"
        return run.result

    try:
        yield run, out, stop
    finally:
        if run.thread.is_alive():
            stop()


def test_follow_closes_windows_of_an_idle_input_by_its_arrival_clock(spark, tmp_path):
    """No end of input with --follow: the window closes because the idle input's arrival clock
    advances with wall time (a tick record) past its end + the late tolerance."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "a.jsonl").write_text(EVENT.format(id=1) + EVENT.format(id=2))
    query = ("SELECT System.Timestamp() AS WindowEnd, COUNT(*) AS n INTO out "
             "FROM input TIMESTAMP BY t GROUP BY TumblingWindow(second, 5)")
    with following_in_session(spark, tmp_path, query, "--late", "1s") as (run, out, stop):
        rows = wait_for_rows(out, 1, run)
        assert rows == [{"WindowEnd": "2021-01-01T00:00:05.0000000Z", "n": 2}]
        assert list((tmp_path / "ck" / "source-0" / "asaql-control").glob("*-tick.jsonl"))
        result = stop()
    assert result.exit_code == 0, result.output
    assert "asaql: 2 input events, 1 output events" in result.stderr


def restarted(spark, before: set, run, seconds: float = 120) -> None:
    """Until the run's queries are new runs (none of `before`'s run ids) and active."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert run.poll() is None, run.said()
        now = {q.runId for q in spark.streams.active}
        if now and not now & before:
            return
        time.sleep(0.2)
    raise AssertionError("the queries did not restart after the reference file changed")


def test_follow_uses_a_changed_reference_file_from_the_next_micro_batch(spark, tmp_path):
    """Reference data is refreshed when its file changes: events after the change join the new
    rows; nothing written before is written again."""
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    names = tmp_path / "names.jsonl"
    names.write_text('{"id": 1, "name": "one"}\n{"id": 2, "name": "two"}\n')
    (inbox / "a.jsonl").write_text(EVENT.format(id=1) + EVENT.format(id=2))
    query = ("SELECT e.id, n.name INTO out FROM input e TIMESTAMP BY t "
             "LEFT JOIN Names n ON e.id = n.id")
    with following_in_session(spark, tmp_path, query, "--reference",
                              f"Names={names}") as (run, out, stop):
        assert wait_for_rows(out, 2, run) == [{"id": 1, "name": "one"}, {"id": 2, "name": "two"}]
        before = {q.runId for q in spark.streams.active}
        names.write_text('{"id": 3, "name": "three"}\n')
        restarted(spark, before, run)  # the change is seen within a poll; the queries restart
        arrive(inbox / "b.jsonl", EVENT.format(id=3) + EVENT.format(id=1))
        rows = wait_for_rows(out, 4, run)
        assert sorted(rows[2:], key=lambda r: r["id"]) == [{"id": 1, "name": None},
                                                          {"id": 3, "name": "three"}], rows
        result = stop()
    assert result.exit_code == 0, result.output
    assert len(out.read_text().splitlines()) == 4
