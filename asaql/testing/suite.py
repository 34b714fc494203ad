"""`asaql test`: a user's own query tests, run on one Spark session, with a result per case.

Two layouts:
- golden case folders (asaql/testing/golden.py): query, inputs, expected outputs, case.toml;
- ASA's CI/CD test configuration (`testConfig.json`: TestCases[].Inputs[]{InputAlias, Type,
  Format, FilePath}, ExpectedOutputs[]{OutputAlias, FilePath, Required}), whose results are also
  written as ASA's `testResultSummary.json`, with its categories: matched, not equal, missing,
  unexpected, unrequired.
Results go to a JUnit XML file on request (`junit_xml`). The ASA configuration's cases are
read and run by asaql/testing/asa_cases.py.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from asaql.errors import AsaqlError
from asaql.plan.policy import EventOrderingPolicy
from asaql.syntax.query_text import read_query_file
from asaql.testing import golden
from asaql.testing.case_reports import CaseWatch

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
    report_path: Path | None = None  # its run report (`asaql test --reports`), if it failed

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


def run_golden_cases(root: Path, spark, policy: EventOrderingPolicy | None = None,
                     engine: str = "jvm", reports: Path | None = None) -> list[CaseResult]:
    """Every case folder below `root` (a folder with query.sql). `policy`: the event-ordering
    settings of cases whose case.toml does not give them (--job-config); `engine`: as
    `asaql run --engine`; `reports`: where each failing case's run report goes."""
    results = []
    for folder in golden.discover(root):
        started = time.monotonic()
        result = CaseResult(_case_name(root, folder))
        watch = CaseWatch(reports, result.name, engine)
        try:
            case = golden.load_case(folder)
            if policy is not None:
                case.options = {**_policy_options(policy), **case.options}
            if case.expected_error is not None:
                error = golden.case_error(case, spark=spark, engine=engine)
                want = case.expected_error.read_text().rstrip("\n")
                result.outputs.append(OutputResult(
                    "error", MATCHED if error == want else NOT_EQUAL,
                    str(case.expected_error), diff=row_diff([want], [str(error)], "error")))
            else:
                actual = golden.run_case(case, spark=spark, engine=engine, watch=watch)
                result.outputs = _golden_outputs(case, actual)
        except AsaqlError as error:
            result.error = error.render(_query_text(folder), str(folder / "query.sql"))
        except Exception as error:  # a failing case must not stop the others
            result.error = f"{type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
        result.seconds = time.monotonic() - started
        result.report_path = watch.write(result)
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
                                    diff=row_diff(want, got, name)))
    return out


def row_diff(want: list[str], got: list[str], name: str) -> str:
    import difflib

    return "\n".join(difflib.unified_diff(want, got, f"expected/{name}", f"actual/{name}",
                                          lineterm=""))


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
