"""`asaql test --reports DIR`: each failing case's run report (asaql/pages), named after the
case: the job diagram of its query with the run's numbers, and why it failed."""

from __future__ import annotations

from pathlib import Path


class CaseWatch:
    """Watches one case's run when reports are asked for; writes the report if it failed."""

    def __init__(self, folder: Path | None, name: str, engine: str = "jvm"):
        self.folder = folder
        self.name = name
        self.engine = engine  # as `asaql test --engine`: who the diagram says reads records
        self.monitor = None

    def listeners(self, compiled, errors_path: str) -> tuple:
        """What the case's RunOptions get: the monitor of its run (none without reports)."""
        if self.folder is None:
            return ()
        from asaql.pages.job import engine_reader, job_graph_of
        from asaql.pages.monitor import RunMonitor

        graph = job_graph_of(compiled.plan, engine_reader(self.engine))
        self.monitor = RunMonitor(graph, errors_path, self.name)
        return (self.monitor,)

    def write(self, result) -> Path | None:
        """The report of a failed case (its run's numbers, and the diff or the error)."""
        if self.folder is None or result.passed or self.monitor is None:
            return None
        from asaql.pages.page import job_page

        why = result.report()
        self.monitor.finish("failed", f"FAIL {self.name}: {why[:4000]}")
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / (safe_name(self.name) + ".html")
        path.write_text(job_page(self.monitor.graph, "report", self.name,
                                 self.monitor.snapshot()), encoding="utf-8")
        return path


def safe_name(name: str) -> str:
    """A case's name as a file or folder name."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "case"
