"""The job diagram as SVG: a box per input, step and output of the job graph, an arrow per
edge (through its waypoints, between the boxes of the layers it passes).

Drawn here rather than in the browser, so the page shows the job even with scripts off; the
page's script adds the selection, the run's numbers (each input and output box keeps empty
lines for them, `text.numbers`), the zoom, and cuts each line to the box's width as the
browser measures it. Here lines are cut by a count of characters a little under that width,
with `…`, so nothing runs past a box's edge without the script either; `data-full` keeps the
whole line.
"""

from __future__ import annotations

from html import escape

from asaql.pages.layout import BOX_WIDTH, HEAD, LINE, Layout, detail_lines
from asaql.plan.job_graph import GraphNode, JobGraph

INSET = 10  # text from the box's left edge, and the room kept at its right
# characters that surely fit in a line of the box (system-ui: ~7.9 px a bold 13 px
# character at most in our titles, ~6.9 px a 12 px one)
TITLE_CHARS = int((BOX_WIDTH - 2 * INSET) / 8.6)
DETAIL_CHARS = int((BOX_WIDTH - 2 * INSET) / 7.0)


def diagram_svg(graph: JobGraph, where: Layout) -> str:
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" id="job-diagram" class="diagram" '
             f'width="{where.width}" height="{where.height}" '
             f'viewBox="0 0 {where.width} {where.height}" role="img" '
             f'aria-label="job diagram">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" '
             'markerHeight="8" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z"/>'
             '</marker></defs>']
    for source, target in graph.edges:
        parts.append(_edge(source, target, where))
    for node in graph.nodes:
        parts.append(_box(node, where))
    parts.append("</svg>")
    return "\n".join(parts)


def _edge(source: str, target: str, where: Layout) -> str:
    (x1, y1), (x2, y2) = where.centres[source], where.centres[target]
    points = [(x1, y1 + where.sizes[source][1] / 2),
              *where.routes.get((source, target), ()),
              (x2, y2 - where.sizes[target][1] / 2)]
    path = [f"M {points[0][0]:.1f} {points[0][1]:.1f}"]
    for (ax, ay), (bx, by) in zip(points, points[1:]):
        if ax == bx:  # through a layer, beside its boxes
            path.append(f"L {bx:.1f} {by:.1f}")
            continue
        bend = max(20.0, (by - ay) / 2)
        path.append(f"C {ax:.1f} {ay + bend:.1f}, {bx:.1f} {by - bend:.1f}, {bx:.1f} {by:.1f}")
    return (f'<path class="edge" data-from="{source}" data-to="{target}" '
            f'd="{" ".join(path)}" marker-end="url(#arrow)"/>')


def _box(node: GraphNode, where: Layout) -> str:
    (cx, cy), (width, height) = where.centres[node.id], where.sizes[node.id]
    x, y = cx - width / 2, cy - height / 2
    left = x + INSET
    lines = [_text("tag", node.tag, left, y + 14, DETAIL_CHARS),
             _text("title", node.title, left, y + HEAD - 7, TITLE_CHARS)]
    details = detail_lines(node)
    for number, detail in enumerate(details):
        lines.append(_text("detail", detail, left, y + HEAD - 7 + LINE * (number + 1),
                           DETAIL_CHARS))
    if where.numbers and node.kind in ("input", "output"):
        top = y + HEAD - 7 + LINE * (len(details) + 1)
        lines.append(f'<text class="numbers" x="{left:.1f}" y="{top:.1f}"></text>')
    tip = "\n".join((f"{node.tag}: {node.title}", node.text or "\n".join(node.details)))
    return (f'<g class="node {node.kind}" data-id="{node.id}" data-kind="{node.kind}" '
            f'data-operator="{node.operator}" tabindex="0" role="button" '
            f'aria-label="{escape(node.tag)} {escape(node.title)}">'
            f'<title>{escape(tip)}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{width}" height="{height:.1f}" rx="6"/>'
            + "".join(lines) + "</g>")


def _text(cls: str, text: str, x: float, y: float, limit: int) -> str:
    shown = text if len(text) <= limit else text[:limit - 1].rstrip() + "…"
    return (f'<text class="{cls}" x="{x:.1f}" y="{y:.1f}" data-full="{escape(text)}">'
            f'{escape(shown)}</text>')
