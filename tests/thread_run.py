"""`asaql` through click's CliRunner in a thread on the shared Spark session, watched like a
process: `poll()` is None while it runs, then its exit code; `stderr.read()` (or `said()`)
what it said."""

from __future__ import annotations

import io
import threading

from click.testing import CliRunner

from asaql.cli import cli


class ThreadRun:
    def __init__(self, args: list[str]):
        self.result = None
        self.thread = threading.Thread(target=self._run, args=(args,), daemon=True)
        self.thread.start()

    def _run(self, args: list[str]) -> None:
        self.result = CliRunner().invoke(cli, args)

    def poll(self):
        return None if self.thread.is_alive() else self.result.exit_code

    def said(self) -> str:
        return "" if self.result is None else self.result.output

    @property
    def stderr(self) -> io.StringIO:
        return io.StringIO(self.said())
