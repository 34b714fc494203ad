"""Waiting on a run's streaming queries: until they end, Ctrl-C between two py4j calls, and
--follow's stop between micro-batches when a reference file changed."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path


def reference_versions(references: dict[str, str]) -> dict[str, float]:
    """Each reference file's (or folder's newest file's) modification time."""
    versions = {}
    for path in references.values():
        files = [Path(path)] if Path(path).is_file() else sorted(Path(path).rglob("*"))
        versions[path] = max((f.stat().st_mtime for f in files if f.is_file()), default=0.0)
    return versions


def wait_for(queries, follow: bool, references: dict | None = None,
             versions: dict | None = None, pump: list = ()) -> bool:
    """Until the queries end (or Ctrl-C); True when --follow stopped them because a reference
    file changed. `pump`: report readers (Spark Connect) read as the queries run."""
    interrupted = threading.Event()
    restore = _catch_ctrl_c(interrupted)
    try:
        if follow:
            while not interrupted.is_set() and all(q.isActive for q in queries):
                if references and reference_versions(references) != versions:
                    _stop_between_batches(queries)
                    return True
                interrupted.wait(0.5)
                _pump(pump)
        for q in queries:  # short waits: a run ends as soon as its query has (Ctrl-C between)
            while not interrupted.is_set() and not q.awaitTermination(0.1):
                _pump(pump)
    except KeyboardInterrupt:
        pass
    finally:
        restore()
        for q in queries:
            if q.isActive:
                q.stop()
        _pump(pump)
    for q in queries:
        if q.exception() is not None:
            raise q.exception()
    return False


def _pump(readers) -> None:
    for reader in readers:
        reader.pump()


def _catch_ctrl_c(interrupted: threading.Event):
    """Ctrl-C only sets `interrupted`; the wait loop then stops the queries between two py4j
    calls. PySpark's own handler cancels jobs from inside the signal, in the middle of whatever
    py4j call the main thread is making, which garbles that call's answer ("'bool' object has
    no attribute 'cancelAllJobs'"). A second Ctrl-C interrupts at once. → a function that puts
    the previous handler back."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)

    def on_ctrl_c(signum, frame):
        if interrupted.is_set():
            raise KeyboardInterrupt
        interrupted.set()

    signal.signal(signal.SIGINT, on_ctrl_c)
    return lambda: signal.signal(signal.SIGINT, previous)


def _stop_between_batches(queries) -> None:
    for q in queries:
        while q.isActive and q.status.get("isTriggerActive"):
            time.sleep(0.1)
        q.stop()
