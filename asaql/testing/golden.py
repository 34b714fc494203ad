"""Golden query cases: a folder with query.sql, inputs, case.toml and expected outputs.

One runner for pytest (tests/golden) and for `asaql test`. Layout:
  query.sql            the ASA query
  input.jsonl|input/   events of the single input (several inputs: inputs/<alias>.jsonl or folder)
  reference/<alias>.jsonl|.csv   reference data tables (static, joined without DATEDIFF)
  case.toml            late, ooo, early, action, ordered, max_files_per_trigger, description,
                       on_data_error ("stop", ASA's and the default, or "drop"),
                       float_digits (floats compared to that many significant digits);
                       [inputs] ALIAS = "kafka://HOST:PORT/TOPIC" (or an Event Hubs connection
                       string; ${VAR}s expanded) reads that input from a topic, with the client
                       settings of kafka_config = "FILE" and the start position start = "…";
                       [input_path_patterns] ALIAS = "logs/{date}/{time}" reads that input's
                       folder as a Blob container with that path pattern;
                       [output_path_patterns] ALIAS = "{date}/{time}" writes that output to a
                       folder laid out so: each row read back with its subfolder as "@folder"
  expected.jsonl       rows of the single output (several: expected/<alias>.jsonl)
  expected_error.txt   instead of outputs: the rendered error of a query that must not compile,
                       or of the data error that stops its run (on_data_error, ASA's "stop")
  expected_errors.jsonl  the records the run sets aside (malformed, data errors): each its line,
                       reason and kind ("data error"; none for a malformed record)
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from asaql.compiler.pipeline import compile_query
from asaql.inputs.path_pattern import parse_path_pattern
from asaql.errors import AsaqlError, ConfigurationError
from asaql.inputs.files import patterned
from asaql.kafka.endpoints import start_position
from asaql.plan.policy import EventOrderingPolicy
from asaql.syntax.query_text import read_query_file


@dataclass
class Case:
    name: str
    folder: Path
    query: str
    inputs: dict[str, Path]          # alias as named by the file ('' = the single input)
    expected: dict[str, Path]        # alias ('' = the single output)
    expected_error: Path | None
    options: dict = field(default_factory=dict)
    expected_errors: Path | None = None  # what the errors file holds (ERRORS)
    references: dict[str, Path] = field(default_factory=dict)
    topics: dict[str, str] = field(default_factory=dict)  # alias → a topic (case.toml [inputs])

    @property
    def ordered(self) -> bool:
        return bool(self.options.get("ordered", False))

    @property
    def float_digits(self) -> int | None:
        """Significant digits of a float compared (case.toml `float_digits`), for values
        that numpy sums: its reductions add in another order on another CPU (AVX-512's eight
        lanes, AVX2's four), so their last bits are the machine's."""
        digits = self.options.get("float_digits")
        return None if digits is None else int(digits)

    def policy(self) -> EventOrderingPolicy:
        o = self.options
        return EventOrderingPolicy.from_options(
            str(o.get("late", "5s")), str(o.get("ooo", "0s")), str(o.get("early", "5m")),
            str(o.get("action", "adjust")))


def discover(root: Path) -> list[Path]:
    """Every folder below root that holds a query.sql."""
    return sorted(p.parent for p in Path(root).rglob("query.sql"))


def load_case(folder: Path) -> Case:
    folder = Path(folder)
    options = {}
    if (folder / "case.toml").exists():
        options = tomllib.loads((folder / "case.toml").read_text())
    topics = options.pop("inputs", {})
    return Case(
        name=folder.name,
        folder=folder,
        query=read_query_file(folder / "query.sql"),
        inputs=_named_files(folder, "input", "inputs"),
        expected=_named_files(folder, "expected", "expected"),
        expected_error=folder / "expected_error.txt" if (folder / "expected_error.txt").exists() else None,
        expected_errors=folder / "expected_errors.jsonl"
        if (folder / "expected_errors.jsonl").exists() else None,
        options=options,
        references={item.stem: item for item in sorted((folder / "reference").iterdir())
                     if item.suffix in (".jsonl", ".json", ".csv")}
        if (folder / "reference").is_dir() else {},
        topics={alias: os.path.expandvars(str(where)) for alias, where in topics.items()},
    )


def _named_files(folder: Path, single: str, many: str) -> dict[str, Path]:
    """`input.jsonl` or an `input/` folder of files is the single one ('' alias);
    otherwise `inputs/<alias>.jsonl` (or `inputs/<alias>/`) name each."""
    candidates = [folder / f"{single}.jsonl"] + ([folder / single] if single != many else [])
    for candidate in candidates:
        if candidate.exists():
            return {"": candidate}
    if (folder / many).is_dir():
        return {item.stem: item for item in sorted((folder / many).iterdir())
                if item.suffix == ".jsonl" or item.is_dir()}
    return {}


def _bind(names: tuple[str, ...], files: dict[str, Path], what: str) -> dict[str, Path]:
    if "" in files:
        if len(names) != 1:
            raise ConfigurationError(f"the query has {len(names)} {what}s; name the files per alias")
        return {names[0]: files[""]}
    by_key = {n.lower(): n for n in names}
    return {by_key.get(alias.lower(), alias): path for alias, path in files.items()}


def run_case(case: Case, spark=None, engine: str = "jvm",
             watch=None) -> dict[str, list[dict]]:
    """Run the case's query on Spark; output alias → rows, in the order they were written.
    `engine`: as `asaql run --engine`; `watch`: a CaseWatch (asaql/testing/case_reports.py)."""
    from asaql.run.runner import RunOptions, run

    compiled = compile_query(case.query, case.policy(), tuple(case.references))
    with tempfile.TemporaryDirectory(prefix="asaql-golden-") as tmp:
        patterns = {alias.lower(): parse_path_pattern(text, what=f"{alias}'s path pattern",
                                                      for_input=True)
                    for alias, text in case.options.get("input_path_patterns", {}).items()}
        inputs = {alias: patterned(_replayable(path, Path(tmp) / "inputs" / alias),
                                   patterns.get(alias.lower()))
                  for alias, path in _bind(compiled.input_names, case.inputs, "input").items()}
        inputs.update(_topics(case, compiled.input_names))
        laid_out = {alias.lower(): parse_path_pattern(text, what=f"{alias}'s path pattern")
                    for alias, text in case.options.get("output_path_patterns", {}).items()}
        outputs = {name: os.path.join(tmp, name if name.lower() in laid_out else f"{name}.jsonl")
                   for name in compiled.output_names}
        options = RunOptions(inputs=inputs, outputs=outputs,
                             output_path_patterns={name: laid_out[name.lower()]
                                                   for name in outputs
                                                   if name.lower() in laid_out},
                             max_files_per_trigger=case.options.get("max_files_per_trigger"),
                             kafka_start=start_position(case.options.get("start", "earliest")),
                             errors_path=os.path.join(tmp, "errors.jsonl"),
                             references=_bind(compiled.reference_names,
                                              {k: str(v) for k, v in case.references.items()},
                                              "reference"),
                             functions=case_functions(case.folder), engine=engine,
                             on_data_error=case.options.get("on_data_error", "stop"))
        if watch is not None:
            options.listeners = watch.listeners(compiled, options.errors_path)
        run(compiled, options, spark=spark)
        rows = {name: _folder_rows(Path(path)) if name.lower() in laid_out
                else read_rows(Path(path)) for name, path in outputs.items()}
        if case.expected_errors is not None:  # the records set aside, without their file
            rows[ERRORS] = [{k: v for k, v in entry.items() if k in ("line", "reason", "kind")}
                            for entry in read_rows(Path(options.errors_path))]
        return rows


ERRORS = "@errors"  # run_case's rows of the errors file, when the case expects them


def _folder_rows(folder: Path) -> list[dict]:
    """A laid-out folder output's rows, each with the subfolder its part file is in."""
    return [{**row, "@folder": part.parent.relative_to(folder).as_posix()}
            for part in sorted(folder.rglob("part-*")) for row in read_rows(part)]


def case_functions(folder: Path) -> dict:
    """A case's JavaScript UDFs and UDAs: its Functions/ folder (NAME.js, NAME.js.json)."""
    from asaql.javascript.definitions import read_functions

    return read_functions(str(folder / "Functions")) if (folder / "Functions").is_dir() else {}


def _topics(case: Case, names: tuple[str, ...]) -> dict:
    """The case's topic inputs (case.toml [inputs]), with the settings of its kafka_config
    (a path relative to the case folder)."""
    from asaql.kafka.endpoints import is_kafka_location, kafka_topic
    from asaql.plan.aliases import resolve_aliases

    config = case.options.get("kafka_config")
    config = str(case.folder / config) if config else None
    for alias, where in case.topics.items():
        if not is_kafka_location(where):
            raise ConfigurationError(f"{case.folder / 'case.toml'}: [inputs] {alias} is "
                                     f"kafka://HOST:PORT/TOPIC or an Event Hubs connection "
                                     f"string (files are input.jsonl or inputs/ALIAS.jsonl)")
    return resolve_aliases(names, {alias: kafka_topic(where, config)
                                   for alias, where in case.topics.items()}, "input")


def _replayable(path: Path, copy: Path) -> str:
    """A folder input copied with modification times in name order: Spark's file source admits
    files by modification time, and a checkout gives them all about the same one."""
    if path.is_file():
        return str(path)
    if any(item.is_dir() for item in path.iterdir()):  # a container's folders: their times
        shutil.copytree(path, copy)
        return str(copy)
    copy.mkdir(parents=True)
    for number, item in enumerate(sorted(p for p in path.iterdir() if p.is_file())):
        target = copy / item.name
        shutil.copyfile(item, target)
        os.utime(target, (1_600_000_000 + number, 1_600_000_000 + number))
    return str(copy)


def compile_error(case: Case) -> str | None:
    """The rendered error of compiling the case's query, or None when it compiles."""
    try:
        compile_query(case.query, case.policy(), tuple(case.references))
    except AsaqlError as error:
        return error.render(case.query, "query.sql")
    return None


def case_error(case: Case, spark=None, engine: str = "jvm") -> str | None:
    """The case's rendered error: its query's, or (the query compiles) that of the data error
    that stops its run, as `asaql run` prints it; None when the run ends well."""
    from asaql.spark.failures import data_error_stop, stop_error

    error = compile_error(case)
    if error is not None:
        return error
    try:
        run_case(case, spark=spark, engine=engine)
    except Exception as failure:  # noqa: BLE001 — only a data error's stop is the case's
        stop = data_error_stop(failure)
        if stop is None:
            raise
        if "file" in stop:  # the input's name, wherever the case is run from
            stop["file"] = Path(stop["file"]).name
        return stop_error(stop, "asaql-errors.jsonl", None).render(case.query, "query.sql")
    return None


def read_rows(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def canonical(rows: list[dict], ordered: bool, float_digits: int | None = None) -> list[str]:
    """Compact JSON lines that keep key order (column order is part of the contract);
    floats to `float_digits` significant digits when given."""
    if float_digits is not None:
        rows = [_rounded(row, float_digits) for row in rows]
    lines = [json.dumps(row, ensure_ascii=False, separators=(",", ":")) for row in rows]
    return lines if ordered else sorted(lines)


def _rounded(value, digits: int):
    if isinstance(value, float):
        return float(f"{value:.{digits}g}")
    if isinstance(value, dict):
        return {key: _rounded(item, digits) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item, digits) for item in value]
    return value


def differences(case: Case, actual: dict[str, list[dict]]) -> list[str]:
    """Unified diffs of canonical lines, one per output that does not match."""
    import difflib

    outputs = tuple(name for name in actual if name != ERRORS)
    expected = _bind(outputs, case.expected, "output") if case.expected else {}
    if case.expected_errors is not None:
        expected[ERRORS] = case.expected_errors
    problems = []
    for name in sorted(set(actual) | set(expected)):
        want = canonical(read_rows(expected[name]) if name in expected else [], case.ordered,
                         case.float_digits)
        got = canonical(actual.get(name, []), case.ordered, case.float_digits)
        if want != got:
            diff = difflib.unified_diff(want, got, f"expected/{name}", f"actual/{name}", lineterm="")
            problems.append("\n".join(diff))
    return problems


def write_expected(case: Case, actual: dict[str, list[dict]]) -> None:
    """Rewrite expected files from actual output (`--update`); refused under CI."""
    if os.environ.get("CI", "").lower() == "true":
        raise RuntimeError("refusing to update golden files under CI")
    outputs = {name: rows for name, rows in actual.items() if name != ERRORS}
    single = len(outputs) == 1 and (not case.expected or "" in case.expected)
    for name, rows in actual.items():
        path = case.expected_errors if name == ERRORS else case.folder / "expected.jsonl" \
            if single else case.folder / "expected" / f"{name}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(line + "\n" for line in canonical(rows, case.ordered)))
