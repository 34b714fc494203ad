"""One local SparkSession for the whole test run; `--update` rewrites golden expectations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/reference_policy.py


def pytest_addoption(parser):
    parser.addoption("--update", action="store_true",
                     help="rewrite golden expected files from actual output (refused under CI)")


@pytest.fixture(scope="session")
def spark():
    from asaql.spark.session import build_session

    session = build_session("local[2]")
    yield session
    session.stop()
