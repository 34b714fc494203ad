"""The driver's class archive (asaql/spark/session/class_archive.py), through the real `asaql run`
in processes of their own: the next run's driver loads Spark's classes from the archive (the
JVM's class loading log says where each class came from) and writes the rows a run without it
writes; an archive that does not fit the JVM is passed over without a word; the switch turns
it off; of two makers, one works."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from asaql.jvm.engine import cache_dir
from asaql.spark.session import class_archive

IOT = Path(__file__).resolve().parents[2] / "samples" / "iot_devices" / "input.jsonl"
QUERY = ("SELECT deviceId, COUNT(*) AS n, System.Timestamp() AS w INTO out FROM input "
         "TIMESTAMP BY EventTime GROUP BY deviceId, TumblingWindow(second, 5)")
SPARK_CONTEXT = re.compile(r"org\.apache\.spark\.SparkContext source: (.*)")


def _run(folder: Path, env: dict, name: str) -> tuple[subprocess.CompletedProcess, str]:
    """`asaql run` with the JVMs' class loading logged; → (the process, where SparkContext's
    class came from, as the driver's log says)."""
    work = folder / name
    work.mkdir()
    query = work / "query.sql"
    query.write_text(QUERY, encoding="utf-8")
    logs = work / "classes"
    logs.mkdir()
    env = {**os.environ, **env, "JAVA_TOOL_OPTIONS": f"-Xlog:class+load=info:file={logs}/%p.log"}
    result = subprocess.run(
        [sys.executable, "-m", "asaql.cli", "run", str(query), "--input", f"input={IOT}",
         "--late", "5s", "--ooo", "2s", "--errors", str(work / "errors.jsonl")],
        capture_output=True, text=True, env=env, cwd=work, timeout=300)
    sources = [m.group(1) for log in logs.iterdir()
               for m in SPARK_CONTEXT.finditer(log.read_text(errors="replace"))]
    assert len(sources) == 1, sources  # the driver's JVM (the launcher's loads no Spark class)
    return result, sources[0]


def test_the_next_driver_starts_from_the_archive_with_the_same_rows(tmp_path):
    archive = class_archive.make_now()
    assert archive is not None and archive.is_file()
    with_archive, source = _run(tmp_path, {}, "with")
    assert with_archive.returncode == 0, with_archive.stderr
    assert source == "shared objects file (top)"
    without, source = _run(tmp_path, {class_archive.SWITCH: "off"}, "without")
    assert without.returncode == 0, without.stderr
    assert "shared objects file" not in source
    assert with_archive.stdout == without.stdout and with_archive.stdout.count("\n") > 5


def test_an_archive_that_does_not_fit_is_passed_over_quietly(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "jvm").symlink_to(cache_dir() / "jvm")  # the engine's jar as built: not again
    monkeypatch.setenv("ASAQL_CACHE_DIR", str(cache))
    archive = class_archive.archive_path()
    archive.parent.mkdir(parents=True)
    archive.write_bytes(b"not an archive" * 1000)
    result, source = _run(tmp_path, {}, "broken")
    assert result.returncode == 0, result.stderr
    assert "shared objects file (top)" not in source
    assert result.stdout.count("\n") > 5
    said = result.stderr.lower()
    assert not any(word in said for word in ("cds", "archive", "shared"))
    assert all(line.startswith("asaql: ") for line in result.stderr.splitlines())


def test_the_switch_and_the_makers_lock(tmp_path, monkeypatch):
    monkeypatch.setenv("ASAQL_CACHE_DIR", str(tmp_path))
    path = class_archive.archive_path()
    lock = path.with_name(path.name + ".making")
    assert class_archive.take_lock(path)  # the first maker
    assert not class_archive.take_lock(path)  # a second, while the first works
    old = time.time() - class_archive.STALE_SECONDS - 5
    os.utime(lock, (old, old))  # a maker that died long ago
    assert class_archive.take_lock(path)
    path.write_bytes(b"x")
    assert class_archive.driver_options().startswith(f"-XX:SharedArchiveFile={path} ")
    monkeypatch.setenv(class_archive.SWITCH, "off")
    assert class_archive.driver_options() == ""
    assert class_archive.make_now() is None
