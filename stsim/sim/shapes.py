"""Planar geometries for relation tasks: validation, printing, and their topological relations.

A geometry travels as a JSON-able dict ``{"type": "Point" | "LineString" | "Polygon",
"coords": [[x, y], ...]}`` (plane units; a Point has one coordinate pair; a Polygon ring is
closed: first pair == last pair, as STARK prints it, Table 19).

Semantics (STARK §2 cites DE-9IM as implemented in ArcGIS).  Gold answers here follow the
OGC Simple Features / DE-9IM definitions, evaluated exactly on the *printed* decimal
coordinates (no tolerance):

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
   items keep every vertex at least ``MIN_CLEARANCE`` from the other geometry unless it lies
   on it exactly (:func:`near_misses` is empty), so a tolerance below it does not change a
   label; exact contacts are built on the printed grid (shared vertices, or lattice points
   inside segments).
3. Boundaries follow the OGC mod-2 rule: a line's boundary is its two end points (a closed
   line has none), a point has none.  So a point at a line's end *touches* it and is not
   *within* it; a point at an interior vertex is within it and does not touch.

Decimal exactness.  A printed coordinate such as ``2.1`` has no exact binary float, so GEOS,
exact on the floats it is given, may miss an incidence that holds in decimal arithmetic: the
point (0.7, 0.4) lies on the segment (0, 0)-(2.1, 1.2) (0.7 * 1.2 = 2.1 * 0.4), yet
``LineString([(0, 0), (2.1, 1.2)]).contains(Point(0.7, 0.4))`` is False.  So every
orientation, point-on-segment, collinearity and equality test is made in exact rational
arithmetic (:class:`fractions.Fraction`) on the printed decimal values (the shortest decimal
``repr`` of each float, i.e. the number as printed), and the incidences it finds are handed
to GEOS as shared vertices: each vertex of one geometry that lies in the interior of a segment
of the other (or of a non-adjacent segment of its own) is inserted into that segment
(:func:`exact_pair`).  After that every contact is a vertex-vertex contact, which binary
floats represent exactly, and GEOS (shapely) computes the rest of DE-9IM.  The remaining
configurations are decided by the sign of an orientation determinant that is non-zero in
decimal arithmetic; for coordinates with at most 4 decimals (STARK's and ours) and magnitude
below 1000 it is a non-zero multiple of 1e-8, while rounding the decimals to binary floats moves
it by less than 2e-9, so GEOS's robust orientation test returns the same sign.  (:func:`holds` and :func:`relate` agree with plain
shapely on inputs without such incidences; tests check both.)

Raises :class:`GeometryError` (a ``ValueError``) for degenerate input: zero-length line
strings, unclosed or self-intersecting polygon rings, too few coordinates, non-finite numbers.
"""
from __future__ import annotations

import functools
import math
from fractions import Fraction
from typing import Any

import numpy as np

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


# ----------------------------------------------------------------------------- exact tests
Pt = tuple[float, float]


def dec(v) -> Fraction:
    """The printed decimal value of a coordinate as an exact rational: ``Fraction`` of the
    shortest decimal ``repr`` of the float (``2.1`` -> 21/10, not the binary double near it)."""
    return _dec(float(v))


@functools.lru_cache(maxsize=65536)
def _dec(v: float) -> Fraction:
    return Fraction(repr(v))


def _q(p) -> tuple[Fraction, Fraction]:
    return dec(p[0]), dec(p[1])


def orientation(p, q, r) -> int:
    """Sign of the cross product ``(q - p) x (r - p)`` on the printed decimals, exactly:
    +1 if ``p, q, r`` turn counter-clockwise, -1 clockwise, 0 if collinear.  Points are
    ``(x, y)`` pairs in plane units."""
    (px, py), (qx, qy), (rx, ry) = _q(p), _q(q), _q(r)
    d = (qx - px) * (ry - py) - (qy - py) * (rx - px)
    return (d > 0) - (d < 0)


def collinear(p, q, r) -> bool:
    """Whether three points lie on one line (exact on the printed decimals)."""
    return orientation(p, q, r) == 0


def same_point(p, q) -> bool:
    """Equality of two points on the printed decimals."""
    return _q(p) == _q(q)


def on_segment(p, a, b, interior: bool = False) -> bool:
    """Whether point ``p`` lies on the closed segment ``a``-``b`` (with ``interior=True``: on
    it and different from both end points); exact on the printed decimals."""
    P, A, B = _q(p), _q(a), _q(b)
    if interior and (P == A or P == B):
        return False
    if orientation(p, a, b) != 0:
        return False
    return (min(A[0], B[0]) <= P[0] <= max(A[0], B[0])
            and min(A[1], B[1]) <= P[1] <= max(A[1], B[1]))


def _seg_param(p, a, b) -> Fraction:
    """Position of ``p`` along ``a``-``b`` (0 at a, 1 at b), exact; ``p`` on the segment."""
    P, A, B = _q(p), _q(a), _q(b)
    i = 0 if A[0] != B[0] else 1
    return (P[i] - A[i]) / (B[i] - A[i])


def _near_candidates(verts: np.ndarray, segs: np.ndarray) -> list[tuple[int, int]]:
    """(vertex index, segment index) pairs whose float distance is below a bound far above the
    float error of the printed values (a fast filter before the exact test)."""
    if len(verts) == 0 or len(segs) == 0:
        return []
    a, b = segs[:, 0], segs[:, 1]
    ab = b - a
    L2 = np.maximum(np.sum(ab * ab, axis=1), 1e-300)
    ap = verts[:, None, :] - a[None, :, :]
    t = np.clip(np.sum(ap * ab[None], axis=2) / L2[None], 0.0, 1.0)
    d = np.hypot(*(ap - t[..., None] * ab[None]).transpose(2, 0, 1))
    scale = 1.0 + float(np.max(np.abs(np.concatenate([verts.ravel(), segs.ravel()]))))
    return [tuple(map(int, ij)) for ij in np.argwhere(d <= 1e-9 * scale)]


def _segments(kind: str, coords: list[Pt]) -> list[tuple[Pt, Pt]]:
    return [] if kind == "Point" else list(zip(coords, coords[1:]))


def _vertices(kind: str, coords: list[Pt]) -> list[Pt]:
    return coords[:-1] if kind == "Polygon" else coords


def node(kind: str, coords: list[Pt], others: list[Pt], self_node: bool = False) -> list[Pt]:
    """``coords`` with every point of ``others`` that lies exactly (printed decimals) in the
    interior of one of its segments inserted into that segment, in order along it; with
    ``self_node`` also its own vertices lying inside non-adjacent segments.  (n, 2) in, (m, 2)
    out, m >= n; a Point is returned unchanged."""
    segs = _segments(kind, coords)
    if not segs:
        return coords
    pool = list(dict.fromkeys(others + (coords if self_node else [])))
    cand = _near_candidates(np.asarray(pool, float).reshape(-1, 2), np.asarray(segs, float).reshape(-1, 2, 2))
    extra: dict[int, list[Pt]] = {}
    for vi, si in cand:
        v, (a, b) = pool[vi], segs[si]
        if v == a or v == b:  # equal floats <=> equal printed decimals
            continue
        if on_segment(v, a, b, interior=True):
            extra.setdefault(si, []).append(v)
    if not extra:
        return coords
    out = [coords[0]]
    for si, (a, b) in enumerate(segs):
        if si in extra:
            out += sorted(set(extra[si]), key=lambda v: _seg_param(v, a, b))
        out.append(b)
    return out


def _coords(geom: dict[str, Any]) -> list[Pt]:
    return [(float(x), float(y)) for x, y in geom["coords"]]


def _build(kind: str, coords: list[Pt]) -> BaseGeometry:
    return {"Point": Point, "LineString": LineString, "Polygon": Polygon}[kind](coords if kind != "Point" else coords[0])


def exact_pair(a: dict[str, Any], b: dict[str, Any]) -> tuple[BaseGeometry, BaseGeometry]:
    """Validated shapely geometries of ``a`` and ``b`` in which every incidence that holds on
    the printed decimals (a vertex of one inside a segment of the other) is a shared vertex
    (see the module notes); DE-9IM of the pair is then exact on the printed numbers.

    Raises:
        GeometryError: as :func:`to_shapely` (``a`` is "first geometry", ``b`` "second").
    """
    to_shapely(a, "first geometry"), to_shapely(b, "second geometry")
    ca, cb = _coords(a), _coords(b)
    va, vb = _vertices(a["type"], ca), _vertices(b["type"], cb)
    return (_build(a["type"], node(a["type"], ca, vb)), _build(b["type"], node(b["type"], cb, va)))


def exact_segments(positions, geometry: dict[str, Any]) -> tuple[list[BaseGeometry], BaseGeometry]:
    """:func:`exact_pair` for every segment ``[p_k, p_{k+1}]`` of a path against one geometry
    at once: ``(segment geometries (n-1), geometry)``.  The geometry is noded with every path
    vertex lying inside one of its segments (a vertex inserted where it lies does not change
    the point set, so one noded geometry serves every segment); the geometry is validated once.

    Raises:
        GeometryError: as :func:`to_shapely` for the geometry ("event geometry").
    """
    to_shapely(geometry, "event geometry")
    pts = [(float(x), float(y)) for x, y in positions]
    cg = _coords(geometry)
    vg = _vertices(geometry["type"], cg)
    g = _build(geometry["type"], node(geometry["type"], cg, pts))
    return [LineString(node("LineString", pts[k:k + 2], vg)) for k in range(len(pts) - 1)], g


def incidences(a: dict[str, Any], b: dict[str, Any]) -> dict[str, int]:
    """Exact contacts between two geometries that binary floats do not represent, counted on
    the printed decimals:

    * ``vertex_in_segment``: (vertex of one, segment of the other) with the vertex in the
      segment's interior (not at an end point);
    * ``collinear_overlap``: (segment of a, segment of b) pairs that share a piece of positive
      length without being the same segment.
    """
    ca, cb = _coords(a), _coords(b)
    n_vs = 0
    for (ka, xa), (kb, xb) in (((a["type"], ca), (b["type"], cb)), ((b["type"], cb), (a["type"], ca))):
        segs, verts = _segments(kb, xb), _vertices(ka, xa)
        for vi, si in _near_candidates(np.asarray(verts, float).reshape(-1, 2),
                                       np.asarray(segs, float).reshape(-1, 2, 2)):
            n_vs += on_segment(verts[vi], *segs[si], interior=True)
    n_co = 0
    sa, sb = _segments(a["type"], ca), _segments(b["type"], cb)
    for p, q in sa:
        for r, s in sb:
            if {_q(p), _q(q)} == {_q(r), _q(s)} or not (collinear(p, q, r) and collinear(p, q, s)):
                continue
            lo, hi = max(Fraction(0), min(_seg_param(r, p, q), _seg_param(s, p, q))), \
                min(Fraction(1), max(_seg_param(r, p, q), _seg_param(s, p, q)))
            n_co += hi > lo
    return {"vertex_in_segment": n_vs, "collinear_overlap": n_co}


def _sq_dist(p, a, b) -> Fraction:
    """Squared distance from point ``p`` to the closed segment ``a``-``b``, exact on the
    printed decimals (plane units squared)."""
    P, A, B = _q(p), _q(a), _q(b)
    dx, dy = B[0] - A[0], B[1] - A[1]
    L2 = dx * dx + dy * dy
    t = Fraction(0) if L2 == 0 else min(Fraction(1), max(Fraction(0), ((P[0] - A[0]) * dx + (P[1] - A[1]) * dy) / L2))
    ex, ey = P[0] - A[0] - t * dx, P[1] - A[1] - t * dy
    return ex * ex + ey * ey


def _parts(kind: str, coords: list[Pt]) -> list[tuple[Pt, Pt]]:
    """Segments of a geometry; a Point is the zero-length segment (p, p)."""
    return [(coords[0], coords[0])] if kind == "Point" else _segments(kind, coords)


def near_misses(a: dict[str, Any], b: dict[str, Any], clearance: float = MIN_CLEARANCE) -> list[float]:
    """Distinct distances below ``clearance`` (plane units) between a vertex of one geometry
    and a segment (or the point) of the other that do not touch exactly: ``0 < d < clearance``
    on the printed decimals, smallest first.  Empty when a tolerance-based engine (ArcGIS's XY
    tolerance, default 0.001) below ``clearance`` cannot snap anything the exact rules keep
    apart.  Since the shortest distance between two segments that do not meet is attained at
    an end point of one of them, this covers every segment-segment near miss, including a
    line ending just short of (or just past) another geometry."""
    ca, cb = _coords(a), _coords(b)
    c2 = dec(clearance) ** 2
    out = []
    for (ka, xa), (kb, xb) in (((a["type"], ca), (b["type"], cb)), ((b["type"], cb), (a["type"], ca))):
        verts, segs = _vertices(ka, xa), _parts(kb, xb)
        if not segs:
            continue
        V, S = np.asarray(verts, float).reshape(-1, 2), np.asarray(segs, float).reshape(-1, 2, 2)
        ab = S[:, 1] - S[:, 0]
        L2 = np.maximum(np.sum(ab * ab, axis=1), 1e-300)
        ap = V[:, None, :] - S[None, :, 0, :]
        t = np.clip(np.sum(ap * ab[None], axis=2) / L2[None], 0.0, 1.0)
        d = np.hypot(*(ap - t[..., None] * ab[None]).transpose(2, 0, 1))
        for vi, si in np.argwhere(d < clearance + 1e-9):
            d2 = _sq_dist(verts[vi], *segs[si])
            if 0 < d2 < c2:
                out.append(math.sqrt(d2))
    return sorted(set(out))


def to_shapely(geom: dict[str, Any], where: str = "geometry") -> BaseGeometry:
    """Validate a geometry dict and build the shapely object.  Validity is judged on the
    printed decimals: a ring vertex lying exactly inside a non-adjacent edge makes the ring
    self-touching (invalid) even where the floats miss it.

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
        if not poly.is_valid or not Polygon(node("LineString", coords, [], self_node=True)).is_valid:
            reason = shapely.is_valid_reason(Polygon(node("LineString", coords, [], self_node=True)))
            kind = "self-intersecting ring" if "Self-intersection" in reason else "invalid ring"
            raise GeometryError(f"{where}: {kind} in Polygon ({reason})")
        return poly
    raise GeometryError(f"{where}: unknown geometry type {kind!r}; known: {', '.join(GEOMETRY_TYPES)}")


def holds(a: dict[str, Any], b: dict[str, Any], predicate: str) -> bool:
    """Whether ``a predicate b`` holds (OGC/DE-9IM, exact on the printed decimals: incidences
    in rational arithmetic, the rest by shapely; see :func:`exact_pair`).

    Raises:
        GeometryError: degenerate geometry, or an unknown predicate.
    """
    if predicate not in PREDICATES:
        raise GeometryError(f"unknown spatial predicate {predicate!r}; known: {', '.join(PREDICATES)}")
    ga, gb = exact_pair(a, b)
    return bool(getattr(ga, predicate)(gb))


def relate(a: dict[str, Any], b: dict[str, Any]) -> str:
    """The 9-character DE-9IM matrix of ``a`` against ``b``, row-major over (interior,
    boundary, exterior) x (interior, boundary, exterior); cells ``F``, ``0``, ``1``, ``2``;
    exact on the printed decimals (:func:`exact_pair`)."""
    ga, gb = exact_pair(a, b)
    return ga.relate(gb)


def is_simple_line(geom: dict[str, Any]) -> bool:
    """Whether a LineString does not touch or cross itself, on the printed decimals (OGC
    simple: only consecutive segments share a point, namely their common vertex)."""
    coords = _coords(geom)
    return LineString(node("LineString", coords, [], self_node=True)).is_simple


def fmt_coords(coords, decimals: int) -> str:
    """``[(x1, y1), (x2, y2), ...]`` with fixed decimals (STARK's printed style)."""
    return "[" + ", ".join(f"({x:.{decimals}f}, {y:.{decimals}f})" for x, y in coords) + "]"
