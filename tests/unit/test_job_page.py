"""The job page is one self-contained file whatever the query says: a query's text can neither
end the page's script nor stand for one of the template's markers (asaql/pages/page.py)."""

from __future__ import annotations

import json
import re

from asaql.compiler.pipeline import compile_query
from asaql.pages.page import job_page
from asaql.plan.job_graph import job_graph
from asaql.plan.policy import EventOrderingPolicy

QUERY = """
SELECT deviceId, '</script><script>alert(1)</script>' AS a, '__ASAQL_SCRIPT__ <!--' AS b
INTO out FROM input TIMESTAMP BY EventTime WHERE deviceId != '<b>'
"""


def test_a_query_cannot_break_out_of_the_page():
    compiled = compile_query(QUERY, EventOrderingPolicy.from_options("5s", "0s"))
    graph = job_graph(compiled.plan)
    page = job_page(graph, "diagram", "q.sql")
    assert "<script>alert(1)" not in page
    assert page.count("<script") == 2  # the data and the page's own script
    # the marker in the query's text stays text: the page's script is in it once
    assert page.count("The page's data and small helpers, shared by diagram.js") == 1
    assert not re.search(r"__ASAQL_(TITLE|HEADING|MODE|STYLE|DIAGRAM|DATA|PLOTLY)__", page)
    data = re.search(r'id="asaql-data">(.*?)</script>', page, re.S).group(1)
    plans = [n["plan"] for n in json.loads(data)["graph"]["nodes"]]
    assert any("'</script><script>alert(1)</script>'" in plan for plan in plans)
    assert any("'__ASAQL_SCRIPT__ <!--'" in plan for plan in plans)
    assert "&lt;/script&gt;" in page  # the SVG box's tooltip, escaped


def test_the_layout_puts_every_node_inside_the_drawing():
    compiled = compile_query(QUERY, EventOrderingPolicy.from_options("5s", "0s"))
    from asaql.pages.layout import BOX_HEIGHT, BOX_WIDTH, layout

    graph = job_graph(compiled.plan)
    where = layout(graph)
    assert set(where.centres) == {n.id for n in graph.nodes}
    for x, y in where.centres.values():
        assert BOX_WIDTH / 2 <= x <= where.width - BOX_WIDTH / 2
        assert BOX_HEIGHT / 2 <= y <= where.height - BOX_HEIGHT / 2
    # the data flows down: every arrow goes to a lower layer
    for source, target in graph.edges:
        assert where.centres[source][1] < where.centres[target][1]
