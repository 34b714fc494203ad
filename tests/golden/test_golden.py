"""Every case under tests/golden/cases and every sample runs through a real Spark stream."""

from __future__ import annotations

from pathlib import Path

import pytest

from asaql.testing import golden

ROOT = Path(__file__).resolve().parents[2]
CASES = golden.discover(ROOT / "tests" / "golden" / "cases") + golden.discover(ROOT / "samples")


@pytest.mark.parametrize("folder", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden(folder, request):
    case = golden.load_case(folder)
    if case.expected_error is not None:
        error = golden.case_error(case, spark=request.getfixturevalue("spark"))
        assert error == case.expected_error.read_text().rstrip("\n")
        return
    actual = golden.run_case(case, spark=request.getfixturevalue("spark"))
    if request.config.getoption("--update"):
        golden.write_expected(case, actual)
        return
    problems = golden.differences(case, actual)
    assert not problems, "\n\n".join(problems)
