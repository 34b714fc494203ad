"""`asaql check` reads a sample by the rules the Spark reader applies (asaql/spark/sources/records.py)."""

import pytest

from asaql.inputs.records import MAX_DEPTH, parse_record


@pytest.mark.parametrize("line, kept", [
    ('{"a": 1}', True),
    ('\ufeff{"a": 1}\r\n', True),  # a byte-order mark before the first record
    ('{"a": {"x": 1, "x": 2}}', True),  # nested duplicate: the last value wins
    ('{"k": 1, "k": 2}', False),
    ('{"k": 1, "K": 2}', False),  # column names are case-insensitive
    ('{"d": ' * MAX_DEPTH + "1" + "}" * MAX_DEPTH, True),  # 64 levels
    ('{"d": ' * (MAX_DEPTH + 1) + "1" + "}" * (MAX_DEPTH + 1), False),
    ("[" * 100_000, False),  # beyond Python's own recursion limit: no RecursionError
    ('{"a": 1} more', False),
    ('{"a": \ufffd 1}', False),
    ("[1, 2]", False),
    ("null", False),
    ('{"a": ', False),
    ("", False),
])
def test_a_sample_line_is_kept_exactly_when_run_would_accept_it(line, kept):
    assert (parse_record(line) is not None) == kept
