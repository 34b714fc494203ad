"""`asaql check` lists the job functions a query calls (ASA's compile-query `functions`),
however their name is written; it skips the walk of the tree when the text names none."""

from __future__ import annotations

import pytest

from asaql.compiler.check import check_query


@pytest.mark.parametrize("call, listed", [
    ("UDF.score(c)", ("score",)),
    ("[udf].[score](c)", ("score",)),
    ("UdA.total(c)", ("total",)),
    ("udf . spaced(c)", ("spaced",)),
    ("LOWER(c)", ()),
    ("other.score(c)", ()),
])
def test_job_functions_are_listed_however_written(call, listed):
    report = check_query(f"SELECT {call} AS s INTO o FROM i")
    assert report.functions == listed


def test_a_query_naming_udf_only_in_a_string_lists_none():
    report = check_query("SELECT 'udf.score(c)' AS s INTO o FROM i")
    assert report.functions == () and report.errors == []
