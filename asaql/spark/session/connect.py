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
import hashlib
import io
import os
import socket
import tempfile
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

from asaql.errors import ConfigurationError

_SHIPPED: set[str] = set()  # the Connect sessions asaql's code was shipped to (by session id)


def is_connect(spark) -> bool:
    """Whether `spark` is a Spark Connect session (no JVM in this process)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def connect_session(url: str):
    """A Spark Connect session to `url` (sc://HOST:PORT), with asaql's code shipped to it."""
    if not url.startswith("sc://"):
        raise ConfigurationError(f"--remote is a Spark Connect URL, sc://HOST:PORT, got '{url}'")
    _check_reachable(url)
    from pyspark.sql import SparkSession

    os.environ.pop("MASTER", None)  # PySpark refuses a master beside a remote
    spark = SparkSession.builder.remote(url).getOrCreate()
    ship_asaql(spark)
    return spark


def _check_reachable(url: str) -> None:
    """Fail at once when nothing listens at the URL: the Connect client retries for minutes."""
    parsed = urlsplit("http://" + url[len("sc://"):].split(";")[0])
    try:
        host, port = parsed.hostname or "localhost", parsed.port or DEFAULT_PORT
    except ValueError:
        raise ConfigurationError(f"--remote: bad port in '{url}'") from None
    try:
        socket.create_connection((host, port), timeout=10).close()
    except OSError as error:
        raise ConfigurationError(f"cannot reach the Spark Connect server at {url}: "
                                 f"{error.strerror or error} (is it started? "
                                 "$SPARK_HOME/sbin/start-connect-server.sh)") from None


DEFAULT_PORT = 15002  # Spark Connect's


def ship_asaql(spark) -> None:
    """Adds this asaql's modules to a Connect session as a Python artifact (a zip the server
    puts on its UDF workers' path, before any asaql it has installed), once per session."""
    if not is_connect(spark) or spark.session_id in _SHIPPED:
        return
    with tempfile.TemporaryDirectory(prefix="asaql-artifact-") as folder:  # sent, then gone
        archive = os.path.join(folder, "asaql.zip")
        with open(archive, "wb") as handle:
            handle.write(asaql_zip())
        spark.addArtifacts(archive, pyfile=True)
    _SHIPPED.add(spark.session_id)


@functools.cache
def asaql_zip() -> bytes:
    """This asaql's modules, zipped (what the server's Python workers import)."""
    package = Path(__file__).resolve().parents[2]  # the `asaql` folder
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(package.rglob("*.py")):
            zipped.write(path, str(path.relative_to(package.parent)))
    return buffer.getvalue()


def batch_function(spark, function):
    """The foreachBatch function to give `spark`: on Connect, `function` with this asaql's code
    attached. Spark Connect (4.3) does not put a session's Python artifacts on the path of
    the process that runs foreachBatch functions (only on UDF workers'): without the code,
    that process imports whatever asaql the server has installed, or fails."""
    if not is_connect(spark):
        return function
    return _WithCode(function, asaql_zip())


class _WithCode:
    """Pickles as a call that puts the code on the path, then unpickles the function: the
    server's process gets the function itself, unpickled when it starts (a function that
    holds a DataFrame must be unpickled while the server's root session is the active one)."""

    def __init__(self, function, code: bytes):
        self.function, self.code = function, code

    def __call__(self, batch, batch_id):
        return self.function(batch, batch_id)

    def __reduce__(self):
        from pyspark import cloudpickle

        digest = hashlib.sha256(self.code).hexdigest()[:16]
        return _loader(), (cloudpickle.dumps(self.function), self.code, digest)


def _loader():
    # A nested function: cloudpickle sends it by value, so unpickling it imports no asaql.
    def load(pickled: bytes, code: bytes, digest: str):
        import os
        import pickle
        import sys
        import tempfile

        archive = os.path.join(tempfile.gettempdir(), f"asaql-code-{digest}.zip")
        if not os.path.exists(archive):  # one file per version of the code, written whole
            partial = f"{archive}.{os.getpid()}"
            with open(partial, "wb") as handle:
                handle.write(code)
            os.replace(partial, archive)
        if archive not in sys.path:
            sys.path.insert(0, archive)
        return pickle.loads(pickled)

    return load


def start_stream(writer, attempts: int = 3):
    """`writer.start()`, tried again when the server's foreachBatch process did not connect
    back in time: Spark waits a fixed 10 s for it, which a loaded server can miss (the query
    has not started then, so starting it again is safe)."""
    for attempt in range(attempts):
        try:
            return writer.start()
        except Exception as error:  # noqa: BLE001 (Spark's own error classes, then re-raised)
            if "failed to connect back" not in str(error) or attempt == attempts - 1:
                raise


def server_path(path: str | None) -> str | None:
    """A path as the server must be given it: absolute (it resolves relative ones against its
    own working folder). The server must see the same files: same machine, or shared storage."""
    return None if path is None else os.path.abspath(path)
