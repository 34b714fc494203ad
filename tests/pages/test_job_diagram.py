"""`asaql explain --format html`: the job diagram, opened in a real headless Chromium with no
network. A box per input, per step the query writes (named as it writes it) and per output,
arrows by name as in ASA's job diagram, the plan's operators inside; every box and line inside
the visible frame at 1400×1000 and at 500 px wide; selecting a box shows its step as written,
its operators and their watermarks; after a run, each box's numbers are the summary line's."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from asaql.cli import cli

SAMPLES = Path(__file__).parents[2] / "samples"
TOLL_QUERY = SAMPLES / "toll_app" / "query.sql"
TOLL = ["explain", str(TOLL_QUERY),
        "--reference", f"Registration={SAMPLES / 'toll_app' / 'reference' / 'Registration.csv'}"]
IOT = ["explain", str(SAMPLES / "iot_devices" / "query.sql"), "--late", "5s", "--ooo", "2s"]
PROJECT = ["explain", str(SAMPLES / "asa_project")]
SUMMARY = re.compile(r"asaql: (\d+) input events, (\d+) output events, (\d+) early, (\d+) late, "
                     r"(\d+) out-of-order, (\d+) dropped, (\d+) malformed.*?(\d+) events read = "
                     r"(\d+) accepted")


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
                                  title: g.querySelector('text.title').dataset.full}]))""")
    edges = page.evaluate("""[...document.querySelectorAll('path.edge')]
        .map(p => [p.dataset.from, p.dataset.to])""")
    return nodes, {tuple(edge) for edge in edges}


def open_diagram(page, tmp_path: Path, arguments: list[str]) -> None:
    html = tmp_path / "job.html"
    html.write_text(explain(arguments, "html"))
    page.goto(html.as_uri())


@pytest.mark.parametrize("arguments", [TOLL, IOT, PROJECT], ids=["toll_app", "iot", "project"])
def test_the_diagram_draws_what_explain_lists(offline_page, tmp_path, arguments):
    page, failed = offline_page
    data = json.loads(explain(arguments, "json"))
    open_diagram(page, tmp_path, arguments)
    nodes, edges = page_graph(page)
    graph = data["graph"]
    assert set(nodes) == {n["id"] for n in graph["nodes"]}
    assert edges == {(e["from"], e["to"]) for e in graph["edges"]}
    for node in graph["nodes"]:
        assert nodes[node["id"]] == {"kind": node["kind"], "operator": node["operator"],
                                     "title": node["title"]}
    # every operator of explain's trees is in a box, every parent and child an operator arrow
    links, ids = set(), {}
    for tree in data["outputs"]:
        tree_links(tree, links, ids)
    operators = {o["id"]: o for o in graph["operators"]}
    assert set(ids) == set(operators)
    assert links == {(f["from"], f["to"]) for f in graph["flow"]}
    boxes = {n["id"] for n in graph["nodes"]}
    for operator in operators.values():
        assert operator["boxes"] and set(operator["boxes"]) <= boxes
    for node in graph["nodes"]:
        assert all(node["id"] in operators[o]["boxes"] for o in node["operators"])
    # the data an operator hands another box flows along an arrow between their boxes
    for source, target in links:
        a, b = set(operators[source]["boxes"]), set(operators[target]["boxes"])
        assert a & b or any((x, y) in edges for x in a for y in b), (source, target)
    assert not failed, failed


def test_the_toll_app_diagram_names_its_boxes_as_the_query_does(offline_page, tmp_path):
    page, failed = offline_page
    open_diagram(page, tmp_path, TOLL)
    nodes, edges = page_graph(page)
    title = {i: n["title"] for i, n in nodes.items()}
    query = TOLL_QUERY.read_text()
    # one box per step the user wrote (a WITH step, four SELECT … INTO), per input and output
    steps = sorted(t for i, t in title.items() if nodes[i]["kind"] == "step")
    assert steps == ["INTO expired", "INTO missing", "INTO perBooth", "INTO trips", "Trips"]
    assert sorted(t for i, t in title.items() if nodes[i]["kind"] == "input") == \
        ["EntryStream", "ExitStream"]
    assert [t for i, t in title.items() if nodes[i]["kind"] == "reference"] == ["Registration"]
    assert sorted(t for i, t in title.items() if nodes[i]["kind"] == "output") == \
        ["expired", "missing", "perBooth", "trips"]
    for name in title.values():  # every box's name is the query's own
        assert re.search(rf"\b{re.escape(name)}\b", query), name
    # the arrows as ASA's job diagram draws them: input → steps → outputs, by name
    named = {(title[a], title[b]) for a, b in edges}
    assert named == {
        ("EntryStream", "Trips"), ("ExitStream", "Trips"), ("Trips", "INTO trips"),
        ("Trips", "INTO perBooth"), ("Trips", "INTO expired"), ("Registration", "INTO expired"),
        ("EntryStream", "INTO missing"), ("ExitStream", "INTO missing"),
        ("INTO trips", "trips"), ("INTO perBooth", "perBooth"), ("INTO expired", "expired"),
        ("INTO missing", "missing")}
    # each step's clauses as written, none of the plan's renamed columns or stages
    lines = page.evaluate("""[...document.querySelectorAll('g.node text:not(.tag)')]
        .map(t => t.dataset.full ?? t.textContent)""")
    assert "SELECT TollId, COUNT(*) AS Trips, AVG(DurationInMinutes) AS AvgMinutes, " \
        "System.Timestamp() AS WindowEnd" in lines
    assert "GROUP BY TollId, TumblingWindow(minute, 5)" in lines
    assert "FROM EntryStream e TIMESTAMP BY EntryTime" in lines
    assert not [line for line in lines if re.search(r"\bv\d\b|#|\bstep\b", line)], lines
    assert not failed, failed


def test_the_iot_input_box_says_its_name_once(offline_page, tmp_path):
    page, _ = offline_page
    open_diagram(page, tmp_path, IOT)
    box = page.locator('g.node[data-kind="input"]')
    assert box.locator("text.title").text_content() == "input"
    assert box.locator("text.tag").text_content().lower() == "stream"
    texts = box.locator("text").all_text_contents()
    assert not any("input input" in t for t in texts), texts


def boxes_fit(page) -> dict:
    """Each box and each of its lines against the visible frame and its box; the lines cut
    to fit end in …"""
    return page.evaluate("""() => {
        const frame = document.querySelector('.diagram-frame').getBoundingClientRect();
        const view = {left: 0, right: document.documentElement.clientWidth};
        const inner = document.querySelector('.diagram-frame');
        const drawn = document.getElementById('job-diagram').getBoundingClientRect();
        const out = {frame: frame.width, drawn: drawn.width,
                     scrolls: inner.scrollWidth > inner.clientWidth
                       || inner.scrollHeight > inner.clientHeight,
                     outside: [], spilled: [], uncut: [], boxes: 0};
        for (const g of document.querySelectorAll('g.node')) {
            out.boxes += 1;
            const box = g.querySelector('rect').getBoundingClientRect();
            if (box.left < frame.left - 0.5 || box.right > frame.right + 0.5
                || box.left < view.left || box.right > view.right
                || box.top < frame.top - 0.5 || box.bottom > frame.bottom + 0.5)
                out.outside.push(g.dataset.id);
            for (const t of g.querySelectorAll('text, tspan')) {
                if (!t.textContent) continue;
                const r = t.getBoundingClientRect();
                if (r.left < box.left || r.right > box.right || r.top < box.top
                    || r.bottom > box.bottom) out.spilled.push(t.textContent);
                const full = t.dataset.full;
                if (full !== undefined && full !== t.textContent && !t.textContent.endsWith('…'))
                    out.uncut.push(t.textContent);
            }
        }
        return out;
    }""")


@pytest.mark.parametrize("width", [1400, 500])
@pytest.mark.parametrize("arguments", [TOLL, IOT], ids=["toll_app", "iot"])
def test_the_diagram_fits_the_page(browser, screenshots, tmp_path, arguments, width, request):
    context = browser.new_context(offline=True, viewport={"width": width, "height": 1000})
    try:
        page = context.new_page()
        open_diagram(page, tmp_path, arguments)
        fit = boxes_fit(page)
        name = request.node.callspec.id.replace("-", "-at-")
        page.screenshot(path=str(screenshots / f"diagram-{name}.png"))
        assert fit["boxes"] >= 3
        assert not fit["outside"] and not fit["spilled"] and not fit["uncut"], fit
        assert not fit["scrolls"]  # fitted: no scrollbar to find under a tall diagram
        assert fit["frame"] >= 0.6 * width  # the page's width, not a 60-px column
        # zoomed in, the frame scrolls (pans) inside the page; fit brings the whole job back
        for _ in range(3):
            page.click("#zoom-in")
        zoomed = boxes_fit(page)
        assert zoomed["drawn"] == pytest.approx(fit["drawn"] * 1.25 ** 3, abs=2)
        assert zoomed["scrolls"] == (zoomed["drawn"] > zoomed["frame"])
        page.click("#zoom-fit")
        assert boxes_fit(page) == fit
    finally:
        context.close()


def test_selecting_a_box_shows_its_step_its_operators_and_their_watermarks(offline_page,
                                                                           tmp_path):
    page, failed = offline_page
    graph = json.loads(explain(TOLL, "json"))["graph"]
    open_diagram(page, tmp_path, TOLL)
    trips = next(n for n in graph["nodes"] if n["title"] == "Trips")
    page.click(f'g.node[data-id="{trips["id"]}"]')
    panel = page.locator("#details")
    assert panel.get_attribute("data-selected") == trips["id"]
    text = panel.inner_text()
    assert "DATEDIFF(minute, e, x) BETWEEN 0 AND 15" in text  # the step as written
    join = next(o for o in graph["operators"] if o["operator"] == "JoinStreams"
                and o["sharedBy"])
    assert join["plan"].split(";")[0] in text
    assert "passes its time + 15m" in text  # the join's watermark formula
    assert "trips, perBooth, expired: runs once" in text
    missing = next(n for n in graph["nodes"] if n["title"] == "INTO missing")
    page.click(f'g.node[data-id="{missing["id"]}"]')
    text = panel.inner_text()
    assert "combined watermark = min over partitions of watermark(p)" in text
    assert "largest System.Timestamp seen in partition p − ooo" in text
    assert "Also in\nTrips" in text  # one TIMESTAMP BY EntryTime for both steps
    assert page.locator("g.node.selected").count() == 1
    assert not failed, failed


def test_the_diagram_page_needs_no_network_and_no_plotly(tmp_path):
    html = explain(TOLL, "html")
    assert "<script src=" not in html and "<link " not in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html
    assert len(html) < 200_000  # the diagram alone: no chart library inside


def test_the_numbers_on_the_boxes_are_the_summary_lines(spark, offline_page, screenshots,
                                                        tmp_path):
    """A real run of the IoT sample with --report: its input box says what the summary line
    says (17 events adjusted is no counter: the box says late, early and out of order as the
    summary does), its output box the rows."""
    page, failed = offline_page
    report = tmp_path / "run.html"
    result = CliRunner().invoke(cli, [
        "run", str(SAMPLES / "iot_devices" / "query.sql"),
        "--input", str(SAMPLES / "iot_devices" / "input.jsonl"),
        "--output", f"alerts={tmp_path / 'alerts.jsonl'}", "--errors",
        str(tmp_path / "errors.jsonl"), "--report", str(report), "--late", "5s", "--ooo", "2s"])
    assert result.exit_code == 0, result.output
    found = SUMMARY.search(result.output)
    assert found, result.output
    (inputs, outputs, early, late, ooo, dropped, malformed, read, accepted) = found.groups()
    page.goto(report.as_uri())
    page.wait_for_function(
        "document.querySelectorAll('g.node[data-kind=\"input\"] text.numbers tspan').length")
    box = page.locator('g.node[data-kind="input"] text.numbers tspan').all_text_contents()
    assert box == [f"read {read}", f"accepted {accepted}", f"dropped {dropped}",
                   f"malformed {malformed}", f"late {late}", f"early {early}",
                   f"out of order {ooo}"]
    assert (read, late, early, ooo, dropped) == ("304", "12", "4", "6", "4")  # the sample's
    rows = page.locator('g.node[data-kind="output"] text.numbers').text_content()
    assert rows == f"rows {outputs}"
    page.locator("section.job").scroll_into_view_if_needed()
    fit = boxes_fit(page)
    assert not fit["outside"] and not fit["spilled"] and not fit["uncut"], fit
    page.locator("section.job").screenshot(path=str(screenshots / "diagram-iot-report.png"))
    assert not failed, failed
