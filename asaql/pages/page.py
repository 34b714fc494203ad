"""One self-contained HTML page for a job: `explain --format html` (the diagram), the live page
of `run --ui` and the report of `run --report` (the diagram with the run's numbers and charts).

Everything the page needs is inside it: its style and script (asaql/pages/assets), the
diagram as SVG, its data as JSON, and for charts plotly.js from the installed plotly package.
Nothing is fetched from a network.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from html import escape
from importlib import resources

from asaql.pages.diagram import diagram_svg
from asaql.pages.layout import layout
from asaql.plan.job_graph import JobGraph

MODES = ("diagram", "live", "report")
# the page's style and script, each in files of one concern; the scripts share one scope
_STYLES = ("page.css", "diagram.css")
_SCRIPTS = ("common.js", "diagram.js", "charts.js", "page.js")
_MARKER = re.compile(r"__ASAQL_[A-Z]+__")


def job_page(graph: JobGraph, mode: str, title: str, snapshot: dict | None = None) -> str:
    """`mode`: diagram (no numbers), live (asks `api/status` every second) or report (the
    numbers of `snapshot`, final)."""
    if mode not in MODES:
        raise ValueError(f"unknown page mode {mode!r}")
    heading = {"diagram": f"Job diagram · {title}", "live": f"asaql run · {title}",
               "report": f"asaql run report · {title}"}[mode]
    data = {"mode": mode, "graph": graph.as_json(), "snapshot": snapshot}
    charts = f"<script>{plotly_js()}</script>" if mode != "diagram" else ""
    values = {
        "__ASAQL_TITLE__": escape(heading), "__ASAQL_HEADING__": escape(heading),
        "__ASAQL_MODE__": mode,
        "__ASAQL_STYLE__": "\n".join(_asset(name) for name in _STYLES),
        "__ASAQL_DIAGRAM__": diagram_svg(graph, layout(graph, numbers=mode != "diagram")),
        "__ASAQL_DATA__": _script_json(data), "__ASAQL_SCRIPT__": _script(),
        "__ASAQL_PLOTLY__": charts,
    }
    # one pass over the template: a marker inside a value (a query's text) stays as it is
    return _MARKER.sub(lambda found: values[found.group(0)], _asset("page.html"))


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.js as the installed plotly package ships it (minified), safe inside a <script>."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs().replace("</script", "<\\/script")


def _script() -> str:
    return "(function () {\n" + "\n".join(_asset(name) for name in _SCRIPTS) + "})();"


def _asset(name: str) -> str:
    return resources.files("asaql.pages").joinpath("assets", name).read_text(encoding="utf-8")


def _script_json(data) -> str:
    """JSON inside <script type="application/json">: no `<` at all (`</script>`, `<!--`), as
    `\\u003c`, which JSON reads back as `<` (it can only be inside a string)."""
    return json.dumps(data, ensure_ascii=False, default=str).replace("<", "\\u003c")
