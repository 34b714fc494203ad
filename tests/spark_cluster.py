"""A real Spark standalone cluster on loopback from the pyspark wheel: one master and N workers,
each its own process group, torn down whatever happens (tests/cli/test_cluster.py,
benchmarks/cluster_scaling.py).

The workers run Python through `executor_python`: the same interpreter with its site-packages
(pandas, pyarrow, numpy, lark) but without `.pth` files and without PYTHONPATH, so asaql, which
is installed in editable mode through a `.pth` file, cannot be imported there. An executor then
gets asaql only from the zip the driver ships (asaql/spark/session/shipping.py), as on a cluster whose
hosts do not have asaql installed.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import site
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pyspark

SPARK_HOME = os.path.dirname(pyspark.__file__)


@dataclass
class Cluster:
    master: str  # spark://127.0.0.1:PORT
    executor_python: str  # PYSPARK_PYTHON for a driver using this cluster
    worker_env: dict  # the environment the workers (hence executors) run in
    log_folder: Path
    ui_port: int  # the master's status page

    def finished_applications(self) -> int:
        """How many applications ran to their end on the cluster."""
        return len(_status(self.ui_port).get("completedapps", []))


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(count: int) -> list[int]:
    """`count` distinct free ports: the probes stay bound until all are chosen, or the kernel may
    hand the same port out twice (the master's page and a worker's would then race for it)."""
    with contextlib.ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [probe.getsockname()[1] for probe in probes]


def write_executor_python(folder: Path) -> Path:
    """`python -S` with site-packages on PYTHONPATH: the packages, but no `.pth` file runs (the
    editable install of asaql is one), so `import asaql.runtime` fails."""
    packages = ":".join(site.getsitepackages())
    wrapper = folder / "executor-python"
    wrapper.write_text("#!/bin/sh\n"
                       f'PYTHONPATH="{packages}${{PYTHONPATH:+:$PYTHONPATH}}" '
                       f'exec "{sys.executable}" -S "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def cluster_env(folder: Path) -> dict:
    """The workers' environment: loopback, no PYTHONPATH (asaql's checkouts stay out), their own
    scratch folders."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "PYSPARK_PYTHON", "SPARK_HOME")}
    env.update(SPARK_LOCAL_IP="127.0.0.1", SPARK_HOME=SPARK_HOME,
               SPARK_LOCAL_DIRS=str(folder / "local"), SPARK_LOG_DIR=str(folder / "logs"),
               PYTHONNOUSERSITE="1")
    return env


@contextlib.contextmanager
def standalone_cluster(folder: Path, workers: int = 2, cores: int = 1, memory: str = "1g",
                       timeout: float = 90.0):
    """Starts the master and `workers` workers, waits until all are registered and alive,
    yields a Cluster, then kills every process group it started."""
    folder.mkdir(parents=True, exist_ok=True)
    env = cluster_env(folder)
    executor_python = write_executor_python(folder)
    port, ui_port, *worker_ui_ports = free_ports(2 + workers)
    spark_class = os.path.join(SPARK_HOME, "bin", "spark-class")
    processes: list[subprocess.Popen] = []

    def start(name: str, *argv: str) -> None:
        log = open(folder / f"{name}.log", "wb")
        processes.append(subprocess.Popen([spark_class, *argv], env=env, cwd=folder,
                                          stdout=log, stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, start_new_session=True))
        log.close()

    try:
        start("master", "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
              "--port", str(port), "--webui-port", str(ui_port))
        master = f"spark://127.0.0.1:{port}"
        for index in range(workers):
            work = folder / f"worker-{index}"
            work.mkdir(exist_ok=True)
            start(f"worker-{index}", "org.apache.spark.deploy.worker.Worker", "--host",
                  "127.0.0.1", "--webui-port", str(worker_ui_ports[index]), "--cores", str(cores),
                  "--memory", memory, "--work-dir", str(work), master)
        _wait_for_workers(ui_port, workers, processes, folder, timeout)
        yield Cluster(master, str(executor_python), env, folder, ui_port)
    finally:
        for process in processes:
            _kill_group(process)


def _wait_for_workers(ui_port: int, count: int, processes, folder: Path, timeout: float):
    """The master's JSON status page lists the workers that registered and are alive."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        dead = [p for p in processes if p.poll() is not None]
        if dead:
            raise RuntimeError(f"a Spark daemon exited ({dead[0].args[1]}); logs in {folder}")
        try:
            if _status(ui_port).get("aliveworkers", 0) >= count:
                return
        except (OSError, ValueError):
            # Not up yet; or up with its HTML page attached but not yet its JSON one (Spark
            # attaches a started UI's handlers one by one, and "/" then answers "/json/").
            pass
        time.sleep(0.5)
    raise RuntimeError(f"{count} workers did not register within {timeout:.0f} s; logs in "
                       f"{folder}")


def _status(ui_port: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=5) as page:
        return json.load(page)


def _kill_group(process: subprocess.Popen) -> None:
    """The daemon and what it started (executors, their Python workers) share its process
    group: TERM it, then KILL whatever is left of the group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=15)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
