"""Geospatial functions through `asaql run` (a streaming query on the shared Spark session):
the predicates on shapes whose answer is plain from a drawing, a polygon with a hole, and a
LEFT JOIN with a CSV reference table holding WKT geofences; compile-time errors."""

from __future__ import annotations

import json

import pytest

from asaql.compiler.pipeline import compile_query
from asaql.errors import InvalidQueryError
from asaql.run.runner import RunOptions, run

SQUARE = "POLYGON((0 0, 10 0, 10 10, 0 10, 0 0))"
WITH_HOLE = "POLYGON((0 0, 10 0, 10 10, 0 10, 0 0), (4 4, 6 4, 6 6, 4 6, 4 4))"

# (a, b) → ST_WITHIN(a, b), ST_INTERSECTS(a, b), ST_OVERLAPS(a, b)
SHAPES = [
    ("POINT(5 5)", SQUARE, 1, 1, 0),
    ("POINT(5 5)", WITH_HOLE, 0, 0, 0),          # in the hole
    ("POINT(2 2)", WITH_HOLE, 1, 1, 0),
    ("POINT(11 5)", SQUARE, 0, 0, 0),
    ("LINESTRING(1 1, 9 9)", SQUARE, 1, 1, 0),
    ("LINESTRING(5 5, 15 5)", SQUARE, 0, 1, 0),  # leaves the square
    ("POLYGON((2 2, 3 2, 3 3, 2 3, 2 2))", SQUARE, 1, 1, 0),
    ("POLYGON((5 5, 15 5, 15 15, 5 15, 5 5))", SQUARE, 0, 1, 1),
    ("POLYGON((20 20, 30 20, 30 30, 20 30, 20 20))", SQUARE, 0, 0, 0),
    ("POLYGON((-5 -5, 15 -5, 15 15, -5 15, -5 -5))", SQUARE, 0, 1, 0),  # contains it
    ("LINESTRING(0 -5, 0 5)", "LINESTRING(-5 0, 5 0)", 0, 1, 0),
    ("LINESTRING(0 1, 5 1)", "LINESTRING(0 0, 5 0)", 0, 0, 0),
]


def _run(tmp_path, query: str, events: list[dict], references: dict[str, str] | None = None):
    source = tmp_path / "input.jsonl"
    source.write_text("".join(json.dumps(e) + "\n" for e in events))
    output = tmp_path / "out.jsonl"
    compiled = compile_query(query, references=tuple(references or ()))
    run(compiled, RunOptions(inputs={"input": str(source)}, outputs={"out": str(output)},
                             references=references or {}))
    return [json.loads(line) for line in output.read_text().splitlines()]


def test_predicates_on_points_lines_and_polygons(spark, tmp_path):
    events = [{"id": k, "a": a, "b": b} for k, (a, b, *_) in enumerate(SHAPES)]
    rows = _run(tmp_path, "SELECT id, ST_WITHIN(a, b) AS w, ST_INTERSECTS(a, b) AS x, "
                          "ST_OVERLAPS(a, b) AS o INTO out FROM input", events)
    got = {row["id"]: (row["w"], row["x"], row["o"]) for row in rows}
    assert got == {k: tuple(answers) for k, (_, _, *answers) in enumerate(SHAPES)}


def test_a_left_join_with_wkt_geofences_in_csv_keeps_events_outside_every_zone(spark, tmp_path):
    zones = tmp_path / "zones.csv"
    zones.write_text('Zone,Fence\nhole,"{}"\nfar,"{}"\n'.format(
        WITH_HOLE, "POLYGON((100 0, 110 0, 110 10, 100 10, 100 0))"))
    events = [{"id": 1, "lat": 2.0, "lon": 2.0}, {"id": 2, "lat": 5.0, "lon": 5.0},
              {"id": 3, "lat": 5.0, "lon": 105.0}, {"id": 4, "lat": None, "lon": 1.0}]
    rows = _run(tmp_path, "SELECT e.id, z.Zone, ST_DISTANCE(CreatePoint(e.lat, e.lon), "
                          "CreatePoint(0.0, 0.0)) AS metres INTO out FROM input e "
                          "LEFT JOIN Zones z ON ST_WITHIN(CreatePoint(e.lat, e.lon), z.Fence) = 1",
                events, {"Zones": str(zones)})
    zones_of = {row["id"]: row["Zone"] for row in rows}
    assert zones_of == {1: "hole", 2: None, 3: "far", 4: None}
    metres = {row["id"]: row["metres"] for row in rows}
    assert metres[4] is None
    assert 300_000 < metres[1] < 320_000  # (2°, 2°) from (0, 0): about 313 km


@pytest.mark.parametrize("call, message", [
    ("CreatePoint(1.0)", "CREATEPOINT() takes 2 arguments, not 1"),
    ("CreateLineString(CreatePoint(1.0, 2.0))", "CREATELINESTRING() takes at least 2 arguments"),
    ("ST_WITHIN(a)", "ST_WITHIN() takes 2 arguments, not 1"),
])
def test_a_wrong_number_of_arguments_is_an_error_at_its_position(call, message):
    with pytest.raises(InvalidQueryError) as caught:
        compile_query(f"SELECT\n    {call} AS v\nFROM input")
    assert message in str(caught.value)
    assert (caught.value.span.line, caught.value.span.column) == (2, 5)


def _inside(x: float, y: float, ring: list[tuple[float, float]]) -> bool:
    """The crossing-number test, in plain Python: the reference the Spark expressions meet."""
    inside = False
    for (px, py), (qx, qy) in zip(ring, ring[1:]):
        if (py > y) != (qy > y) and x < (qx - px) * (y - py) / (qy - py) + px:
            inside = not inside
    return inside


def test_random_points_in_wkt_geofences_match_a_plain_crossing_number_test(spark, tmp_path):
    import math
    import random

    rng = random.Random(7)
    fences = {}
    for site in range(6):  # 13-sided polygons, as ASA's building outlines, side by side
        cx, cy, r = -122.2 + site * 0.01, 47.6, 0.004 + 0.001 * rng.random()
        ring = [(cx + r * math.cos(2 * math.pi * k / 13) * (1 + 0.3 * rng.random()),
                 cy + r * math.sin(2 * math.pi * k / 13)) for k in range(13)]
        fences[site] = ring + ring[:1]
    sites = tmp_path / "sites.jsonl"
    sites.write_text("".join(json.dumps({"SiteID": s, "Geofence": "POLYGON((" + ", ".join(
        f"{x!r} {y!r}" for x, y in ring) + "))"}) + "\n" for s, ring in fences.items()))
    events = [{"id": i, "pos": {"type": "Point", "coordinates": [
        -122.205 + rng.random() * 0.06, 47.6 + (rng.random() - 0.5) * 0.01]}} for i in range(500)]
    rows = _run(tmp_path, "SELECT e.id, s.SiteID INTO out FROM input e JOIN Sites s "
                          "ON ST_WITHIN(e.pos, s.Geofence) = 1", events, {"Sites": str(sites)})
    expected = {(e["id"], s) for e in events for s, ring in fences.items()
                if _inside(*e["pos"]["coordinates"], ring)}
    assert len(expected) > 100  # the points do fall inside some fences
    assert {(row["id"], row["SiteID"]) for row in rows} == expected
