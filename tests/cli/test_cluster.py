"""`asaql run --master spark://…` on a real standalone cluster (a master and two 1-core workers
on loopback, tests/spark_cluster.py) gives exactly the rows the same command gives on local[2].

The executors cannot import asaql on their own (their Python skips the `.pth` file of the
editable install and has no PYTHONPATH; checked below): the run succeeds only because the driver
ships asaql as a zip (asaql/spark/session/shipping.py). Without the zip the same run fails with
`ModuleNotFoundError: No module named 'asaql.runtime'` (tried by hand when this was written).

Every `asaql` on the cluster is its own process (a second SparkContext in the test process
would clash with the session fixture); the local runs they are compared with go through the same
CLI on that session (local[2], as `asaql run` without --master), which saves a JVM start each.
The samples' commands are those of the README.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli
from spark_cluster import SPARK_HOME, standalone_cluster

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "samples"
TOLL_OUTPUTS = ("trips", "perBooth", "expired", "missing")

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with standalone_cluster(tmp_path_factory.mktemp("cluster")) as running:
        yield running


def asaql_run(cwd: Path, *args: str, python: str | None = None) -> subprocess.CompletedProcess:
    """`python -m asaql.cli run …` with this checkout's asaql on the driver."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1",
           "TMPDIR": str(cwd)}
    if python is not None:
        env["PYSPARK_PYTHON"] = python
    cwd.mkdir(parents=True, exist_ok=True)
    result = subprocess.run([sys.executable, "-m", "asaql.cli", "run", *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    return result


def local_run(cwd: Path, *args: str):
    """`asaql run …` in this process, on the session-wide local[2] session (the caller asks for
    the `spark` fixture); its errors file in `cwd`."""
    cwd.mkdir(parents=True, exist_ok=True)
    result = CliRunner().invoke(cli, ["run", *args, "--errors", str(cwd / "errors.jsonl")])
    assert result.exit_code == 0, result.output
    return result


def rows(text: str) -> Counter:
    """JSON lines as a multiset of rows (order is not part of the result)."""
    return Counter(json.dumps(json.loads(line), sort_keys=True)
                   for line in text.splitlines() if line.strip())


def ran_on(cluster, before: int) -> bool:
    """The master counts one more finished application (it notices the driver's end within
    seconds)."""
    deadline = time.monotonic() + 30
    while cluster.finished_applications() == before and time.monotonic() < deadline:
        time.sleep(0.5)
    return cluster.finished_applications() == before + 1


def test_executors_cannot_import_asaql_on_their_own(cluster):
    probe = [cluster.executor_python, "-c", "import pandas, pyarrow; import asaql.runtime"]
    result = subprocess.run(probe, env=cluster.worker_env, cwd=cluster.log_folder,
                            capture_output=True, text=True)
    assert result.returncode == 1
    assert "No module named 'asaql.runtime'" in result.stderr  # pandas and pyarrow imported


IOT_COMMAND = (str(SAMPLES / "iot_devices" / "query.sql"), "--input",
               str(SAMPLES / "iot_devices" / "input.jsonl"), "--late", "5s", "--ooo", "2s")


@pytest.fixture(scope="module")
def iot_local(spark, tmp_path_factory):
    return local_run(tmp_path_factory.mktemp("iot-local"), *IOT_COMMAND)


def test_iot_sample_on_the_cluster_gives_the_local_rows(cluster, iot_local, tmp_path):
    before = cluster.finished_applications()
    remote = asaql_run(tmp_path, *IOT_COMMAND, "--master", cluster.master,
                       python=cluster.executor_python)
    assert rows(iot_local.stdout)  # the sample writes rows: an empty equality proves nothing
    assert rows(remote.stdout) == rows(iot_local.stdout)
    assert ran_on(cluster, before)
    counts = [result.stderr.splitlines()[-1].split(";")[0] for result in (iot_local, remote)]
    assert counts[0] == counts[1]


def test_spark_submit_of_the_cli_on_the_cluster_gives_the_local_rows(cluster, iot_local,
                                                                    tmp_path):
    """spark-submit's --master applies (asaql does not replace it with local[2]); the driver
    runs this interpreter, the executors the one without asaql."""
    # A driver script of its own: asaql/cli/__main__.py run as a script would put asaql/cli/
    # first on sys.path, where its inspect.py shadows the standard library's.
    driver = tmp_path / "asaql_driver.py"
    driver.write_text("from asaql.cli import main\n\nmain()\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SPARK_LOCAL_IP": "127.0.0.1",
           "TMPDIR": str(tmp_path), "PYSPARK_DRIVER_PYTHON": sys.executable,
           "PYSPARK_PYTHON": cluster.executor_python}
    submit = os.path.join(SPARK_HOME, "bin", "spark-submit")
    before = cluster.finished_applications()
    from asaql.jvm.engine import EXTENSIONS, ROW_CACHE, engine_jar

    engine = ["--jars", str(engine_jar().path), "--conf", f"spark.sql.extensions={EXTENSIONS}",
              "--conf", f"spark.sql.cache.serializer={ROW_CACHE}"]
    result = subprocess.run([submit, "--master", cluster.master, *engine, str(driver), "run",
                             *IOT_COMMAND, "--output", "alerts=alerts.jsonl"],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert rows((tmp_path / "alerts.jsonl").read_text()) == rows(iot_local.stdout)
    # spark-submit merges the Python driver's stderr into its stdout, where the summary goes
    assert "asaql: 304 input events" in result.stdout
    assert "JVM engine is not loaded" not in result.stdout  # `asaql jar --conf`'s options
    assert ran_on(cluster, before)  # it ran there, not on local[2]


def test_toll_sample_on_the_cluster_gives_the_local_rows(spark, cluster, tmp_path):
    toll = SAMPLES / "toll_app"

    def command(outputs: str) -> tuple[str, ...]:  # outputs: a folder for them, or "" (cwd)
        return (str(toll / "query.sql"),
                "--input", f"EntryStream={toll / 'inputs' / 'EntryStream.jsonl'}",
                "--input", f"ExitStream={toll / 'inputs' / 'ExitStream.jsonl'}",
                "--reference", f"Registration={toll / 'reference' / 'Registration.csv'}",
                *(f"--output={name}={os.path.join(outputs, name + '.jsonl')}"
                  for name in TOLL_OUTPUTS))

    local_run(tmp_path / "local", *command(str(tmp_path / "local")))
    asaql_run(tmp_path / "cluster", *command(""), "--master", cluster.master,
              python=cluster.executor_python)
    for name in TOLL_OUTPUTS:
        local = rows((tmp_path / "local" / f"{name}.jsonl").read_text())
        assert local, name
        assert rows((tmp_path / "cluster" / f"{name}.jsonl").read_text()) == local, name
