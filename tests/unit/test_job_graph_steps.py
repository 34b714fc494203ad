"""The job diagram's boxes are the steps the user wrote (asaql/plan/job_graph.py), for every
golden case and sample query: named as the query names them, each plan operator in the box of
the step it came from, the data between boxes along their arrows; and the layout crosses as
few arrows as any order of its layers can (asaql/pages/layout.py)."""

from __future__ import annotations

import math
import re
from itertools import permutations, product
from pathlib import Path

import pytest

from asaql.compiler.pipeline import compile_query
from asaql.errors import AsaqlError
from asaql.pages.layout import crossings, layout
from asaql.plan.job_graph import job_graph
from asaql.plan.policy import EventOrderingPolicy
from asaql.testing import golden

ROOT = Path(__file__).resolve().parents[2]
CASES = golden.discover(ROOT / "tests" / "golden" / "cases") + golden.discover(ROOT / "samples")


def compiled_case(folder: Path):
    case = golden.load_case(folder)
    try:
        return compile_query(case.query, case.policy(), tuple(case.references)), case.query
    except AsaqlError:  # a case of a query error: no job to draw
        pytest.skip("the case's query does not compile")


@pytest.mark.parametrize("folder", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_boxes_are_the_steps_the_query_writes(folder):
    compiled, text = compiled_case(folder)
    graph = job_graph(compiled.plan)
    steps = [n for n in graph.nodes if n.kind == "step"]
    assert len(steps) == len(compiled.ast.steps) + len(compiled.ast.statements)
    lowered = text.lower()
    unnamed = any(s.into is None for s in compiled.ast.statements)  # writes `output`
    for node in graph.nodes:
        name = node.title.removeprefix("INTO ")
        assert "#" not in node.title and not re.search(r"\bv\d+\b", node.title), node.title
        assert name.lower() in lowered or (unnamed and name == "output"), node.title
    boxes = {n.id for n in graph.nodes}
    edges = set(graph.edges)
    for operator in graph.operators:
        assert operator.boxes and set(operator.boxes) <= boxes, operator
    inside = {o.id: set(o.boxes) for o in graph.operators}
    for source, target in graph.flow:
        a, b = inside[source], inside[target]
        assert a & b or any((x, y) in edges for x in a for y in b), (source, target)


def fewest_crossings(layers, links) -> int:
    return min(crossings(order, links) for order in product(*(permutations(m) for m in layers)))


@pytest.mark.parametrize("folder", [f for f in CASES if f.name in (
    "toll_app", "iot_devices", "doc_geofencing", "doc_apply_over_step_apply")] + [
    f for f in CASES if f.name.startswith("join")][:6], ids=lambda p: p.name)
def test_the_layout_crosses_as_few_arrows_as_any_order(folder):
    compiled, _ = compiled_case(folder)
    where = layout(job_graph(compiled.plan))
    if math.prod(math.factorial(len(m)) for m in where.layers) > 50_000:
        pytest.skip("too many orders to try them all")
    assert crossings(where.layers, where.links) == fewest_crossings(where.layers, where.links)


def test_an_arrow_past_a_layer_runs_between_its_boxes():
    """An input read by the first step and by a step three layers down: the long arrow gets a
    waypoint in each layer it passes, beside that layer's boxes."""
    query = """
    WITH a AS (SELECT deviceId, temperature FROM input TIMESTAMP BY EventTime),
         b AS (SELECT deviceId, temperature FROM a WHERE temperature > 20),
         c AS (SELECT deviceId, temperature FROM b WHERE temperature < 90)
    SELECT deviceId INTO out FROM c
    UNION SELECT deviceId FROM input TIMESTAMP BY EventTime
    """
    graph = job_graph(compile_query(query, EventOrderingPolicy.from_options("5s", "0s")).plan)
    where = layout(graph)
    long = [edge for edge in graph.edges if edge in where.routes]
    assert len(long) == 1 and len(where.routes[long[0]]) == 2 * 3  # past three layers
    for source, target in long:
        for x, y in where.routes[(source, target)]:
            for box, (cx, cy) in where.centres.items():
                w, h = where.sizes[box]
                assert not (cx - w / 2 < x < cx + w / 2 and cy - h / 2 < y < cy + h / 2), box
