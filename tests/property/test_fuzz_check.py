"""`asaql check` is total: on any query text it ends with success or located errors, never an
internal error or a hang (no Spark). Queries come from tests/fuzz_queries.py, which
benchmarks/fuzz_check.py also runs 100,000 of; here a few hundred keep CI to seconds."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import fuzz_queries

# CI runs the same examples every time (a red CI names a real, repeatable defect); a local run
# draws new ones, so running the suite keeps searching.
FAST = settings(max_examples=100, deadline=None, derandomize=bool(os.environ.get("CI")),
                suppress_health_check=[HealthCheck.too_slow])


def _assert_total(data: bytes) -> None:
    note(repr(data[:500]))
    failure = fuzz_queries.outcome(data)
    assert failure is None, f"{failure.kind}: {failure.signature}\n{failure.detail}"


@FAST
@given(st.randoms(use_true_random=False), st.sampled_from([3, 6, 10, 16]))
def test_grammar_productions_check_to_success_or_located_errors(rng, budget):
    _assert_total(fuzz_queries.grammar_query(rng, budget).encode("utf-8"))


@FAST
@given(st.randoms(use_true_random=False), st.integers(0, 10_000))
def test_mutated_goldens_and_samples_check_to_success_or_located_errors(rng, pick):
    seeds = fuzz_queries.seed_queries()
    _assert_total(fuzz_queries.mutate(rng, seeds[pick % len(seeds)]))


def test_every_seed_query_checks_clean():
    """The mutations start from queries that are right: a mutant's error is the mutation's."""
    for text in fuzz_queries.seed_queries():
        assert fuzz_queries.outcome(text.encode("utf-8")) is None
