"""`asaql test --reports DIR`: each failing case's run report (asaql/pages), named after the
case: the job diagram of its query with the run's numbers, and why it failed."""

from __future__ import annotations

from pathlib import Path


class CaseWatch:
    """Watches one case's run when reports are asked for; writes the report if it failed."""

    def __init__(self, folder: Path | None, name: str):
        self.folder = folder
        self.name = name
        self.monitor = None

    def listeners(self, compiled, errors_path: str) -> tuple:
        """What the case's RunOptions get: the monitor of its run (none without reports)."""
        if self.folder is None:
            return ()
        from asaql.pages.monitor import RunMonitor
        from asaql.plan.explain import running_steps
        from asaql.plan.job_graph import job_graph

        graph = job_graph(compiled.plan, running_steps(compiled.plan))
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
        path = self.folder / (_safe(self.name) + ".html")
        path.write_text(job_page(self.monitor.graph, "report", self.name,
                                 self.monitor.snapshot()), encoding="utf-8")
        return path


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "case"
