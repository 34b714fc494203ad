"""Issue 16's figures on 350 real ASA queries (../shared/asa-corpus/, read where it is): every
valid query is accepted by `asaql check` and builds its Spark plan, except the ones listed
below with the reason; every invalid one is rejected with an error at a line and column.

The lists are the progress record: a query that starts to work must leave its list (the test
says so), and the figure of accepted-and-planned queries may only go up."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from asa_corpus import CORPUS, check_errors, corpus_queries, plan_problem

pytestmark = pytest.mark.skipif(not (CORPUS / "index.json").is_file(),
                                reason=f"the ASA query corpus is not at {CORPUS}")

# file → why `asaql check` still rejects it (the first error's cause)
STILL_REJECTED: dict[str, str] = {}

# file → why the accepted query does not build its Spark plan yet
STILL_UNPLANNED: dict[str, str] = {}

PLANNERS = 2  # queries lowered at once

# accepted and planned, of the valid queries; the aim is 95 %
FLOOR = 1.0  # 324 of 324 when this list was last updated


@pytest.fixture(scope="module")
def queries():
    return corpus_queries()


@pytest.fixture(scope="module")
def rejected(queries):
    """Valid file → its errors (only the queries check rejects)."""
    out = {}
    for query in queries:
        if query.valid:
            errors = check_errors(query)
            if errors:
                out[query.file] = errors
    return out


def test_invalid_queries_are_rejected_at_a_line_and_column(queries):
    for query in queries:
        if not query.valid:
            errors = check_errors(query)
            assert errors, f"{query.file} is not ASA but is accepted"
            assert all(e.span is not None and e.span.line >= 1 and e.span.column >= 1
                       for e in errors), f"{query.file}: an error without a position"


def test_valid_queries_are_accepted_except_the_listed_ones(rejected):
    # `check` reports every independent error of a statement: the count per rejected query
    print("\nrejected: " + ", ".join(f"{f} ({len(e)} error{'s' * (len(e) > 1)})"
                                     for f, e in sorted(rejected.items())))
    unexpected = {f: f"{e[0].span.line}:{e[0].span.column} {e[0].message}"
                  for f, e in rejected.items() if f not in STILL_REJECTED}
    assert not unexpected, f"newly rejected: {unexpected}"
    fixed = sorted(set(STILL_REJECTED) - set(rejected))
    assert not fixed, f"accepted now, take them off STILL_REJECTED: {fixed}"


@pytest.mark.slow
def test_accepted_queries_build_their_spark_plan(spark, queries, rejected, tmp_path):
    accepted = [q for q in queries if q.valid and q.file not in rejected]
    # Lowering a query is about half Python (building Columns) and half the JVM analysing
    # them: two threads overlap the halves. A run's settings travel with its plan, so two
    # lowerings at once share nothing (tests/cli/test_side_by_side_runs.py).
    with ThreadPoolExecutor(PLANNERS) as pool:
        outcomes = list(pool.map(lambda q: (q.file, plan_problem(spark, q, tmp_path)), accepted))
    problems = {file: problem for file, problem in outcomes if problem is not None}
    unexpected = {f: p for f, p in problems.items() if f not in STILL_UNPLANNED}
    assert not unexpected, f"accepted but not planned: {unexpected}"
    fixed = sorted(set(STILL_UNPLANNED) - set(problems))
    assert not fixed, f"planned now, take them off STILL_UNPLANNED: {fixed}"
    valid = sum(q.valid for q in queries)
    working = valid - len(rejected) - len(problems)
    print(f"\nASA corpus: {working} of {valid} valid queries accepted and planned "
          f"({working / valid:.1%}); {len(rejected)} rejected, {len(problems)} not planned")
    assert working / valid >= FLOOR
