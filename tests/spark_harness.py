"""The one harness of the Spark tests: the session, a streaming run of a query over given input
files (a golden case folder run by the golden runner, as `asaql test` runs it), the same run
replayed one file per micro-batch, and row comparison.

tests/conftest.py builds the session-wide `spark` fixture with `spark_session()`; the property
tests describe a query and its input files and call `replayed(…)`.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from hypothesis import HealthCheck, note, settings

from asaql.testing import golden

# Input files get modification times in name order from here: Spark's file source admits files
# in modification-time order, so name order is arrival order.
FIRST_MTIME = 1_600_000_000

Files = list[tuple[str, list[dict]]]  # (file name, records), in arrival order


# Test-only settings: the tests' micro-batches hold a few dozen rows, so Spark's fixed costs per
# job dominate. Generating and compiling Java code for each new plan (whole-stage and per
# expression), and adaptive execution re-planning each stage of the native step's batch jobs,
# cost a quarter of the CPU time of a property-test example (measured on the policy test; same
# rows either way). Users keep Spark's defaults (asaql/spark/session/builder.py): on real volumes
# compiled code and adaptive plans pay off.
TEST_CONF = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",  # interpreted expressions, no Janino
    "spark.sql.adaptive.enabled": "false",
}


def spark_session():
    """The local session every Spark test shares (2 cores, as CI), with TEST_CONF."""
    from asaql.spark.session import class_archive
    from asaql.spark.session.builder import build_session

    # the driver's class archive, made now if missing: every JVM the tests start (the kill
    # tests' restarts, the CLI's runs) starts from it, and no maker runs beside the tests
    class_archive.make_now()
    # Debian's PostgreSQL JDBC driver, for the database outputs' tests (tests/database)
    jdbc = tuple(jar for jar in ("/usr/share/java/postgresql.jar",) if os.path.exists(jar))
    session = build_session("local[2]", jars=jdbc)
    for key, value in TEST_CONF.items():
        session.conf.set(key, value)
    return session


def property_settings(examples: int, also_suppress=(), **options) -> settings:
    """Hypothesis settings of a property test that runs Spark: no deadline (a micro-batch takes
    a second or so), and the session-wide fixtures are fine to share between examples."""
    return settings(max_examples=examples, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow, *also_suppress], **options)


def in_session_zones(spark, zones: tuple[str, ...], check: Callable[[str], None]) -> None:
    """`check(zone)` with the session's time zone set to each of `zones`, then as it was."""
    zone = spark.conf.get("spark.sql.session.timeZone")
    try:
        for session_zone in zones:
            spark.conf.set("spark.sql.session.timeZone", session_zone)
            check(session_zone)
    finally:
        spark.conf.set("spark.sql.session.timeZone", zone)


def evaluated_both_ways(frame, columns: list) -> list:
    """`frame.select("i", *columns)`'s rows evaluated (a local relation's projection is not
    compiled) and in generated code (after a shuffle), sorted by `i`."""
    interpreted = frame.select("i", *columns).collect()
    compiled = frame.repartition(2).select("i", *columns).collect()
    return sorted(interpreted + compiled, key=lambda row: row["i"])


def split_files(records, sizes) -> Files:
    """`records` cut into files of `sizes` records, named part-000.jsonl, … in order."""
    files, start = [], 0
    for number, size in enumerate(sizes):
        files.append((f"part-{number:03d}.jsonl", list(records[start:start + size])))
        start += size
    return files


def file_sizes(draw, strategies, count: int, most_files: int) -> tuple[int, ...]:
    """A random cut of `count` records into 1 to `most_files` non-empty files (inside an
    @st.composite strategy: `draw` and `strategies` are its own)."""
    files = draw(strategies.integers(1, min(most_files, count)))
    cuts = sorted(draw(strategies.sets(strategies.integers(1, count - 1), min_size=files - 1,
                                       max_size=files - 1))) if count > 1 else []
    bounds = [0, *cuts, count]
    return tuple(b - a for a, b in zip(bounds, bounds[1:]))


def case_toml(generator: str, *, late_s: int, ooo_s: int, action: str, early: str = "60s",
              max_files_per_trigger: int | None = None) -> str:
    """A case.toml with the event-ordering policy; the rows are compared in any order."""
    lines = [f'description = "generated by {generator}"', f'late = "{late_s}s"',
             f'ooo = "{ooo_s}s"', f'early = "{early}"', f'action = "{action}"', "ordered = false"]
    if max_files_per_trigger is not None:
        lines.append(f"max_files_per_trigger = {max_files_per_trigger}")
    return "\n".join(lines) + "\n"


def jsonl(records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def write_case(folder: Path, query: str, inputs: dict[str, Files], toml: str = "",
               references: dict[str, list[dict]] | None = None) -> Path:
    """A golden case folder: `inputs` maps each input alias to its files (the alias '' is the
    query's one input, written to input/); `references` each reference data alias to its rows."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "query.sql").write_text(query, encoding="utf-8")
    if toml:
        (folder / "case.toml").write_text(toml, encoding="utf-8")
    for alias, files in inputs.items():
        target = folder / "input" if alias == "" else folder / "inputs" / alias
        target.mkdir(parents=True)
        for number, (name, records) in enumerate(files):
            path = target / name
            path.write_text(jsonl(records), encoding="utf-8")
            os.utime(path, (FIRST_MTIME + number, FIRST_MTIME + number))
    for alias, rows in (references or {}).items():
        (folder / "reference").mkdir(exist_ok=True)
        (folder / "reference" / f"{alias}.jsonl").write_text(jsonl(rows), encoding="utf-8")
    return folder


def run_case(folder: Path, spark) -> dict[str, list[dict]]:
    """Each output's rows, in written order: the query streamed by the golden runner."""
    return golden.run_case(golden.load_case(folder), spark=spark)


@dataclass
class Replay:
    """A query over the same input files written twice: `one_batch` reads every file in one
    micro-batch, `file_by_file` one file per micro-batch."""

    one_batch: Path
    file_by_file: Path
    outputs: tuple[dict, dict] = field(default=({}, {}))

    def run(self, spark) -> tuple[dict[str, list[dict]], dict[str, list[dict]]]:
        """Both replays at once, as two streaming queries on the one session (half the wall
        time of one after the other)."""
        with ThreadPoolExecutor(max_workers=2) as pool:
            first = pool.submit(run_case, self.one_batch, spark)
            second = pool.submit(run_case, self.file_by_file, spark)
            self.outputs = (first.result(), second.result())
        return self.outputs


@contextmanager
def replayed(tmp_path: Path, query: str, toml_of: Callable[[int | None], str],
             inputs: dict[str, Files]) -> Iterator[Replay]:
    """The two case folders of a Replay under a fresh folder of `tmp_path` (shared by all
    examples of a property test), noted for Hypothesis' report, removed afterwards.
    `toml_of(max_files_per_trigger)` gives each case.toml."""
    workdir = Path(tempfile.mkdtemp(dir=tmp_path))
    try:
        note(toml_of(None) + query)
        for alias, files in inputs.items():
            for name, records in files:
                note(f"{alias}/{name}\n" + jsonl(records))
        yield Replay(write_case(workdir / "one_batch", query, inputs, toml_of(None)),
                     write_case(workdir / "file_by_file", query, inputs, toml_of(1)))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def canonical(rows: list[dict]) -> list[str]:
    """Rows as sorted JSON lines: equal when the same rows came out, in any order."""
    return sorted(json.dumps(row, sort_keys=True) for row in rows)


def same_value(a, b) -> bool:
    """Equal, floats within rounding (Spark and the references sum in different orders)."""
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(a - b) < 1e-9
    return a == b


def lines_of_both_steps(spark, compiled, folder: Path, work: Path,
                        outputs=("events", "windows"), **options) -> dict[str, dict[str, str]]:
    """The compiled query over `folder` through the general step and the native one, each with
    its own outputs and checkpoint under `work`: step → output → the file's text ("" for none).
    `options`: more RunOptions (max_files_per_trigger)."""
    from asaql.run.runner import RunOptions, run

    lines = {}
    for step in ("general", "native"):
        paths = {name: str(work / f"{step}-{name}.jsonl") for name in outputs}
        run(compiled, RunOptions(inputs={"input": str(folder)}, outputs=paths,
                                 errors_path=str(work / f"{step}-errors.jsonl"),
                                 checkpoint=str(work / f"{step}-ck"), step=step, **options),
            spark=spark)
        lines[step] = {name: Path(path).read_text() if Path(path).exists() else ""
                       for name, path in paths.items()}
    return lines


def write_arrival_files(folder: Path, files, in_order: bool, shift: int = 0) -> None:
    """Files of (device, partition, second, offset) events: each event arrives
    (EventEnqueuedUtcTime) at `second` and happened `offset` + `shift` seconds after; in order,
    each file's arrivals sorted and after the file before's (an event hub's capture files),
    else anywhere in 30 s. Each file is a second younger than the one before it."""
    seq = 0
    for number, records in enumerate(files):
        chosen = sorted(records, key=lambda r: r[2]) if in_order else records
        lines = []
        for device, partition, second, offset in chosen:
            seq += 1
            arrival = number * 31 + second if in_order else second
            lines.append(json.dumps({
                "seq": seq, "deviceId": device, "PartitionId": partition,
                "EventEnqueuedUtcTime": _moment(arrival),
                "EventTime": _moment(arrival + offset + shift)}))
        path = folder / f"part-{number}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        os.utime(path, (1_700_000_000 + number,) * 2)


def _moment(second: int) -> str:
    return f"2021-01-01T00:{second // 60:02d}:{second % 60:02d}Z"
