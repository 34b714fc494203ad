"""What differs when asaql runs through Spark Connect: the session is a client of a server that
reads the paths, runs the Python workers (foreachBatch functions included) and knows nothing of
the client's files, modules or objects.

- paths are resolved by the server, against its own working folder: asaql sends absolute ones;
- the server's Python workers import asaql from the zip shipped as a session artifact, so the
  server needs no asaql of its own (only the packages asaql needs: pandas, pyarrow, numpy);
- a foreachBatch function is pickled and runs in a Python process of the server: it must hold
  no lock, file handle or terminal, and whatever it learns comes back through files
  (relay.py).
"""

from __future__ import annotations

import functools
import io
import os
import tempfile
import zipfile
from pathlib import Path

from asaql.errors import ConfigurationError

_SHIPPED: set[str] = set()  # the Connect sessions asaql's code was shipped to (by session id)


def is_connect(spark) -> bool:
    """Whether `spark` is a Spark Connect session (no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def connect_session(url: str):
    """A Spark Connect session to `url` (sc://HOST:PORT), with asaql's code shipped to it."""
    if not url.startswith("sc://"):
        raise ConfigurationError(f"--remote is a Spark Connect URL, sc://HOST:PORT, got '{url}'")
    from pyspark.sql import SparkSession

    os.environ.pop("MASTER", None)  # PySpark refuses a master beside a remote
    spark = SparkSession.builder.remote(url).getOrCreate()
    ship_asaql(spark)
    return spark


def ship_asaql(spark) -> None:
    """Adds this asaql's modules to a Connect session as a Python artifact (a zip the server
    puts on its UDF workers' path, before any asaql it has installed), once per session."""
    if not is_connect(spark) or spark.session_id in _SHIPPED:
        return
    archive = os.path.join(tempfile.mkdtemp(prefix="asaql-artifact-"), "asaql.zip")
    with open(archive, "wb") as handle:
        handle.write(asaql_zip())
    spark.addArtifacts(archive, pyfile=True)
    _SHIPPED.add(spark.session_id)


@functools.cache
def asaql_zip() -> bytes:
    """This asaql's modules, zipped (what the server's Python workers import)."""
    package = Path(__file__).resolve().parents[1]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(package.rglob("*.py")):
            zipped.write(path, str(path.relative_to(package.parent)))
    return buffer.getvalue()


def batch_function(spark, function):
    """The foreachBatch function to give `spark`: on Connect, `function` wrapped so that the
    server's process imports this asaql before unpickling it. Spark Connect (4.3) does not
    put a session's Python artifacts on the path of the process that runs foreachBatch
    functions (only on UDF workers'): without this, that process imports whatever asaql the
    server has installed, or fails with ModuleNotFoundError."""
    if not is_connect(spark):
        return function
    from pyspark import cloudpickle

    return _with_code(cloudpickle.dumps(function), asaql_zip())


def _with_code(pickled: bytes, code: bytes):
    # A nested function: cloudpickle sends it by value, so unpickling it imports no asaql.
    loaded: list = []

    def run(batch, batch_id):
        if not loaded:
            import os
            import pickle
            import sys
            import tempfile

            archive = os.path.join(tempfile.mkdtemp(prefix="asaql-code-"), "asaql.zip")
            with open(archive, "wb") as handle:
                handle.write(code)
            sys.path.insert(0, archive)
            loaded.append(pickle.loads(pickled))
        return loaded[0](batch, batch_id)

    return run


def server_path(path: str | None) -> str | None:
    """A path as the server must be given it: absolute (it resolves relative ones against its
    own working folder). The server must see the same files: same machine, or shared storage."""
    return None if path is None else os.path.abspath(path)
