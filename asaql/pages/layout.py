"""Where each box of the job diagram goes: layers top to bottom in the order the data flows,
laid out by networkx (its multipartite layout of the graph's topological generations)."""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx

from asaql.plan.job_graph import JobGraph

BOX_WIDTH, BOX_HEIGHT = 250, 84
COLUMN, ROW = 280, 130  # from one box's centre to the next one's
MARGIN = 20


@dataclass(frozen=True)
class Layout:
    centres: dict[str, tuple[float, float]]  # node id → its box's centre, in pixels
    width: int
    height: int


def layout(graph: JobGraph) -> Layout:
    flow = nx.DiGraph()
    flow.add_nodes_from(node.id for node in graph.nodes)
    flow.add_edges_from(graph.edges)
    layers = {}
    for number, generation in enumerate(nx.topological_generations(flow)):
        layers.update(dict.fromkeys(generation, number))
    # an input with one consumer deep down (reference data) sits just above that consumer
    for node in flow.nodes:
        if flow.in_degree(node) == 0 and flow.out_degree(node):
            layers[node] = min(layers[after] for after in flow.successors(node)) - 1
    # networkx keeps a layer's nodes in the graph's order: give it each layer sorted by where
    # the nodes feeding them are (fewer crossing arrows)
    ordered = nx.DiGraph()
    place: dict[str, float] = {}
    for number in sorted(set(layers.values())):
        members = [n for n in flow.nodes if layers[n] == number]
        first = {n: i for i, n in enumerate(members)}
        members.sort(key=lambda n: _mean([place[p] for p in flow.predecessors(n) if p in place],
                                         first[n]))
        place.update((n, float(i)) for i, n in enumerate(members))
        ordered.add_nodes_from(members, layer=number)
    ordered.add_edges_from(graph.edges)
    positions = nx.multipartite_layout(ordered, subset_key="layer", align="horizontal")
    by_layer: dict[int, list[float]] = {}
    for node, p in positions.items():
        by_layer.setdefault(layers[node], []).append(float(p[0]))
    # networkx spaces the neighbours of every layer alike: that gap is one column
    gaps = [b - a for xs in by_layer.values() for a, b in zip(sorted(xs), sorted(xs)[1:])]
    unit = min(gaps, default=1.0) or 1.0
    low = min((float(p[0]) for p in positions.values()), default=0.0)
    # neighbours in a layer are one unit apart: one column each
    centres = {node: (MARGIN + BOX_WIDTH / 2 + (float(p[0]) - low) / unit * COLUMN,
                      MARGIN + BOX_HEIGHT / 2 + (layers[node] - min(layers.values())) * ROW)
               for node, p in positions.items()}
    width = max((x for x, _ in centres.values()), default=0) + BOX_WIDTH / 2 + MARGIN
    height = max((y for _, y in centres.values()), default=0) + BOX_HEIGHT / 2 + MARGIN
    return Layout(centres, int(width), int(height))


def _mean(values: list[float], default: float) -> float:
    return sum(values) / len(values) if values else default
