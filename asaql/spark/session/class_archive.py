"""A class archive for the driver's JVM (Java's class data sharing, AppCDS): Spark's classes as
the JVM has already loaded and verified them, mapped from one file at start. A PySpark session
and its first query took 6.0–6.2 s on this kind of machine, 3.3–3.5 s with the archive: most
of a run's start is the JVM loading Spark's classes one by one from their jars.

The archive depends on this machine's Java and pyspark's jars (the JVM checks both, and
ignores an archive that does not match them), so it is made here, once per combination,
into asaql's cache: after the first run whose session asaql starts, a detached process at
low priority runs two small queries with `-XX:ArchiveClassesAtExit` and keeps the file the
JVM writes when it exits (~30 s of one core, ~180 MB). No run waits for it; the runs after it
start with the archive. `ASAQL_CLASS_ARCHIVE=off` turns both off.

    python -m asaql.cli.class_archive     # make it now (what the detached process runs)
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from asaql.jvm.engine import cache_dir, java_command, pyspark_jars

ARCHIVE_NAME = "driver.jsa"
SWITCH = "ASAQL_CLASS_ARCHIVE"  # "off": no archive is used or made
DUMP = "ASAQL_CLASS_ARCHIVE_DUMP"  # set by the maker: where the JVM writes the archive at exit
# the JVM reports an archive it cannot use (another Java, other jars) and goes on without it:
# nothing of that belongs in a run's output
QUIET = "-Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"
STALE_SECONDS = 600  # a maker's lock older than this is from one that died
MAKER = "asaql.cli.class_archive"  # the maker's module (it compiles queries: the app's layer)


def archive_path() -> Path | None:
    """Where this machine's archive for this Java and these jars lives; None without Java."""
    java = java_command()
    jars = pyspark_jars()
    if java is None or jars is None:
        return None
    digest = hashlib.sha256()
    real = os.path.realpath(java)
    digest.update(f"{real}\0{os.stat(real).st_mtime_ns}\0".encode())
    for jar in sorted(jars.glob("*.jar")):
        digest.update(f"{jar.name}\0{jar.stat().st_size}\0".encode())
    return cache_dir() / "class-archive" / digest.hexdigest()[:20] / ARCHIVE_NAME


def driver_options() -> str:
    """The driver's JVM options for the archive: use it when it is there, write it when this
    process is the maker; "" otherwise."""
    if off():
        return ""
    dump = os.environ.get(DUMP)
    if dump:
        return f"-XX:ArchiveClassesAtExit={dump} {QUIET}"
    path = archive_path()
    if path is not None and path.is_file():
        return f"-XX:SharedArchiveFile={path} {QUIET}"
    return ""


def off() -> bool:
    return os.environ.get(SWITCH, "").lower() in ("off", "0", "false", "no")


def make_now() -> Path | None:
    """The archive, made now (in a process of its own) when it is missing and no other maker
    is at work: for a process that starts many JVMs (a test run). → its path, or None."""
    path = None if off() or os.environ.get(DUMP) else archive_path()
    if path is None:
        return None
    if not path.is_file():  # the maker takes the lock: with another at work, it leaves
        subprocess.run([sys.executable, "-m", MAKER], stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return path if path.is_file() else None


def make_later() -> None:
    """Starts the maker, detached and at low priority, unless the archive is there, another
    maker is at work, or archives are off. For a process about to end (an atexit hook)."""
    if off() or os.environ.get(DUMP):
        return
    path = archive_path()
    if path is None or path.is_file() or _fresh(lock_file(path)):
        return
    try:  # the maker takes the lock: of two started at once, one leaves
        subprocess.Popen([sys.executable, "-m", MAKER], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True, close_fds=True)
    except OSError:
        pass


def lock_file(path: Path) -> Path:
    return path.with_name(path.name + ".making")


def _fresh(lock: Path) -> bool:
    """A lock of a maker at work (one older than STALE_SECONDS is of one that died)."""
    try:
        return time.time() - lock.stat().st_mtime <= STALE_SECONDS
    except OSError:
        return False


def take_lock(path: Path) -> bool:
    """True when this process may make the archive (no other maker is at work)."""
    lock = lock_file(path)
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        if lock.exists() and not _fresh(lock):
            lock.unlink(missing_ok=True)
        with open(lock, "x", encoding="utf-8") as handle:
            handle.write(str(os.getpid()))
        return True
    except OSError:  # another maker's lock, or a cache that cannot be written
        return False
