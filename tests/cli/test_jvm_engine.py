"""The JVM engine's jar (asaql/jvm/engine.py): shipped in the wheel `pip wheel .` builds, built
from its sources by the Scala compiler in pyspark's wheel, and, when it cannot be built, a
run that says so in one line and gives the same rows through the Python steps."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

from asaql.jvm.engine import (HASH_NAME, JAR_NAME, build_jar, pyspark_jars, source_hash,
                              sources)

ROOT = Path(__file__).resolve().parents[2]
IOT = ROOT / "samples" / "iot_devices"


def test_the_wheel_ships_the_jar_built_from_its_sources(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "-q",
                            "-w", str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = tmp_path.glob("asaql-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        assert f"asaql/jvm/{JAR_NAME}" in names
        assert any(n.startswith("asaql/jvm/src/") and n.endswith(".scala") for n in names)
        shipped_hash = archive.read(f"asaql/jvm/{HASH_NAME}").decode().strip()
        with zipfile.ZipFile(archive.open(f"asaql/jvm/{JAR_NAME}")) as jar:
            assert "asaql/engine/JsonRecord.class" in jar.namelist()
    assert shipped_hash == source_hash(sources(), pyspark_jars())


def test_asaql_jar_prints_the_jar_and_the_options_that_load_it():
    from click.testing import CliRunner

    from asaql.cli import cli

    path = CliRunner().invoke(cli, ["jar"])
    assert path.exit_code == 0 and Path(path.output.strip()).is_file(), path.output
    conf = CliRunner().invoke(cli, ["jar", "--conf"])
    assert conf.output.split() == ["--jars", path.output.strip(), "--conf",
                                   "spark.sql.extensions=asaql.engine.Extensions", "--conf",
                                   "spark.sql.cache.serializer=asaql.engine.RowCache"]


def test_a_source_that_does_not_compile_is_a_one_line_reason(tmp_path):
    broken = tmp_path / "Broken.scala"
    broken.write_text("object Broken { def f: Int = \"not a number\" }\n", encoding="utf-8")
    problem = build_jar(tmp_path / "out" / JAR_NAME, [broken], pyspark_jars())
    assert problem is not None and problem.startswith("the Scala compiler failed: ")
    assert "\n" not in problem and "Broken.scala" in problem
    assert not (tmp_path / "out" / JAR_NAME).exists()


def test_a_jar_that_cannot_be_built_is_one_line_and_the_python_steps_give_the_rows(tmp_path):
    unwritable = tmp_path / "cache-is-a-file"
    unwritable.write_text("", encoding="utf-8")  # the cache folder cannot be made there
    env = {**os.environ, "ASAQL_CACHE_DIR": str(unwritable / "asaql"),
           "PYTHONPATH": str(ROOT)}
    shipped = ROOT / "asaql" / "jvm" / JAR_NAME
    assert not shipped.exists(), "a checkout ships no jar (this test needs it built)"
    result = subprocess.run(
        [sys.executable, "-m", "asaql.cli", "run", str(IOT / "query.sql"),
         "--input", str(IOT / "input.jsonl"), "--late", "5s", "--ooo", "2s",
         "--errors", str(tmp_path / "errors.jsonl")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    notes = [line for line in result.stderr.splitlines() if "JVM engine" in line]
    assert len(notes) == 1 and notes[0].startswith("asaql: the JVM engine is not loaded ("), \
        result.stderr[-3000:]
    assert "cannot build it in" in notes[0] and "Traceback" not in result.stderr
    expected = [json.loads(line) for line in (IOT / "expected.jsonl").read_text().splitlines()]
    got = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(map(json.dumps, got)) == sorted(map(json.dumps, expected))
