"""Collection paused while a query is checked or compiled (asaql/compiler/gc_pause.py), and given back
as it was found: enabled or not, on success or error, nested or not."""

from __future__ import annotations

import gc

import pytest

from asaql.compiler.pipeline import compile_query
from asaql.compiler.check import check_query
from asaql.errors import AsaqlError
from asaql.compiler.gc_pause import paused_gc

QUERY = "SELECT deviceId, temperature * 2 AS t INTO alerts FROM input WHERE temperature > 25"


@pytest.fixture
def collection_enabled():
    enabled = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if enabled else gc.disable)()


def test_collection_is_off_inside_and_back_on_after(collection_enabled):
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves the outer one's pause alone
    assert gc.isenabled()


def test_collection_comes_back_after_an_error(collection_enabled):
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_caller_that_disabled_collection_keeps_it_disabled(collection_enabled):
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()


def test_check_and_compile_pause_collection_and_give_it_back(collection_enabled, monkeypatch):
    seen = []
    import asaql.analysis.analyzer as analyzer
    real_analyze = analyzer.analyze

    def spying_analyze(*args, **kwargs):
        seen.append(gc.isenabled())
        return real_analyze(*args, **kwargs)

    monkeypatch.setattr("asaql.compiler.check.analyze", spying_analyze)
    monkeypatch.setattr("asaql.compiler.pipeline.analyze", spying_analyze)
    assert check_query(QUERY).errors == []
    assert compile_query(QUERY).output_names == ("alerts",)
    with pytest.raises(AsaqlError):
        compile_query("SELECT FROM")
    assert seen == [False, False]
    assert gc.isenabled()
