"""ASA's geospatial functions as Spark Columns (docs/functions.md, "Geospatial functions").

Everything is a Spark SQL expression (higher-order functions over the coordinate arrays), not
a Python UDF: asaql evaluates the ON, WHERE and SELECT of a JOIN with reference data inside
Spark lambdas, where no Python UDF may run, and a geofence is mostly tested there. The JVM
evaluates them per row in generated code, on every path (general step, native step, joins).

A geography argument is a GeoJSON record (CreatePoint's, or an input's), GeoJSON as JSON
text, or Well-Known Text (`POLYGON((x y, …))`); each is read into one shape,
struct<kind, parts>, where parts is array<array<array<double>>>: a Point is [[[x, y]]], a
LineString [[points]], a Polygon its rings. Coordinates are [longitude, latitude]. Anything
else (a malformed text, an unknown type, a NULL) reads as NULL, and the result is NULL.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from asaql.plan import expressions as E
from asaql.spark.lowering.variants import variant_text

_DEPTH = {"Point": 1, "LineString": 2, "Polygon": 3}  # nesting of GeoJSON's coordinates
_PARTS = T.ArrayType(T.ArrayType(T.ArrayType(T.DoubleType())))
_WKT_KINDS = {"POINT": "Point", "LINESTRING": "LineString", "POLYGON": "Polygon"}
_NUMBER = r"[-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?"

# WGS 84, the ellipsoid of ASA's geodesic distance (ST_DISTANCE's example is Vincenty's
# distance on it to the millimetre); iterations of Vincenty's inverse formula (it converges
# to 1e-12 rad within a handful except for nearly antipodal points).
_A = 6378137.0
_F = 1 / 298.257223563
_B = (1 - _F) * _A
_ITERATIONS = 20


# ---------------------------------------------------------------- values ASA builds

def _point(args, call, scope) -> Column:
    latitude, longitude = args[0].cast("double"), args[1].cast("double")
    point = F.struct(F.lit("Point").alias("type"),
                     F.array(longitude, latitude).alias("coordinates"))
    return F.when(latitude.isNotNull() & longitude.isNotNull(), point)


def _vertices(args, call, scope) -> list[Column]:
    """Each argument's first coordinate pair (the arguments are points)."""
    return [F.get(F.get(geometry(node, arg, scope).getField("parts"), 0), 0)
            for node, arg in zip(call.args, args)]


def _all_present(points: list[Column]) -> Column:
    present = F.lit(True)
    for point in points:
        present = present & point.isNotNull()
    return present


def _line_string(args, call, scope) -> Column:
    points = _vertices(args, call, scope)
    line = F.struct(F.lit("LineString").alias("type"), F.array(*points).alias("coordinates"))
    return F.when(_all_present(points), line)


def _polygon(args, call, scope) -> Column:
    # ASA: the first point is also the last (a closed ring); an open ring is no polygon (NULL)
    points = _vertices(args, call, scope)
    polygon = F.struct(F.lit("Polygon").alias("type"),
                       F.array(F.array(*points)).alias("coordinates"))
    return F.when(_all_present(points) & (points[0] == points[-1]), polygon)


# ---------------------------------------------------------------- reading a geography

def geometry(node, value: Column, scope) -> Column:
    """struct<kind, parts> of a geography argument (NULL when it is none)."""
    kind = _type_of(node, value, scope)
    if isinstance(kind, T.VariantType):  # a record in some events, text in others: each's text
        return _from_text(variant_text(value))
    if isinstance(kind, T.StringType):
        return _from_text(value)
    if isinstance(kind, T.StructType):
        return _from_record(value, kind)
    return F.lit(None).cast(_SHAPE)


_SHAPE = T.StructType([T.StructField("kind", T.StringType()), T.StructField("parts", _PARTS)])
_CREATED = T.StructType([T.StructField("type", T.StringType()),
                         T.StructField("coordinates", T.StringType())])


def _created(depth: int) -> T.StructType:
    """The type of a Create… call's record (coordinates nested `depth` deep)."""
    coordinates: T.DataType = T.DoubleType()
    for _ in range(depth):
        coordinates = T.ArrayType(coordinates)
    return T.StructType([T.StructField("type", T.StringType()),
                         T.StructField("coordinates", coordinates)])


def _type_of(node, value: Column, scope) -> T.DataType | None:
    """The Spark type of an argument. Inside a join's lambda Spark cannot type a column, so a
    reference row's field is typed from the table's schema, and our own calls by name."""
    if isinstance(node, E.FunctionCall) and node.name.name.lower() in _CONSTRUCTORS:
        return _created(_CONSTRUCTORS[node.name.name.lower()])
    if isinstance(node, E.AliasField) and node.alias in scope.alias_schemas:
        kind: T.DataType | None = scope.alias_schemas[node.alias]
        for part in node.path:
            if not isinstance(kind, T.StructType):
                return None
            kind = next((f.dataType for f in kind.fields if f.name.lower() == part.lower()), None)
        return kind
    return scope.type_of(value)


def _shape(kind: Column, parts: Column) -> Column:
    known = kind.isin(*_DEPTH)
    return F.when(known & parts.isNotNull(), F.struct(kind.alias("kind"), parts.alias("parts")))


def _parts_from_json(kind: Column, coordinates: Column) -> Column:
    """GeoJSON's coordinates (JSON text) → parts, by the nesting the type has."""
    return (F.when(kind == "Point", F.array(F.array(
                F.from_json(coordinates, T.ArrayType(T.DoubleType())))))
            .when(kind == "LineString", F.array(
                F.from_json(coordinates, T.ArrayType(T.ArrayType(T.DoubleType())))))
            .when(kind == "Polygon", F.from_json(coordinates, _PARTS)))


def _from_text(text: Column) -> Column:
    """GeoJSON text ('{"type": …}') or Well-Known Text ('POINT(x y)')."""
    record = F.from_json(text, _CREATED)
    geojson = _shape(record.getField("type"),
                     _parts_from_json(record.getField("type"), record.getField("coordinates")))
    name = F.upper(F.regexp_extract(text, r"^\s*([A-Za-z]+)", 1))
    kind = F.lit(None).cast("string")
    for wkt, geojson_kind in _WKT_KINDS.items():
        kind = F.when(name == wkt, F.lit(geojson_kind)).otherwise(kind)
    # 'POLYGON((1 2, 3 4))' → '[[[1,2],[3,4]]]': pairs become arrays, parentheses brackets
    body = F.regexp_replace(text, r"^\s*[A-Za-z]+\s*", "")
    body = F.regexp_replace(body, rf"({_NUMBER})\s+({_NUMBER})", "[$1,$2]")
    body = F.translate(body, "()", "[]")
    # a WKT point has one level more than GeoJSON's ('POINT(1 2)' → '[[1,2]]')
    wkt_parts = F.when(kind == "Point", F.array(
        F.from_json(body, T.ArrayType(T.ArrayType(T.DoubleType()))))) \
        .otherwise(_parts_from_json(kind, body))
    return F.when(F.ltrim(text).startswith("{"), geojson).otherwise(_shape(kind, wkt_parts))


def _from_record(record: Column, kind: T.StructType) -> Column:
    fields = {f.name.lower(): f for f in kind.fields}
    if "type" not in fields or "coordinates" not in fields:
        return F.lit(None).cast(_SHAPE)
    name = record.getField(fields["type"].name).cast("string")
    coordinates = record.getField(fields["coordinates"].name)
    depth, inner = 0, fields["coordinates"].dataType
    while isinstance(inner, T.ArrayType):
        depth, inner = depth + 1, inner.elementType
    if depth == 0 and isinstance(inner, T.StringType):  # inputs mixing types: JSON text
        return _shape(name, _parts_from_json(name, coordinates))
    if depth == 0 or depth > 3 or not isinstance(inner, T.NumericType):
        return F.lit(None).cast(_SHAPE)
    parts = coordinates.cast(T.ArrayType(T.ArrayType(T.ArrayType(T.DoubleType())))
                             if depth == 3 else T.ArrayType(T.ArrayType(T.DoubleType()))
                             if depth == 2 else T.ArrayType(T.DoubleType()))
    for _ in range(3 - depth):
        parts = F.array(parts)
    return _shape(name, parts)


# ---------------------------------------------------------------- planar geometry

def _x(point: Column) -> Column:
    return F.get(point, 0)


def _y(point: Column) -> Column:
    return F.get(point, 1)


def _segments(parts: Column) -> Column:
    """array<struct<ax, ay, bx, by>>: each part's consecutive pairs (a lone point: [p, p])."""
    def of_part(part: Column) -> Column:
        last = F.size(part) - 1
        return F.transform(F.sequence(F.lit(0), F.greatest(last - 1, F.lit(0))), lambda i: F.struct(
            _x(F.get(part, i)).alias("ax"), _y(F.get(part, i)).alias("ay"),
            _x(F.get(part, F.least(i + 1, last))).alias("bx"),
            _y(F.get(part, F.least(i + 1, last))).alias("by")))
    return F.flatten(F.transform(parts, of_part))


def _orient(px, py, qx, qy, rx, ry) -> Column:
    return (qx - px) * (ry - py) - (qy - py) * (rx - px)


def _between(value, a, b) -> Column:
    return (F.least(a, b) <= value) & (value <= F.greatest(a, b))


def _meet(s: Column, t: Column, touching: bool) -> Column:
    """Whether two segments share a point (`touching`), or cross at one inside both."""
    sa = (s["ax"], s["ay"]); sb = (s["bx"], s["by"])
    ta = (t["ax"], t["ay"]); tb = (t["bx"], t["by"])
    d1, d2 = _orient(*ta, *tb, *sa), _orient(*ta, *tb, *sb)
    d3, d4 = _orient(*sa, *sb, *ta), _orient(*sa, *sb, *tb)
    crossing = (d1 * d2 < 0) & (d3 * d4 < 0)
    if not touching:
        return crossing

    def on(d, p, q, r):  # r on the segment pq
        return (d == 0) & _between(r[0], p[0], q[0]) & _between(r[1], p[1], q[1])
    return crossing | on(d1, ta, tb, sa) | on(d2, ta, tb, sb) | on(d3, sa, sb, ta) | \
        on(d4, sa, sb, tb)


def _any_meet(a: Column, b: Column, touching: bool) -> Column:
    return F.exists(_segments(a), lambda s: F.exists(_segments(b),
                                                      lambda t: _meet(s, t, touching)))


def _inside(point: Column, rings: Column) -> Column:
    """Even-odd rule over every ring (a hole's inside is outside)."""
    x, y = _x(point), _y(point)

    def crosses(ring: Column) -> Column:
        edges = F.sequence(F.lit(0), F.greatest(F.size(ring) - 2, F.lit(0)))
        return F.aggregate(edges, F.lit(False), lambda inside, i: inside != F.coalesce(_ray(
            F.get(ring, i), F.get(ring, i + 1), x, y), F.lit(False)))
    return F.aggregate(rings, F.lit(False), lambda inside, ring: inside != crosses(ring))


def _ray(p: Column, q: Column, x: Column, y: Column) -> Column:
    """Whether the ray from (x, y) towards +x crosses the edge pq."""
    px, py, qx, qy = _x(p), _y(p), _x(q), _y(q)
    return ((py > y) != (qy > y)) & (x < (qx - px) * (y - py) / (qy - py) + px)


def _first_vertex(parts: Column) -> Column:
    return F.get(F.get(parts, 0), 0)


def _within(a: Column, b: Column) -> Column:
    """Every vertex of a inside polygon b, and no edge of a crossing one of b."""
    a_parts, b_parts = a["parts"], b["parts"]
    inside = F.forall(F.flatten(a_parts), lambda v: _inside(v, b_parts))
    return (b["kind"] == "Polygon") & inside & ~_any_meet(a_parts, b_parts, touching=False)


def _intersects(a: Column, b: Column) -> Column:
    a_parts, b_parts = a["parts"], b["parts"]
    # no boundaries meet: one can still lie inside the other polygon
    return _any_meet(a_parts, b_parts, touching=True) | \
        ((b["kind"] == "Polygon") & _inside(_first_vertex(a_parts), b_parts)) | \
        ((a["kind"] == "Polygon") & _inside(_first_vertex(b_parts), a_parts))


def _overlaps(a: Column, b: Column) -> Column:
    """Two polygons whose insides share a part, neither within the other: their edges cross,
    or one has vertices both inside and outside the other."""
    a_parts, b_parts = a["parts"], b["parts"]

    def straddles(p: Column, q: Column) -> Column:
        return F.exists(F.flatten(p), lambda v: _inside(v, q)) & \
            F.exists(F.flatten(p), lambda v: ~_inside(v, q))
    polygons = (a["kind"] == "Polygon") & (b["kind"] == "Polygon")
    return polygons & (_any_meet(a_parts, b_parts, touching=False) | straddles(a_parts, b_parts)
                       | straddles(b_parts, a_parts))


def _predicate(test):
    """1 or 0 (ASA's bit, written as a number as ASA's examples show); NULL for a NULL."""
    def lowering(args, call, scope) -> Column:
        a, b = (geometry(node, arg, scope) for node, arg in zip(call.args, args))
        return _let(F.struct(a.alias("a"), b.alias("b")), lambda g: F.when(
            g["a"].isNotNull() & g["b"].isNotNull(),
            F.coalesce(test(g["a"], g["b"]), F.lit(False)).cast("bigint")))
    return lowering


# ---------------------------------------------------------------- geodesic distance

def _let(value: Column, body) -> Column:
    """body(v) with `value` bound to a lambda variable: Spark copies an expression wherever it
    is used, and the formulas below use each term many times (an exponential tree otherwise)."""
    return F.get(F.transform(F.array(value), body), 0)


def _terms(lam: Column, u: Column, body) -> Column:
    """Vincenty's terms for the longitude difference `lam` on the auxiliary sphere."""
    su1, cu1, su2, cu2 = u["su1"], u["cu1"], u["su2"], u["cu2"]

    def with_sines(a: Column) -> Column:
        ss, cs = a["ss"], a["cs"]
        sa = cu1 * cu2 * a["sl"] / ss
        return _let(F.struct(ss.alias("ss"), cs.alias("cs"), F.atan2(ss, cs).alias("sigma"),
                             sa.alias("sa"), (1 - sa * sa).alias("c2a")), lambda b: _let(
            b.withField("c2sm", F.when(b["c2a"] == 0, F.lit(0.0))  # on the equator: 0
                        .otherwise(cs - 2 * su1 * su2 / b["c2a"])), body))
    sines = F.struct(F.sin(lam).alias("sl"), F.cos(lam).alias("cl"))
    return _let(sines, lambda s: _let(F.struct(
        F.sqrt(F.pow(cu2 * s["sl"], 2) + F.pow(cu1 * su2 - su1 * cu2 * s["cl"], 2)).alias("ss"),
        (su1 * su2 + cu1 * cu2 * s["cl"]).alias("cs"), s["sl"].alias("sl")), with_sines))


def geodesic_distance(lon1: Column, lat1: Column, lon2: Column, lat2: Column) -> Column:
    """Metres between two points on the WGS 84 ellipsoid (Vincenty's inverse formula)."""
    reduced = F.struct(
        F.radians(lon2 - lon1).alias("L"),
        F.atan((1 - _F) * F.tan(F.radians(lat1))).alias("u1"),
        F.atan((1 - _F) * F.tan(F.radians(lat2))).alias("u2"))

    def solve(r: Column) -> Column:
        u = F.struct(F.sin(r["u1"]).alias("su1"), F.cos(r["u1"]).alias("cu1"),
                     F.sin(r["u2"]).alias("su2"), F.cos(r["u2"]).alias("cu2"))
        return _let(u, lambda u: _distance_on(r["L"], u))
    distance = _let(reduced, solve)
    same = (lon1 == lon2) & (lat1 == lat2)
    return F.when(same, F.lit(0.0)).otherwise(distance)


def _distance_on(L: Column, u: Column) -> Column:
    def step(lam: Column, _) -> Column:
        def next_lambda(t: Column) -> Column:
            c = _F / 16 * t["c2a"] * (4 + _F * (4 - 3 * t["c2a"]))
            return L + (1 - c) * _F * t["sa"] * (t["sigma"] + c * t["ss"] * (
                t["c2sm"] + c * t["cs"] * (-1 + 2 * t["c2sm"] * t["c2sm"])))
        return _terms(lam, u, next_lambda)

    def length(t: Column) -> Column:
        u_sq = t["c2a"] * (_A * _A - _B * _B) / (_B * _B)
        return _let(F.struct(
            (1 + u_sq / 16384 * (4096 + u_sq * (-768 + u_sq * (320 - 175 * u_sq)))).alias("A"),
            (u_sq / 1024 * (256 + u_sq * (-128 + u_sq * (74 - 47 * u_sq)))).alias("B")),
            lambda k: _B * k["A"] * (t["sigma"] - _delta(k["B"], t)))

    lam = F.aggregate(F.sequence(F.lit(1), F.lit(_ITERATIONS)), L, step)
    return _let(lam, lambda lam: _terms(lam, u, length))


def _delta(big_b: Column, t: Column) -> Column:
    c2sm, ss, cs = t["c2sm"], t["ss"], t["cs"]
    return big_b * ss * (c2sm + big_b / 4 * (cs * (-1 + 2 * c2sm * c2sm) - big_b / 6 * c2sm * (
        -3 + 4 * ss * ss) * (-3 + 4 * c2sm * c2sm)))


def _distance(args, call, scope) -> Column:
    a, b = (geometry(node, arg, scope) for node, arg in zip(call.args, args))

    def measure(g: Column) -> Column:
        a, b = g["a"], g["b"]
        p, q = _first_vertex(a["parts"]), _first_vertex(b["parts"])
        points = (a["kind"] == "Point") & (b["kind"] == "Point")
        # ASA: 0 with polygons; a line has no point-to-point distance either (0)
        return F.when(a.isNotNull() & b.isNotNull(), F.when(
            points, geodesic_distance(_x(p), _y(p), _x(q), _y(q))).otherwise(F.lit(0.0)))
    return _let(F.struct(a.alias("a"), b.alias("b")), measure)


_CONSTRUCTORS = {"createpoint": 1, "createlinestring": 2, "createpolygon": 3}  # → nesting

GEO_FUNCTIONS = {
    "createpoint": _point,
    "createlinestring": _line_string,
    "createpolygon": _polygon,
    "st_distance": _distance,
    "st_within": _predicate(_within),
    "st_intersects": _predicate(_intersects),
    "st_overlaps": _predicate(_overlaps),
}
