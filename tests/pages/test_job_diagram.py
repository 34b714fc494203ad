"""`asaql explain --format html`: the job diagram, opened in a real headless Chromium with no
network, holds the nodes and arrows `explain --format json` lists, and selecting a box shows
its plan and its watermark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli

SAMPLES = Path(__file__).parents[2] / "samples"
TOLL = ["explain", str(SAMPLES / "toll_app" / "query.sql"),
        "--reference", f"Registration={SAMPLES / 'toll_app' / 'reference' / 'Registration.csv'}"]
IOT = ["explain", str(SAMPLES / "iot_devices" / "query.sql"), "--late", "5s", "--ooo", "2s"]
PROJECT = ["explain", str(SAMPLES / "asa_project")]


def explain(arguments: list[str], fmt: str) -> str:
    result = CliRunner().invoke(cli, [*arguments, "--format", fmt])
    assert result.exit_code == 0, result.output
    return result.output


def tree_links(tree: dict, links: set, ids: dict) -> str:
    """The (from, to) pairs of explain's trees, each operator named by its id; `ids`: id →
    description (one description per id)."""
    ids.setdefault(tree["id"], tree["description"])
    assert ids[tree["id"]] == tree["description"]
    for child in tree.get("inputs", ()):
        links.add((tree_links(child, links, ids), tree["id"]))
    return tree["id"]


def page_graph(page) -> tuple[dict, set]:
    nodes = page.evaluate("""Object.fromEntries([...document.querySelectorAll('g.node')]
        .map(g => [g.dataset.id, {kind: g.dataset.kind, operator: g.dataset.operator,
                                  title: g.querySelector('text.title').textContent}]))""")
    edges = page.evaluate("""[...document.querySelectorAll('path.edge')]
        .map(p => [p.dataset.from, p.dataset.to])""")
    return nodes, {tuple(edge) for edge in edges}


@pytest.mark.parametrize("arguments", [TOLL, IOT, PROJECT], ids=["toll_app", "iot", "project"])
def test_the_diagram_draws_what_explain_lists(offline_page, screenshots, tmp_path, arguments,
                                              request):
    page, failed = offline_page
    data = json.loads(explain(arguments, "json"))
    html = tmp_path / "job.html"
    html.write_text(explain(arguments, "html"))
    page.goto(html.as_uri())
    nodes, edges = page_graph(page)
    graph = data["graph"]
    assert set(nodes) == {n["id"] for n in graph["nodes"]}
    assert edges == {(e["from"], e["to"]) for e in graph["edges"]}
    for node in graph["nodes"]:
        assert nodes[node["id"]] == {"kind": node["kind"], "operator": node["operator"],
                                     "title": node["title"]}
    # every operator of explain's trees is a box, every parent and child an arrow
    links, ids = set(), {}
    for tree in data["outputs"]:
        tree_links(tree, links, ids)
    assert set(ids) <= set(nodes)
    assert links <= edges
    # what is left are the arrows the trees cannot show: reference data into its join, a
    # stage's writer into its reader
    for source, target in edges - links:
        assert nodes[source]["kind"] in ("reference", "stage"), (source, target)
    assert not failed, failed
    page.screenshot(path=str(screenshots / f"explain-{request.node.callspec.id}.png"),
                    full_page=True)


def test_the_toll_app_diagram_shares_its_join_and_links_its_stage(offline_page):
    page, _ = offline_page
    graph = json.loads(explain(TOLL, "json"))["graph"]
    joins = [n for n in graph["nodes"] if n["operator"] == "JoinStreams"]
    shared = [n for n in joins if n["sharedBy"]]
    assert len(shared) == 1 and set(shared[0]["sharedBy"]) == {"trips", "#perBooth.1", "expired"}
    assert len(joins) == 2  # the LEFT JOIN of `missing` is a join of its own
    inputs = {n["alias"]: n["id"] for n in graph["nodes"] if n["kind"] == "input"}
    assert set(inputs) == {"EntryStream", "ExitStream"}
    reference = next(n for n in graph["nodes"] if n["kind"] == "reference")
    assert reference["alias"] == "Registration"
    stage = next(n for n in graph["nodes"] if n["kind"] == "stage")
    reader = next(n for n in graph["nodes"] if n["operator"] == "ReadStage")
    assert {"from": stage["id"], "to": reader["id"]} in graph["edges"]


def test_selecting_a_box_shows_its_plan_and_watermark(offline_page, tmp_path):
    page, failed = offline_page
    graph = json.loads(explain(TOLL, "json"))["graph"]
    html = tmp_path / "job.html"
    html.write_text(explain(TOLL, "html"))
    page.goto(html.as_uri())
    join = next(n for n in graph["nodes"] if n["operator"] == "JoinStreams" and n["sharedBy"])
    page.click(f'g.node[data-id="{join["id"]}"]')
    panel = page.locator("#details")
    assert panel.get_attribute("data-selected") == join["id"]
    text = panel.inner_text()
    assert join["plan"].split(";")[0] in text
    assert "passes its time + 15m" in text  # the join's watermark formula
    assert "trips, #perBooth.1, expired: runs once" in text
    policy = next(n for n in graph["nodes"] if n["operator"] == "ApplyEventOrdering")
    page.click(f'g.node[data-id="{policy["id"]}"]')
    text = panel.inner_text()
    assert "combined watermark = min over partitions of watermark(p)" in text
    assert "largest System.Timestamp seen in partition p − ooo" in text
    assert page.locator("g.node.selected").count() == 1
    assert not failed, failed


def test_the_diagram_page_needs_no_network_and_no_plotly(tmp_path):
    html = explain(TOLL, "html")
    assert "<script src=" not in html and "<link " not in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html
    assert len(html) < 200_000  # the diagram alone: no chart library inside
