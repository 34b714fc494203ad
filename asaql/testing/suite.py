"""`asaql test`: a user's own query tests, run on one Spark session, with a result per case.

Two layouts:
- golden case folders (asaql/testing/golden.py): query, inputs, expected outputs, case.toml;
- ASA's CI/CD test configuration (`testConfig.json`: TestCases[].Inputs[]{InputAlias, Type,
  Format, FilePath}, ExpectedOutputs[]{OutputAlias, FilePath, Required}), whose results are also
  written as ASA's `testResultSummary.json`, with its categories: matched, not equal, missing,
  unexpected, unrequired.
Results go to a JUnit XML file on request (`junit_xml`).
"""

from __future__ import annotations

import csv
import json
import math
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from asaql.errors import AsaqlError, ConfigurationError
from asaql.plan.policy import EventOrderingPolicy
from asaql.query_text import read_query_file
from asaql.testing import golden

MATCHED, NOT_EQUAL, MISSING, UNEXPECTED, UNREQUIRED = (
    "OutputMatched", "OutputNotEqual", "OutputMissing", "OutputUnexpected", "OutputUnrequired")
CATEGORIES = (MATCHED, NOT_EQUAL, MISSING, UNEXPECTED, UNREQUIRED)


@dataclass
class OutputResult:
    alias: str
    category: str
    expected: str = ""  # the expected file
    actual: str = ""  # the file the actual rows were written to
    diff: str = ""


@dataclass
class CaseResult:
    name: str
    seconds: float = 0.0
    outputs: list[OutputResult] = field(default_factory=list)
    error: str | None = None  # the case could not run: why

    @property
    def passed(self) -> bool:
        return self.error is None and not any(o.category in (NOT_EQUAL, MISSING)
                                              for o in self.outputs)

    def report(self) -> str:
        """What went wrong, for a person: the error, or a diff of rows per output."""
        if self.error is not None:
            return self.error
        parts = []
        for o in self.outputs:
            if o.category == NOT_EQUAL:
                parts.append(o.diff)
            elif o.category == MISSING:
                parts.append(f"output '{o.alias}': expected rows ({o.expected}), none written")
        return "\n".join(parts)


# ----------------------------------------------------------------- golden case folders


def run_golden_cases(root: Path, spark, policy: EventOrderingPolicy | None = None
                     ) -> list[CaseResult]:
    """Every case folder below `root` (a folder with query.sql). `policy`: the event-ordering
    settings of cases whose case.toml does not give them (--job-config)."""
    results = []
    for folder in golden.discover(root):
        started = time.monotonic()
        result = CaseResult(_case_name(root, folder))
        try:
            case = golden.load_case(folder)
            if policy is not None:
                case.options = {**_policy_options(policy), **case.options}
            if case.expected_error is not None:
                error = golden.compile_error(case)
                want = case.expected_error.read_text().rstrip("\n")
                result.outputs.append(OutputResult(
                    "error", MATCHED if error == want else NOT_EQUAL,
                    str(case.expected_error), diff=_diff([want], [str(error)], "error")))
            else:
                actual = golden.run_case(case, spark=spark)
                result.outputs = _golden_outputs(case, actual)
        except AsaqlError as error:
            result.error = error.render(_query_text(folder), str(folder / "query.sql"))
        except Exception as error:  # a failing case must not stop the others
            result.error = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        result.seconds = time.monotonic() - started
        results.append(result)
    return results


def _case_name(root: Path, folder: Path) -> str:
    try:
        relative = folder.resolve().relative_to(Path(root).resolve())
        return str(relative) if str(relative) != "." else folder.name
    except ValueError:
        return folder.name


def _query_text(folder: Path) -> str | None:
    try:
        return read_query_file(folder / "query.sql")
    except AsaqlError:
        return None


def _policy_options(policy: EventOrderingPolicy) -> dict:
    from asaql.plan.policy import format_duration

    return {"late": format_duration(policy.late_us), "ooo": format_duration(policy.ooo_us),
            "early": "none" if policy.early_us is None else format_duration(policy.early_us),
            "action": policy.action}


def _golden_outputs(case: golden.Case, actual: dict[str, list[dict]]) -> list[OutputResult]:
    expected = golden._bind(tuple(actual), case.expected, "output") if case.expected else {}
    out = []
    for name in sorted(set(actual) | set(expected)):
        if name not in expected:
            out.append(OutputResult(name, UNEXPECTED if actual.get(name) else MATCHED))
            continue
        want = golden.canonical(golden.read_rows(expected[name]), case.ordered)
        got = golden.canonical(actual.get(name, []), case.ordered)
        if name not in actual:
            out.append(OutputResult(name, MISSING, str(expected[name])))
        elif want == got:
            out.append(OutputResult(name, MATCHED, str(expected[name])))
        else:
            out.append(OutputResult(name, NOT_EQUAL, str(expected[name]),
                                    diff=_diff(want, got, name)))
    return out


def _diff(want: list[str], got: list[str], name: str) -> str:
    import difflib

    return "\n".join(difflib.unified_diff(want, got, f"expected/{name}", f"actual/{name}",
                                          lineterm=""))


# ----------------------------------------------------------------- ASA's testConfig.json


@dataclass
class AsaCase:
    name: str
    inputs: dict[str, tuple[str, str, str]]  # alias → (path, type, format)
    expected: list[tuple[str, str, bool]]  # (alias, path, required)


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
        inputs = {}
        for entry in item.get("Inputs") or []:
            alias, file = entry.get("InputAlias"), entry.get("FilePath")
            if not alias or not file:
                raise ConfigurationError(f"{path}: test case '{name}' has an input without "
                                         "InputAlias or FilePath")
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
        cases.append(AsaCase(name, inputs, expected))
    return query_file, cases


def _relative(base: Path, file: str) -> Path:
    return Path(file) if Path(file).is_absolute() else base / file


def run_asa_cases(query_file: Path, cases: list[AsaCase], output_dir: Path, spark,
                  policy: EventOrderingPolicy) -> list[CaseResult]:
    """Each case's query run, its actual outputs written to output_dir/<case>/<alias>.jsonl."""
    from asaql.compiler import compile_query
    from asaql.runner import RunOptions, run

    text = read_query_file(query_file)
    results = []
    for case in cases:
        started = time.monotonic()
        result = CaseResult(case.name)
        try:
            references = {a: p for a, (p, kind, _) in case.inputs.items()
                          if kind.lower().startswith("reference")}
            compiled = compile_query(text, policy, tuple(references))
            folder = output_dir / _safe(case.name)
            folder.mkdir(parents=True, exist_ok=True)
            outputs = {name: str(folder / f"{name}.jsonl") for name in compiled.output_names}
            with tempfile.TemporaryDirectory(prefix="asaql-test-") as tmp:
                streams = {a: _as_json_lines(p, fmt, Path(tmp) / a)
                           for a, (p, kind, fmt) in case.inputs.items() if a not in references}
                options = RunOptions(
                    inputs=_resolve(compiled.input_names, streams, "input"),
                    outputs=outputs, errors_path=str(folder / "errors.jsonl"),
                    references=_resolve(compiled.reference_names, references, "reference"))
                run(compiled, options, spark=spark)
            result.outputs = _asa_outputs(case, outputs)
        except AsaqlError as error:
            result.error = error.render(text, str(query_file))
        except Exception as error:  # a failing case must not stop the others
            result.error = f"{type(error).__name__}: {error}"
        result.seconds = time.monotonic() - started
        results.append(result)
    return results


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "case"


def _resolve(names: tuple[str, ...], given: dict[str, str], what: str) -> dict[str, str]:
    from asaql.runner import resolve_aliases

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
            out.append(OutputResult(alias, NOT_EQUAL, path, actual_path, diff=_diff(
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


def summary_json(results: list[CaseResult], query_file: Path, seconds: float) -> dict:
    """ASA's testResultSummary.json."""
    return {
        "Total": len(results),
        "Passed": sum(r.passed for r in results),
        "Failed": sum(not r.passed for r in results),
        "Script": str(query_file.resolve()),
        "Results": [{
            "Name": r.name, "Status": 0 if r.passed else 1, "Time": time_span(r.seconds),
            **{category: [{"OutputAlias": o.alias, "ExpectedOutput": o.expected,
                           "Output": o.actual} for o in r.outputs if o.category == category]
               for category in CATEGORIES},
            **({"Error": r.error} if r.error else {}),
        } for r in results],
        "Time": time_span(seconds),
    }


def time_span(seconds: float) -> str:
    """.NET's TimeSpan text, as ASA writes it: hh:mm:ss.fffffff."""
    ticks = round(seconds * 10_000_000)
    whole, fraction = divmod(ticks, 10_000_000)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours:02d}:{minutes:02d}:{secs:02d}.{fraction:07d}"


# ----------------------------------------------------------------- JUnit


def junit_xml(results: list[CaseResult], suite: str = "asaql") -> str:
    failures = sum(1 for r in results if r.error is None and not r.passed)
    errors = sum(1 for r in results if r.error is not None)
    total = sum(r.seconds for r in results)
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             f'<testsuites tests="{len(results)}" failures="{failures}" errors="{errors}" '
             f'time="{total:.3f}">',
             f'  <testsuite name={quoteattr(suite)} tests="{len(results)}" '
             f'failures="{failures}" errors="{errors}" time="{total:.3f}">']
    for r in results:
        lines.append(f'    <testcase classname={quoteattr(suite)} name={quoteattr(r.name)} '
                     f'time="{r.seconds:.3f}">')
        if r.error is not None:
            first = r.error.splitlines()[0] if r.error else "error"
            lines.append(f'      <error message={quoteattr(first)}>{escape(r.error)}</error>')
        elif not r.passed:
            failed = [o.alias for o in r.outputs if o.category in (NOT_EQUAL, MISSING)]
            lines.append(f'      <failure message={quoteattr("outputs differ: " + ", ".join(failed))}>'
                         f'{escape(r.report())}</failure>')
        lines.append("    </testcase>")
    lines += ["  </testsuite>", "</testsuites>", ""]
    return "\n".join(lines)


def write_text(path: str, text: str) -> None:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
