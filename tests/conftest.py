"""One local SparkSession for the whole test run; `--update` rewrites golden expectations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/reference_policy.py, spark_harness.py


def pytest_addoption(parser):
    parser.addoption("--update", action="store_true",
                     help="rewrite golden expected files from actual output (refused under CI)")


@pytest.fixture(scope="session")
def spark():
    from spark_harness import spark_session  # tests/spark_harness.py: the one Spark harness

    session = spark_session()
    yield session
    session.stop()


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory):
    """A real Kafka-protocol broker on loopback for the session (tests/kafka_broker.py)."""
    from kafka_broker import running_broker

    with running_broker(tmp_path_factory.mktemp("broker") / "broker.log") as broker:
        yield broker


@pytest.fixture(scope="session")
def postgres_server():
    """A real PostgreSQL server on loopback for the session (tests/postgres_server.py)."""
    from postgres_server import start_postgres

    server = start_postgres()
    yield server
    server.stop()
