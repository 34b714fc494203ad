"""ASA's CI/CD test configuration (`testConfig.json`: TestCases[].Inputs[]{InputAlias, Type,
Format, FilePath}, ExpectedOutputs[]{OutputAlias, FilePath, Required}) run as `asaql test`
cases, each output's result in ASA's categories (asaql/testing/suite.py).

An input's FilePath may be a topic instead of a file: `kafka://HOST:PORT/TOPIC` or an Event Hubs
connection string (${VAR}s expanded), with asaql's own fields KafkaConfig (a librdkafka
properties file, relative to the configuration) and Start (earliest, now or a time)."""

from __future__ import annotations

import csv
import json
import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from asaql.errors import AsaqlError, ConfigurationError
from asaql.kafka.endpoints import is_kafka_location, kafka_topic, start_position
from asaql.plan.policy import EventOrderingPolicy
from asaql.syntax.query_text import read_query_file
from asaql.testing import golden
from asaql.testing.case_reports import CaseWatch, safe_name
from asaql.testing.suite import (
    MATCHED, MISSING, NOT_EQUAL, UNEXPECTED, UNREQUIRED, CaseResult, OutputResult, row_diff,
)


@dataclass
class AsaCase:
    name: str
    inputs: dict[str, tuple[str, str, str]]  # alias → (path, type, format)
    expected: list[tuple[str, str, bool]]  # (alias, path, required)
    topics: dict = field(default_factory=dict)  # alias → a KafkaTopic read instead of a file
    start: str | int = "earliest"  # where the topics are read from


def load_asa_config(path: str, query: str | None = None) -> tuple[Path, list[AsaCase]]:
    """→ (the query file, the cases) of an ASA CI/CD test configuration. Relative file paths
    are relative to the configuration's folder. The query is `Script`, else `query`, else the
    one .asaql file beside the configuration or in its parent folder (an ASA project)."""
    config_path = Path(path)
    try:
        config = json.loads(config_path.read_text(encoding="utf-8-sig"))
    except OSError as error:
        raise ConfigurationError(f"cannot read test configuration {path}: {error.strerror}")
    except ValueError as error:
        raise ConfigurationError(f"test configuration {path} is not JSON: {error}")
    base = config_path.parent
    if query:
        query_file = Path(query)
    elif config.get("Script"):
        query_file = _relative(base, config["Script"])
    else:
        found = sorted(base.glob("*.asaql")) or sorted(base.parent.glob("*.asaql"))
        if len(found) != 1:
            raise ConfigurationError(f"{path} names no Script and no single .asaql file is beside "
                                     "it: give the query with --query QUERY.sql")
        query_file = found[0]
    if not query_file.is_file():
        raise ConfigurationError(f"query not found: {query_file}")
    cases = []
    for number, item in enumerate(config.get("TestCases") or [], start=1):
        name = item.get("Name") or f"Case {number}"
        inputs, topics, start = {}, {}, "earliest"
        for entry in item.get("Inputs") or []:
            alias, file = entry.get("InputAlias"), entry.get("FilePath")
            if not alias or not file:
                raise ConfigurationError(f"{path}: test case '{name}' has an input without "
                                         "InputAlias or FilePath")
            if is_kafka_location(os.path.expandvars(file)):
                if (entry.get("Type") or "").lower().startswith("reference"):
                    raise ConfigurationError(f"{path}: test case '{name}': reference data "
                                             f"'{alias}' is a file, not a topic")
                config = entry.get("KafkaConfig")
                topics[alias] = kafka_topic(os.path.expandvars(file),
                                            str(_relative(base, config)) if config else None)
                start = start_position(entry.get("Start") or start)
                continue
            inputs[alias] = (str(_relative(base, file)), entry.get("Type") or "Data Stream",
                             (entry.get("Format") or "JSON").upper())
        expected = []
        for entry in item.get("ExpectedOutputs") or []:
            alias, file = entry.get("OutputAlias"), entry.get("FilePath")
            if not alias or not file:
                raise ConfigurationError(f"{path}: test case '{name}' has an expected output "
                                         "without OutputAlias or FilePath")
            expected.append((alias, str(_relative(base, file)), entry.get("Required", True)
                             is not False))
        cases.append(AsaCase(name, inputs, expected, topics, start))
    return query_file, cases


def _relative(base: Path, file: str) -> Path:
    return Path(file) if Path(file).is_absolute() else base / file


def run_asa_cases(query_file: Path, cases: list[AsaCase], output_dir: Path, spark,
                  policy: EventOrderingPolicy, functions=None,
                  engine: str = "jvm", reports: Path | None = None) -> list[CaseResult]:
    """Each case's query run, its actual outputs written to output_dir/<case>/<alias>.jsonl
    (`engine`: as `asaql run --engine`; `reports`: where each failing case's run report
    goes)."""
    from asaql.compiler.pipeline import compile_query
    from asaql.run.runner import RunOptions, run

    text = read_query_file(query_file)
    results = []
    for case in cases:
        started = time.monotonic()
        result = CaseResult(case.name)
        watch = CaseWatch(reports, case.name, engine)
        try:
            references = {a: p for a, (p, kind, _) in case.inputs.items()
                          if kind.lower().startswith("reference")}
            compiled = compile_query(text, policy, tuple(references))
            folder = output_dir / safe_name(case.name)
            folder.mkdir(parents=True, exist_ok=True)
            outputs = {name: str(folder / f"{name}.jsonl") for name in compiled.output_names}
            with tempfile.TemporaryDirectory(prefix="asaql-test-") as tmp:
                streams = {a: _as_json_lines(p, fmt, Path(tmp) / a)
                           for a, (p, kind, fmt) in case.inputs.items() if a not in references}
                options = RunOptions(
                    inputs=_resolve(compiled.input_names, {**streams, **case.topics}, "input"),
                    outputs=outputs, errors_path=str(folder / "errors.jsonl"),
                    kafka_start=case.start,
                    references=_resolve(compiled.reference_names, references, "reference"),
                    functions=dict(functions or {}), engine=engine)
                options.listeners = watch.listeners(compiled, options.errors_path)
                run(compiled, options, spark=spark)
            result.outputs = _asa_outputs(case, outputs)
        except AsaqlError as error:
            result.error = error.render(text, str(query_file))
        except Exception as error:  # a failing case must not stop the others
            result.error = f"{type(error).__name__}: {error}"
        result.seconds = time.monotonic() - started
        result.report_path = watch.write(result)
        results.append(result)
    return results


def _resolve(names: tuple[str, ...], given: dict[str, str], what: str) -> dict[str, str]:
    from asaql.run.runner import resolve_aliases

    return resolve_aliases(names, {a: p for a, p in given.items()
                                   if a.lower() in {n.lower() for n in names}}, what)


def _as_json_lines(path: str, fmt: str, target: Path) -> str:
    """An input file as the JSON lines asaql reads: JSON lines or a JSON array as they are
    (an array is split into lines), CSV with a header row converted."""
    source = Path(path)
    if not source.exists():
        raise ConfigurationError(f"input not found: {path}")
    if fmt == "CSV":
        target.mkdir(parents=True)
        with open(source, encoding="utf-8-sig", newline="") as handle:
            rows = [_typed(row) for row in csv.DictReader(handle)]
        (target / "input.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(target)
    text = source.read_text(encoding="utf-8-sig")
    if text.lstrip().startswith("["):
        target.mkdir(parents=True)
        rows = json.loads(text)
        (target / "input.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
        return str(target)
    return str(source)


def _typed(row: dict) -> dict:
    out = {}
    for key, value in row.items():
        try:
            out[key] = int(value)
        except (TypeError, ValueError):
            try:
                out[key] = float(value)
            except (TypeError, ValueError):
                out[key] = value
    return out


def _asa_outputs(case: AsaCase, outputs: dict[str, str]) -> list[OutputResult]:
    by_key = {name.lower(): name for name in outputs}
    out, checked = [], set()
    for alias, path, required in case.expected:
        name = by_key.get(alias.lower())
        checked.add(name)
        actual_path = outputs.get(name, "") if name else ""
        actual = golden.read_rows(Path(actual_path)) if actual_path else []
        if not required:
            out.append(OutputResult(alias, UNREQUIRED, path, actual_path))
            continue
        want = read_expected(path)
        if name is None or (not actual and want):
            out.append(OutputResult(alias, MISSING, path, ""))
        elif same_rows(want, actual):
            out.append(OutputResult(alias, MATCHED, path, actual_path))
        else:
            out.append(OutputResult(alias, NOT_EQUAL, path, actual_path, diff=row_diff(
                golden.canonical(want, False), golden.canonical(actual, False), alias)))
    for name, actual_path in outputs.items():
        if name not in checked and golden.read_rows(Path(actual_path)):
            out.append(OutputResult(name, UNEXPECTED, "", actual_path))
    return out


def read_expected(path: str) -> list[dict]:
    """An expected output: JSON lines, or one JSON array."""
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except OSError as error:
        raise ConfigurationError(f"cannot read expected output {path}: {error.strerror}")
    if text.lstrip().startswith("["):
        return json.loads(text)
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def same_rows(expected: list[dict], actual: list[dict]) -> bool:
    """The same records in any order; numbers compare by value (70 = 70.0), field names
    case-insensitively (ASA's are)."""
    def normal(value):
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return value
        if isinstance(value, (int, float)):
            return float(value) if math.isfinite(float(value)) else str(value)
        if isinstance(value, dict):
            return tuple(sorted((k.lower(), repr(normal(v))) for k, v in value.items()))
        if isinstance(value, list):
            return tuple(repr(normal(v)) for v in value)
        return repr(value)

    return sorted(map(repr, map(normal, expected))) == sorted(map(repr, map(normal, actual)))
