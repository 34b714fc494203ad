"""asaql's own code shipped to a cluster's executors, which may not have it installed.

The stateful steps and pandas functions are pickled by module reference (cloudpickle), so an
executor's Python must import `asaql.runtime…`. On a local master the workers are the driver's
own Python; on any other master the package is zipped and added with `addPyFile`, which puts it
first on the workers' path: they run the driver's exact code, not an older copy installed there.
The grammar stays behind (only `check`, `explain` and the compiler parse, on the driver). What
the zip does not carry, executors must have: pandas, pyarrow, numpy and lark (imported by
`asaql/__init__.py`).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from pyspark.sql import SparkSession

from asaql.spark.session.connect import is_connect

PACKAGE = Path(__file__).resolve().parents[2]  # the `asaql` folder (or its place in a zip)
ZIP_NAME = "asaql.zip"
_shipped: set[str] = set()  # the applications (SparkContext ids) that have the zip


def is_local_master(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-")


def ship_to_executors(spark: SparkSession) -> str | None:
    """Adds asaql to the session's executors once, unless the master is local; returns the
    file shipped (None: nothing to ship). A Connect session gets asaql as an artifact instead
    (connect.py)."""
    if is_connect(spark):
        return None
    context = spark.sparkContext
    if is_local_master(context.master) or context.applicationId in _shipped:
        return None
    archive = _package_archive()
    context.addPyFile(archive)
    _shipped.add(context.applicationId)
    return archive


def _package_archive() -> str:
    """A zip of the package's Python files; when asaql itself is imported from a zip (as on
    an executor, or from a `--py-files` archive), that zip."""
    loader_archive = getattr(__loader__, "archive", None)  # zipimport's loader has .archive
    if loader_archive:
        return loader_archive
    folder = tempfile.mkdtemp(prefix="asaql-pyfiles-")
    # The driver's file server serves it from here until the process ends.
    atexit.register(shutil.rmtree, folder, True)
    archive = os.path.join(folder, ZIP_NAME)
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for path in sorted(PACKAGE.rglob("*.py")):
            if "__pycache__" not in path.parts:
                out.write(path, path.relative_to(PACKAGE.parent).as_posix())
    return archive
