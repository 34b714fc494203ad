"""A real Spark Connect server from the pyspark wheel, for the tests of asaql through Connect.

It listens on a free port of 127.0.0.1 with its own pid and log folder, runs in the foreground
of a process group of its own (stopped as a group: its Python workers go with it), and has no
PYTHONPATH: its workers import the asaql the client ships (asaql/spark/session/connect.py). It is
started as the README tells a user to, with asaql's JVM engine: its jar and extension.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

START_SECONDS = 180  # a loaded 2-core machine takes ~20 s


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def running_connect_server(folder: Path) -> Iterator[str]:
    """Starts the server, waits until it accepts connections; → its URL (sc://127.0.0.1:PORT)."""
    import pyspark

    from asaql.jvm.engine import EXTENSIONS, ROW_CACHE, engine_jar

    jar = engine_jar()
    assert jar.path is not None, jar.problem
    spark_home = os.path.dirname(pyspark.__file__)
    port = free_port()
    env = {**os.environ, "SPARK_HOME": spark_home, "SPARK_PID_DIR": str(folder),
           "SPARK_LOG_DIR": str(folder), "SPARK_LOCAL_IP": "127.0.0.1",
           "PYSPARK_PYTHON": sys.executable}
    for name in ("PYTHONPATH", "SPARK_REMOTE", "MASTER"):
        env.pop(name, None)
    command = [os.path.join(spark_home, "sbin", "start-connect-server.sh"), "--wait",
               "--master", "local[2]",
               "--conf", "spark.sql.shuffle.partitions=2",
               "--conf", "spark.ui.enabled=false",
               # a Python worker's handshake may take 15 s by default: short on a loaded
               # 2-core machine (its connecting back is a fixed 10 s: asaql tries again)
               "--conf", "spark.python.authenticate.socketTimeout=120s",
               "--conf", f"spark.connect.grpc.binding.port={port}",
               "--conf", "spark.connect.grpc.binding.address=127.0.0.1",
               "--jars", str(jar.path), "--conf", f"spark.sql.extensions={EXTENSIONS}",
               "--conf", f"spark.sql.cache.serializer={ROW_CACHE}"]
    log = folder / "server.log"
    with open(log, "wb") as output:
        # its working folder is not the tests': a relative path sent to it would not be found
        server = subprocess.Popen(command, env=env, cwd=folder, stdout=output,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for(port, server, log)
        yield f"sc://127.0.0.1:{port}"
    finally:
        _stop(server)


def _wait_for(port: int, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the Connect server exited ({server.returncode}):\n"
                               f"{log.read_text(errors='replace')[-3000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"the Connect server did not listen within {START_SECONDS} s:\n"
                       f"{log.read_text(errors='replace')[-3000:]}")


def _stop(server: subprocess.Popen) -> None:
    """SIGTERM to the group (the JVM shuts down), then SIGKILL to whatever of it is left."""
    _signal_group(server, signal.SIGTERM)
    try:
        server.wait(30)
    except subprocess.TimeoutExpired:
        pass
    _signal_group(server, signal.SIGKILL)
    server.wait(10)


def _signal_group(server: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(server.pid, sig)
    except ProcessLookupError:  # the group has ended
        pass
