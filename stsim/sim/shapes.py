"""Planar geometries for relation tasks: validation, printing, and their topological relations.

A geometry travels as a JSON-able dict ``{"type": "Point" | "LineString" | "Polygon",
"coords": [[x, y], ...]}`` (plane units; a Point has one coordinate pair; a Polygon ring is
closed: first pair == last pair, as STARK prints it, Table 19).

Semantics (STARK §2 cites DE-9IM as implemented in ArcGIS).  Gold answers here follow the
OGC Simple Features / DE-9IM definitions as implemented by GEOS (through shapely), evaluated
exactly on the *printed* coordinates (no tolerance):

=============  ===================================================================  ==========
predicate      DE-9IM definition (a against b)                                       ArcGIS
=============  ===================================================================  ==========
equals         interiors intersect, no part of either lies in the other's exterior   same
intersects     not disjoint                                                          same
contains       no point of b in a's exterior, and the interiors intersect            see (1)
within         contains with the arguments swapped                                   see (1)
crosses        interiors meet in a set of lower dimension than the larger operand    same (2)
               (line/line: they meet at a point; line/polygon: part inside, part out)
touches        boundaries meet, interiors do not                                     see (3)
overlaps       same dimension, interiors meet in that dimension, neither contains    same
               the other
=============  ===================================================================  ==========

Where ArcGIS differs from OGC (ArcGIS Pro "Select Layer By Location" documentation):

1. ArcGIS's default *Within/Contains* count a feature lying entirely on the other's boundary
   (e.g. a line along a polygon edge) as within; OGC ("Within (Clementini)" in ArcGIS) does
   not, because the interiors do not meet.  Generated items never place a whole line or point
   on a polygon boundary when asking within/contains, so both readings agree on them.
2. ArcGIS applies an XY tolerance (default 0.001 units) before testing; we do not.  Generated
   near-misses keep a clearance of at least ``MIN_CLEARANCE`` so a tolerance below it does not
   change a label; exact contacts are built on shared printed vertices.
3. Boundaries follow the OGC mod-2 rule: a line's boundary is its two end points (a closed
   line has none), a point has none.  So a point at a line's end *touches* it and is not
   *within* it; a point at an interior vertex is within it and does not touch.

Raises :class:`GeometryError` (a ``ValueError``) for degenerate input: zero-length line
strings, unclosed or self-intersecting polygon rings, too few coordinates, non-finite numbers.
"""
from __future__ import annotations

import math
from typing import Any

import shapely
from shapely.geometry import LineString, Point, Polygon
from shapely.geometry.base import BaseGeometry

GEOMETRY_TYPES = ("Point", "LineString", "Polygon")
PREDICATES = ("equals", "intersects", "contains", "within", "crosses", "touches", "overlaps")

#: Minimum distance of a generated near-miss from contact (plane units), see note 2 above.
MIN_CLEARANCE = 0.005

#: STARK Appendix 7.5, Table 8: predicates that can hold for (first, second) geometry types.
#: (The released ``Spatial_Relation.csv`` also ticks intersects/contains/within for
#: point-point; for two points these coincide with equals, and Table 8 leaves them out.)
TABLE8: dict[tuple[str, str], tuple[str, ...]] = {
    ("Point", "Point"): ("equals",),
    ("Point", "LineString"): ("intersects", "within", "touches"),
    ("Point", "Polygon"): ("intersects", "within", "touches"),
    ("LineString", "Point"): ("intersects", "contains", "touches"),
    ("LineString", "LineString"): PREDICATES,
    ("LineString", "Polygon"): ("intersects", "within", "crosses", "touches"),
    ("Polygon", "Point"): ("intersects", "contains", "touches"),
    ("Polygon", "LineString"): ("intersects", "contains", "crosses", "touches"),
    ("Polygon", "Polygon"): ("equals", "intersects", "contains", "within", "touches", "overlaps"),
}

SHORT = {"Point": "Pt", "LineString": "L", "Polygon": "Pg"}


class GeometryError(ValueError):
    """A geometry is malformed or degenerate; the message says which and why."""


def table8_combinations() -> list[tuple[str, str, str]]:
    """Every (first type, second type, predicate) that STARK Table 8 marks possible (34)."""
    return [(a, b, p) for (a, b), preds in TABLE8.items() for p in preds]


def combo_label(a_type: str, b_type: str, predicate: str) -> str:
    """Short label as in STARK Table 29, e.g. ``L-Pg-crosses``."""
    return f"{SHORT[a_type]}-{SHORT[b_type]}-{predicate}"


def round_coords(coords, decimals: int) -> list[list[float]]:
    """Coordinates rounded to ``decimals`` (the printed values)."""
    return [[round(float(x), decimals), round(float(y), decimals)] for x, y in coords]


def to_shapely(geom: dict[str, Any], where: str = "geometry") -> BaseGeometry:
    """Validate a geometry dict and build the shapely object.

    Raises:
        GeometryError: unknown type, wrong coordinate count, non-finite numbers, a line string
            of zero length (all vertices equal), a polygon ring that is not closed, has fewer
            than 3 distinct vertices, zero area, or intersects itself.
    """
    if not isinstance(geom, dict) or "type" not in geom or "coords" not in geom:
        raise GeometryError(f"{where}: expected {{'type', 'coords'}}, got {geom!r:.80}")
    kind = geom["type"]
    try:
        coords = [(float(x), float(y)) for x, y in geom["coords"]]
    except (TypeError, ValueError):
        raise GeometryError(f"{where}: coordinates must be [x, y] number pairs") from None
    if not all(math.isfinite(v) for c in coords for v in c):
        raise GeometryError(f"{where}: non-finite coordinate")
    if kind == "Point":
        if len(coords) != 1:
            raise GeometryError(f"{where}: a Point has exactly one coordinate pair, got {len(coords)}")
        return Point(coords[0])
    if kind == "LineString":
        if len(coords) < 2:
            raise GeometryError(f"{where}: a LineString needs at least 2 coordinate pairs")
        line = LineString(coords)
        if line.length == 0:
            raise GeometryError(f"{where}: zero-length LineString (all vertices coincide)")
        return line
    if kind == "Polygon":
        if len(coords) < 4:
            raise GeometryError(f"{where}: a Polygon ring needs at least 4 pairs (3 vertices + closing)")
        if coords[0] != coords[-1]:
            raise GeometryError(f"{where}: unclosed Polygon ring (first {coords[0]} != last {coords[-1]})")
        poly = Polygon(coords)
        if len(set(coords)) < 3 or shapely.MultiPoint(coords).convex_hull.area == 0:
            raise GeometryError(f"{where}: degenerate Polygon (zero area: fewer than 3 distinct or all collinear vertices)")
        if not poly.is_valid:
            reason = shapely.is_valid_reason(poly)
            kind = "self-intersecting ring" if "Self-intersection" in reason else "invalid ring"
            raise GeometryError(f"{where}: {kind} in Polygon ({reason})")
        return poly
    raise GeometryError(f"{where}: unknown geometry type {kind!r}; known: {', '.join(GEOMETRY_TYPES)}")


def holds(a: dict[str, Any], b: dict[str, Any], predicate: str) -> bool:
    """Whether ``a predicate b`` holds (OGC/DE-9IM via shapely, exact on the given numbers).

    Raises:
        GeometryError: degenerate geometry, or an unknown predicate.
    """
    if predicate not in PREDICATES:
        raise GeometryError(f"unknown spatial predicate {predicate!r}; known: {', '.join(PREDICATES)}")
    ga, gb = to_shapely(a, "first geometry"), to_shapely(b, "second geometry")
    return bool(getattr(ga, predicate)(gb))


def relate(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The 9-character DE-9IM matrix of ``a`` against ``b``, row-major over (interior,
    boundary, exterior) x (interior, boundary, exterior); cells ``F``, ``0``, ``1``, ``2``."""
    return to_shapely(a, "first geometry").relate(to_shapely(b, "second geometry"))


def fmt_coords(coords, decimals: int) -> str:
    """``[(x1, y1), (x2, y2), ...]`` with fixed decimals (STARK's printed style)."""
    return "[" + ", ".join(f"({x:.{decimals}f}, {y:.{decimals}f})" for x, y in coords) + "]"
