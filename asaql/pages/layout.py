"""Where each box of the job diagram goes: layers top to bottom in the order the data flows
(networkx's topological generations), each layer ordered to cross as few arrows as it can, then
placed by networkx's multipartite layout.

The order is the Sugiyama method's: an arrow spanning several layers gets a waypoint in each
layer it passes (so it runs between boxes, not through them), then sweeps down and up order
each layer by the mean place of its neighbours in the layer before (the barycentre), and
swapping neighbours that cross fewer arrows the other way round finishes it; the order with
the fewest crossings found is kept. The job diagram has a dozen boxes: this takes
milliseconds."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import networkx as nx

from asaql.plan.job_graph import GraphNode, JobGraph

BOX_WIDTH = 240
LINE = 15                # pixels per text line in a box
HEAD = 38                # the tag and title lines
PAD = 8                  # below the last line
MAX_DETAILS = 5          # clause lines shown in a box; the rest on selection
NUMBER_LINES = {"input": 4, "output": 1}  # lines kept for the run's numbers
BOX_HEIGHT = HEAD + PAD  # the smallest box
GAP = 24                 # between two boxes of a layer
ROW_GAP = 48             # between two layers
MARGIN = 16
SWEEPS = 8
SWAP_LIMIT = 150  # links: beyond, the sweeps alone order the layers


@dataclass(frozen=True)
class Layout:
    centres: dict[str, tuple[float, float]]  # box id → its centre, in pixels
    sizes: dict[str, tuple[float, float]]    # box id → (width, height)
    routes: dict[tuple[str, str], tuple[tuple[float, float], ...]]  # arrow → its waypoints
    layers: tuple[tuple[str, ...], ...]      # each layer's boxes and waypoints, in order
    links: tuple[tuple[str, str], ...]       # the arrows cut at the waypoints, layer to layer
    width: int
    height: int
    numbers: bool = True                     # room kept for a run's numbers


def detail_lines(node: GraphNode) -> tuple[str, ...]:
    lines = node.details
    return lines if len(lines) <= MAX_DETAILS else (*lines[:MAX_DETAILS - 1], "…")


def box_height(node: GraphNode, numbers: bool) -> float:
    kept = NUMBER_LINES.get(node.kind, 0) if numbers else 0
    return HEAD + LINE * (len(detail_lines(node)) + kept) + PAD


def layout(graph: JobGraph, numbers: bool = True) -> Layout:
    """`numbers`: keep room in the input and output boxes for a run's numbers."""
    flow = nx.DiGraph()
    flow.add_nodes_from(node.id for node in graph.nodes)
    flow.add_edges_from(graph.edges)
    rank = {}
    for number, generation in enumerate(nx.topological_generations(flow)):
        rank.update(dict.fromkeys(generation, number))
    # an input whose readers are all deep down (reference data) sits just above the first
    for node in flow.nodes:
        if flow.in_degree(node) == 0 and flow.out_degree(node):
            rank[node] = min(rank[after] for after in flow.successors(node)) - 1
    low = min(rank.values(), default=0)
    layers: list[list[str]] = [[] for _ in range(max(rank.values(), default=0) - low + 1)]
    for node in flow.nodes:
        layers[rank[node] - low].append(node)
    links, chains = _waypoints(graph.edges, {n: r - low for n, r in rank.items()}, layers)
    layers = _order(layers, links)
    # networkx places each layer's members one unit apart, centred: a unit is one column
    placed = nx.Graph()
    placed.add_nodes_from(n for members in layers for n in members)
    positions = nx.multipartite_layout(placed, subset_key={
        i: members for i, members in enumerate(layers) if members}, align="horizontal") \
        if len(placed) else {}
    xs = {n: float(p[0]) for n, p in positions.items()}
    gaps = [abs(xs[b] - xs[a]) for members in layers for a, b in zip(members, members[1:])]
    unit = min(gaps, default=1.0) or 1.0
    left = min(xs.values(), default=0.0)
    heights = {n.id: box_height(n, numbers) for n in graph.nodes}
    column = BOX_WIDTH + GAP
    x = {n: MARGIN + BOX_WIDTH / 2 + (v - left) / unit * column for n, v in xs.items()}
    tops, bottoms, top = [], [], MARGIN
    for members in layers:  # each layer as high as its highest box; boxes hang from its top
        tops.append(top)
        bottoms.append(top + max((heights.get(n, 0) for n in members), default=0))
        top = bottoms[-1] + ROW_GAP
    centres = {n.id: (x[n.id], tops[rank[n.id] - low] + heights[n.id] / 2) for n in graph.nodes}
    # an arrow passing a layer runs straight down through it, at its waypoint's place
    routes = {edge: tuple(point for w in chain for point in (
        (x[w], tops[_layer(w, layers)]), (x[w], bottoms[_layer(w, layers)])))
        for edge, chain in chains.items()}
    width = max(x.values(), default=0) + BOX_WIDTH / 2 + MARGIN
    height = max((y + heights[n] / 2 for n, (_, y) in centres.items()), default=0) + MARGIN
    return Layout(centres, {n: (BOX_WIDTH, h) for n, h in heights.items()}, routes,
                  tuple(tuple(m) for m in layers), tuple(links), int(width + 0.5),
                  int(height + 0.5), numbers)


def crossings(layers, links) -> int:
    """How many pairs of arrows cross between neighbouring layers."""
    place, layer = {}, {}
    for number, members in enumerate(layers):
        for i, n in enumerate(members):
            place[n], layer[n] = i, number
    between: dict[int, list[tuple[int, int]]] = {}
    for a, b in links:
        between.setdefault(layer[a], []).append((place[a], place[b]))
    return sum(1 for pairs in between.values() for (a, b), (c, d) in combinations(pairs, 2)
               if (a - c) * (b - d) < 0)


def _layer(node: str, layers) -> int:
    return next(i for i, members in enumerate(layers) if node in members)


def _waypoints(edges, rank: dict, layers: list[list[str]]):
    """Each arrow cut into links between neighbouring layers, with a waypoint in each layer it
    passes; `chains`: arrow → its waypoints."""
    links, chains = [], {}
    for source, target in edges:
        chain = [f"~{source}>{target}:{r}" for r in range(rank[source] + 1, rank[target])]
        for r, point in zip(range(rank[source] + 1, rank[target]), chain):
            layers[r].append(point)
        stops = [source, *chain, target]
        links.extend(zip(stops, stops[1:]))
        if chain:
            chains[(source, target)] = chain
    return links, chains


def _order(layers: list[list[str]], links) -> list[list[str]]:
    above = {n: [a for a, b in links if b == n] for members in layers for n in members}
    below = {n: [b for a, b in links if a == n] for members in layers for n in members}
    best, fewest = [list(m) for m in layers], crossings(layers, links)
    current = [list(m) for m in layers]
    for sweep in range(SWEEPS):
        down = sweep % 2 == 0
        order = range(1, len(current)) if down else range(len(current) - 2, -1, -1)
        for i in order:
            near = current[i - 1] if down else current[i + 1]
            place = {n: p for p, n in enumerate(near)}
            neighbours = above if down else below
            mine = {n: p for p, n in enumerate(current[i])}
            current[i].sort(key=lambda n: _mean([place[m] for m in neighbours[n] if m in place],
                                                mine[n]))
        _swap_neighbours(current, links)
        found = crossings(current, links)
        if found < fewest:
            best, fewest = [list(m) for m in current], found
        if not fewest:
            break
    return best


def _swap_neighbours(layers: list[list[str]], links) -> None:
    """Swap two neighbours of a layer while that crosses fewer arrows."""
    improved = len(links) <= SWAP_LIMIT  # each try counts every crossing again
    while improved:
        improved = False
        for members in layers:
            for i in range(len(members) - 1):
                before = crossings(layers, links)
                members[i], members[i + 1] = members[i + 1], members[i]
                if crossings(layers, links) < before:
                    improved = True
                else:
                    members[i], members[i + 1] = members[i + 1], members[i]


def _mean(values: list[float], default: float) -> float:
    return sum(values) / len(values) if values else default
