"""The driver's class archive (asaql/spark/session/class_archive.py), through the real `asaql run`
in processes of their own: the next run's driver loads Spark's classes from the archive (the
JVM's class loading log says where each class came from); an archive that does not fit the JVM
is passed over without a word, and the rows are the same; the switch turns it off; of two
makers, one works."""

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


def test_the_driver_starts_from_the_archive_and_passes_over_one_that_does_not_fit(
        tmp_path, monkeypatch):
    archive = class_archive.make_now()
    assert archive is not None and archive.is_file()
    with_archive, source = _run(tmp_path, {}, "with")
    assert with_archive.returncode == 0, with_archive.stderr
    assert source == "shared objects file (top)"
    # a cache whose archive is not one (the engine's jar as built: not built again)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "jvm").symlink_to(cache_dir() / "jvm")
    monkeypatch.setenv("ASAQL_CACHE_DIR", str(cache))
    broken = class_archive.archive_path()
    broken.parent.mkdir(parents=True)
    broken.write_bytes(b"not an archive" * 1000)
    passed_over, source = _run(tmp_path, {}, "broken")
    assert passed_over.returncode == 0, passed_over.stderr
    assert "shared objects file" not in source
    assert with_archive.stdout == passed_over.stdout and with_archive.stdout.count("\n") > 5
    said = passed_over.stderr.lower()
    assert not any(word in said for word in ("cds", "archive", "shared"))
    assert all(line.startswith("asaql: ") for line in passed_over.stderr.splitlines())


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
