"""How the golden harness compares a case's rows (asaql/testing/golden.py)."""

from __future__ import annotations

from asaql.testing import golden


def test_floats_are_compared_exactly_unless_the_case_gives_its_digits():
    here = [{"t": "08:00:33", "score": 0.3753040193402116, "nested": {"v": [1.0000000000000002]}}]
    there = [{"t": "08:00:33", "score": 0.3753040193402117, "nested": {"v": [1.0]}}]
    assert golden.canonical(here, True) != golden.canonical(there, True)
    assert golden.canonical(here, True, 14) == golden.canonical(there, True, 14)
    # a difference within the digits compared still shows
    off = [{"t": "08:00:33", "score": 0.37530401934, "nested": {"v": [1.0]}}]
    assert golden.canonical(here, True, 14) != golden.canonical(off, True, 14)
    # text, integers and key order are left as they are
    assert golden.canonical([{"b": 1, "a": "0.30000000000000004"}], True, 3) == \
        ['{"b":1,"a":"0.30000000000000004"}']
