"""The job diagram as SVG: a box per node of the job graph, an arrow per edge.

Drawn here rather than in the browser, so the page shows the job even with scripts off; the
page's script only adds the selection and the live numbers (each box has an empty line for
them, `text.numbers`).
"""

from __future__ import annotations

from html import escape

from asaql.pages.layout import BOX_HEIGHT, BOX_WIDTH, Layout
from asaql.plan.job_graph import JobGraph

_LINE = 15  # pixels per text line in a box


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
        parts.append(_box(node, *where.centres[node.id]))
    parts.append("</svg>")
    return "\n".join(parts)


def _edge(source: str, target: str, where: Layout) -> str:
    (x1, y1), (x2, y2) = where.centres[source], where.centres[target]
    y1, y2 = y1 + BOX_HEIGHT / 2, y2 - BOX_HEIGHT / 2
    if y2 <= y1:  # a stage read back at the same height or above: around the side
        y2 = where.centres[target][1] - BOX_HEIGHT / 2
    bend = max(30.0, (y2 - y1) / 2)
    return (f'<path class="edge" data-from="{source}" data-to="{target}" '
            f'd="M {x1:.1f} {y1:.1f} C {x1:.1f} {y1 + bend:.1f}, {x2:.1f} {y2 - bend:.1f}, '
            f'{x2:.1f} {y2:.1f}" marker-end="url(#arrow)"/>')


def _box(node, cx: float, cy: float) -> str:
    x, y = cx - BOX_WIDTH / 2, cy - BOX_HEIGHT / 2
    lines = [f'<text class="title" x="{x + 10:.1f}" y="{y + 19:.1f}">{escape(node.title)}'
             '</text>']
    for number, detail in enumerate(node.details[:2]):
        top = y + 19 + _LINE * (number + 1)
        lines.append(f'<text class="detail" x="{x + 10:.1f}" y="{top:.1f}">'
                     f'{escape(_fit(detail))}</text>')
    lines.append(f'<text class="numbers" x="{x + 10:.1f}" y="{y + BOX_HEIGHT - 9:.1f}"></text>')
    badge = f'<title>{escape(node.plan_text)}</title>'
    return (f'<g class="node {node.kind}" data-id="{node.id}" data-kind="{node.kind}" '
            f'data-operator="{node.operator}" tabindex="0">{badge}'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{BOX_WIDTH}" height="{BOX_HEIGHT}" rx="6"/>'
            + "".join(lines) + "</g>")


def _fit(text: str, limit: int = 38) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"
