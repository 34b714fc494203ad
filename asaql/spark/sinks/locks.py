"""A lock that survives pickling: a Spark Connect server runs a foreachBatch function in a
Python process of its own, from a pickle of it, and `threading.Lock` cannot be pickled. The
lock guards threads of one process, so a copy starts unlocked."""

from __future__ import annotations

import threading


class PortableLock:
    def __init__(self):
        self._lock = threading.Lock()

    def __enter__(self):
        return self._lock.__enter__()

    def __exit__(self, *exc):
        return self._lock.__exit__(*exc)

    def __reduce__(self):
        return (PortableLock, ())
