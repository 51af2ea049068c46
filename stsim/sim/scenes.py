"""Constructed geometry pairs ("scenes") for spatial relation tasks, on printed coordinates.

Each scene builds two geometries in a known configuration: sharing a vertex, one inside the
other, crossing, a near miss at :data:`~stsim.sim.shapes.MIN_CLEARANCE` or more, far apart...
Every vertex is rounded to the printed decimals when it is created.  Geometries that must
touch share those rounded vertices, or meet at a *lattice point* inside a segment: a segment
``a -> a + n * step`` with ``step`` a whole number of printed units (:meth:`Builder.lattice`)
holds the printed points ``a + k * step`` (0 < k < n) exactly, though binary floats do not
(these are the hardest honest cases: a point inside a segment, collinear overlaps, polygons
touching at a point that is not a vertex of both).  Which predicates a scene satisfies is never
assumed: generators evaluate the predicate exactly on the printed decimals
(:func:`~stsim.sim.shapes.holds`) and keep or redraw (see :func:`draw_pair`); every drawn pair
also keeps the clearance of :func:`~stsim.sim.shapes.near_misses`.

Geometry types are ``Point``, ``LineString``, ``Polygon``; scenes are written for one order of
the pair (the *canonical* order below) and reversed by swapping operands.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from .shapes import MIN_CLEARANCE, GeometryError, holds, is_simple_line, near_misses, to_shapely

Geom = dict[str, Any]


class Builder:
    """Random primitives on the printed grid (``decimals`` places), plane ``[0, 10]^2``.

    Every method returns coordinates already rounded to the printed decimals."""

    def __init__(self, rng: np.random.Generator, decimals: int):
        self.rng, self.d = rng, decimals

    def r(self, p) -> list[float]:
        return [round(float(p[0]), self.d), round(float(p[1]), self.d)]

    def delta(self) -> float:
        return float(self.rng.uniform(MIN_CLEARANCE * 1.2, 0.05))

    def polygon(self) -> tuple[list[list[float]], list[float]]:
        """Convex polygon: 4-7 vertices on a circle (jittered angles); returns (ring, centre)."""
        u = self.rng.uniform
        c = np.array([u(2.5, 7.5), u(2.5, 7.5)])
        rad, m = u(0.8, 2.0), int(self.rng.integers(4, 8))
        ang = np.sort((np.arange(m) + u(-0.3, 0.3, m)) * 2 * np.pi / m + u(0, 2 * np.pi))
        ring = [self.r(c + rad * np.array([math.cos(a), math.sin(a)])) for a in ang]
        return ring + [ring[0]], self.r(c)

    def line(self, start=None, k=None) -> list[list[float]]:
        """Open polyline of 3-5 vertices with moderate turns (steps 0.6-1.8)."""
        u = self.rng.uniform
        p = np.array(start if start is not None else [u(1.5, 8.5), u(1.5, 8.5)], float)
        k = k or int(self.rng.integers(3, 6))
        head = u(0, 2 * np.pi)
        pts = [self.r(p)]
        for _ in range(k - 1):
            head += u(-1.0, 1.0)
            p = p + u(0.6, 1.8) * np.array([math.cos(head), math.sin(head)])
            pts.append(self.r(p))
        return pts

    def inside(self, ring, centre) -> list[float]:
        """A point well inside a convex ring (convex combination of centre and a fan triangle)."""
        i = int(self.rng.integers(0, len(ring) - 1))
        a, b, c = np.array(centre), np.array(ring[i]), np.array(ring[i + 1])
        s, t = self.rng.uniform(0.05, 0.45, 2)
        return self.r(a + s * (b - a) + t * (c - a))

    def lattice(self, a, b, n: int | None = None) -> tuple[list[float], list[list[float]]]:
        """A segment from printed point ``a`` towards ``b`` that holds printed points inside:
        ``b`` is replaced by ``a + n * step``, ``step`` the nearest whole number of printed units
        to ``(b - a) / n`` (``n`` in 3..7 if not given), so ``b`` moves by at most ``n / 2``
        printed units.  Returns ``(new b, [a + k * step for k = 1..n-1])``, exact decimals."""
        n = n or int(self.rng.integers(3, 8))
        u = 10 ** self.d
        A = [int(round(v * u)) for v in a]
        step = [int(round((b[i] * u - A[i]) / n)) for i in (0, 1)]
        if step == [0, 0]:
            step = [1, 0]
        pt = [[(A[0] + k * step[0]) / u, (A[1] + k * step[1]) / u] for k in range(n + 1)]
        return pt[n], pt[1:n]

    def lattice_line(self) -> tuple[list[list[float]], int, list[list[float]]]:
        """:meth:`line` with one segment ``k`` made a :meth:`lattice` segment; returns
        ``(line, k, interior lattice points of segment k in order)``."""
        ln = self.line()
        k = int(self.rng.integers(0, len(ln) - 1))
        ln[k + 1], pts = self.lattice(ln[k], ln[k + 1])
        return ln, k, pts

    def lattice_polygon(self) -> tuple[list[list[float]], list[float], int, list[list[float]]]:
        """:meth:`polygon` with edge ``i`` made a :meth:`lattice` segment; returns
        ``(ring, centre, i, interior lattice points of edge i in order)``."""
        ring, c = self.polygon()
        m = len(ring) - 1
        i = int(self.rng.integers(0, m))
        end, pts = self.lattice(ring[i], ring[i + 1])
        ring[i + 1] = end
        if i + 1 == m:
            ring[0] = end
        return ring, c, i, pts

    def outward(self, ring, centre, i, dist) -> list[float]:
        """Vertex ``i`` pushed radially outward by ``dist`` (outside a convex circle polygon)."""
        v, c = np.array(ring[i]), np.array(centre)
        d = (v - c) / np.linalg.norm(v - c)
        return self.r(v + d * dist)


def _pt(p) -> Geom:
    return {"type": "Point", "coords": [list(p)]}


def _ln(ps) -> Geom:
    return {"type": "LineString", "coords": [list(p) for p in ps]}


def _pg(ring) -> Geom:
    return {"type": "Polygon", "coords": [list(p) for p in ring]}


# --------------------------------------------------------------------------- point / point
def _pp_same(b: Builder):
    p = b.r(b.rng.uniform(0.5, 9.5, 2))
    return _pt(p), _pt(p)


def _pp_near(b: Builder):
    p = np.array(b.r(b.rng.uniform(0.5, 9.5, 2)))
    ang = b.rng.uniform(0, 2 * np.pi)
    return _pt(p.tolist()), _pt(b.r(p + b.delta() * np.array([math.cos(ang), math.sin(ang)])))


def _pp_far(b: Builder):
    return _pt(b.r(b.rng.uniform(0.5, 9.5, 2))), _pt(b.r(b.rng.uniform(0.5, 9.5, 2)))


# --------------------------------------------------------------------------- point / line
def _pl_end(b):
    ln = b.line()
    return _pt(ln[0] if b.rng.random() < 0.5 else ln[-1]), _ln(ln)


def _pl_inner_vertex(b):
    ln = b.line()
    return _pt(ln[int(b.rng.integers(1, len(ln) - 1))]), _ln(ln)


def _pl_near(b):
    """A point just off a vertex, on the side away from the vertex's segments (a random
    direction could land it beside the next segment, closer than the clearance)."""
    ln = b.line()
    i = int(b.rng.integers(0, len(ln)))
    return _pt(b.r(np.array(ln[i]) + b.delta() * away_direction(b, ln, i))), _ln(ln)


def _pl_in_segment(b):
    """A point inside a segment (a lattice point, not a vertex): within, not touches."""
    ln, k, pts = b.lattice_line()
    return _pt(pts[int(b.rng.integers(0, len(pts)))]), _ln(ln)


def _pl_far(b):
    return _pt(b.r(b.rng.uniform(0.5, 9.5, 2))), _ln(b.line())


# --------------------------------------------------------------------------- point / polygon
def _ppg_inside(b):
    ring, c = b.polygon()
    return _pt(b.inside(ring, c)), _pg(ring)


def _ppg_vertex(b):
    ring, c = b.polygon()
    return _pt(ring[int(b.rng.integers(0, len(ring) - 1))]), _pg(ring)


def _ppg_near(b):
    ring, c = b.polygon()
    return _pt(b.outward(ring, c, int(b.rng.integers(0, len(ring) - 1)), b.delta())), _pg(ring)


def _ppg_in_edge(b):
    """A point inside a polygon edge (not a vertex): touches, not within."""
    ring, c, i, pts = b.lattice_polygon()
    return _pt(pts[int(b.rng.integers(0, len(pts)))]), _pg(ring)


def _ppg_far(b):
    ring, c = b.polygon()
    return _pt(b.outward(ring, c, int(b.rng.integers(0, len(ring) - 1)), b.rng.uniform(0.5, 2))), _pg(ring)


# --------------------------------------------------------------------------- line / line
def _ll_same(b):
    ln = b.line()
    other = ln[::-1] if b.rng.random() < 0.5 else ln
    return _ln(ln), _ln(other)


def _ll_sub(b):
    """b is a proper sub-path of a (shared vertices): a contains b."""
    ln = b.line(k=int(b.rng.integers(4, 6)))
    i = int(b.rng.integers(0, len(ln) - 2))
    j = int(b.rng.integers(i + 2, len(ln) + 1))
    if i == 0 and j == len(ln):
        j -= 1
    return _ln(ln), _ln(ln[i:j])


def _ll_super(b):
    a, sub = _ll_sub(b)
    return sub, a


def _ll_partial(b):
    """b shares a run of a's segments then leaves it: 1-dimensional partial overlap."""
    ln = b.line(k=int(b.rng.integers(4, 6)))
    i = int(b.rng.integers(1, len(ln) - 1))
    shared = ln[i - 1:i + 1] if b.rng.random() < 0.5 else ln[max(0, i - 2):i + 1]
    end = np.array(shared[-1])
    prev = np.array(shared[-2])
    d = end - prev
    turn = b.rng.choice([-1, 1]) * b.rng.uniform(0.6, 1.4)
    c, s = math.cos(turn), math.sin(turn)
    q = end + np.array([c * d[0] - s * d[1], s * d[0] + c * d[1]]) * b.rng.uniform(0.4, 1.0)
    return _ln(ln), _ln(shared + [b.r(q)])


def segment_crossing(b: Builder, ln, k: int) -> list[list[float]]:
    """A two-vertex line crossing segment ``k`` of polyline ``ln`` transversally near its
    middle (0.2-0.6 units each side); the crossing point is generic, not a vertex."""
    p, q = np.array(ln[k]), np.array(ln[k + 1])
    m = p + b.rng.uniform(0.3, 0.7) * (q - p)
    n = np.array([-(q - p)[1], (q - p)[0]]) / np.linalg.norm(q - p)
    tilt = b.rng.uniform(-0.5, 0.5)
    n = np.array([math.cos(tilt) * n[0] - math.sin(tilt) * n[1], math.sin(tilt) * n[0] + math.cos(tilt) * n[1]])
    return [b.r(m - b.rng.uniform(0.2, 0.6) * n), b.r(m + b.rng.uniform(0.2, 0.6) * n)]


def _ll_cross(b):
    ln = b.line()
    return _ln(ln), _ln(segment_crossing(b, ln, int(b.rng.integers(0, len(ln) - 1))))


def away_direction(b: Builder, ln, i: int) -> np.ndarray:
    """Unit vector (2,) leaving vertex ``i`` of polyline ``ln`` away from its neighbouring
    segments (opposite their mean direction, +-0.4 rad jitter)."""
    v = np.array(ln[i])
    dirs = [np.array(ln[j]) - v for j in (i - 1, i + 1) if 0 <= j < len(ln)]
    s = sum(d / np.linalg.norm(d) for d in dirs)
    if len(dirs) == 2 and np.linalg.norm(s) < 1e-6:
        s = np.array([-dirs[0][1], dirs[0][0]])
    out = -s / np.linalg.norm(s)
    ang = b.rng.uniform(-0.4, 0.4)
    return np.array([math.cos(ang) * out[0] - math.sin(ang) * out[1], math.sin(ang) * out[0] + math.cos(ang) * out[1]])


def _ll_end_touch(b):
    """b starts at one of a's vertices (an end or an interior vertex) and leaves on the outer side."""
    ln = b.line()
    i = int(b.rng.choice([0, len(ln) - 1, int(b.rng.integers(1, len(ln) - 1))]))
    d = away_direction(b, ln, i)
    start = np.array(ln[i])
    other = b.line(start=start + d * b.rng.uniform(0.5, 1.2), k=2)
    return _ln(ln), _ln([ln[i]] + other)


def _ll_near(b):
    ln = b.line()
    i = int(b.rng.integers(0, len(ln)))
    d = away_direction(b, ln, i)
    start = np.array(ln[i]) + d * b.delta()
    return _ln(ln), _ln([b.r(start), b.r(start + d * b.rng.uniform(0.5, 1.5))])


def _ll_nudged(b):
    """b is a with one end vertex moved a little: nearly equal."""
    ln = b.line()
    other = [list(p) for p in ln]
    j = 0 if b.rng.random() < 0.5 else len(ln) - 1
    ang = b.rng.uniform(0, 2 * np.pi)
    other[j] = b.r(np.array(ln[j]) + b.delta() * np.array([math.cos(ang), math.sin(ang)]))
    return _ln(ln), _ln(other)


def _two(b, pts) -> tuple[int, int]:
    i, j = sorted(int(v) for v in b.rng.choice(len(pts), 2, replace=False))
    return i, j


def _ll_collinear_sub(b):
    """b runs along part of one of a's segments, between two of its lattice points (or from
    its start vertex to one): a contains b, though no vertex of b is a vertex of a."""
    ln, k, pts = b.lattice_line()
    run = [ln[k]] + pts if b.rng.random() < 0.3 else pts
    if len(run) < 2:
        run = [ln[k]] + pts
    i, j = _two(b, run)
    seg = [run[i], run[j]]
    return _ln(ln), _ln(seg[::-1] if b.rng.random() < 0.5 else seg)


def _ll_collinear_partial(b):
    """b starts at a lattice point inside a's segment k and runs straight on past its vertex
    k + 1 (where a turns or ends): they overlap along a collinear piece."""
    ln, k, pts = b.lattice_line()
    start = pts[int(b.rng.integers(0, len(pts)))]
    p, q = np.array(ln[k]), np.array(ln[k + 1])
    u = 10 ** b.d
    step = np.rint((np.array(pts[0]) - p) * u).astype(int)
    ahead = int(b.rng.integers(1, 4))
    end = [(int(round(q[0] * u)) + ahead * int(step[0])) / u, (int(round(q[1] * u)) + ahead * int(step[1])) / u]
    seg = [start, end]
    return _ln(ln), _ln(seg[::-1] if b.rng.random() < 0.5 else seg)


def _ll_collinear_equal(b):
    """b is a with extra vertices at lattice points of one segment: equal point sets."""
    ln, k, pts = b.lattice_line()
    extra = [pts[i] for i in sorted(b.rng.choice(len(pts), int(b.rng.integers(1, len(pts) + 1)), replace=False))]
    other = ln[:k + 1] + extra + ln[k + 1:]
    return _ln(ln), _ln(other[::-1] if b.rng.random() < 0.5 else other)


def _ll_in_segment_touch(b):
    """b starts at a lattice point inside a's segment and leaves to one side: touches."""
    ln, k, pts = b.lattice_line()
    m = np.array(pts[int(b.rng.integers(0, len(pts)))])
    d = np.array(ln[k + 1]) - np.array(ln[k])
    n = np.array([-d[1], d[0]]) / np.linalg.norm(d) * b.rng.choice([-1, 1])
    other = b.line(start=m + n * b.rng.uniform(0.5, 1.2), k=2)
    return _ln(ln), _ln([b.r(m)] + other)


def _ll_in_segment_cross(b):
    """b passes through a lattice point inside a's segment at one of its own vertices, from
    one side to the other: crosses at a point that is a vertex of b only."""
    ln, k, pts = b.lattice_line()
    m = np.array(pts[int(b.rng.integers(0, len(pts)))])
    d = np.array(ln[k + 1]) - np.array(ln[k])
    n = np.array([-d[1], d[0]]) / np.linalg.norm(d)
    t = d / np.linalg.norm(d)
    return _ln(ln), _ln([b.r(m - n * b.rng.uniform(0.3, 0.8) + t * b.rng.uniform(-0.3, 0.3)), b.r(m),
                         b.r(m + n * b.rng.uniform(0.3, 0.8) + t * b.rng.uniform(-0.3, 0.3))])


def _ll_far(b):
    return _ln(b.line()), _ln(b.line())


# --------------------------------------------------------------------------- line / polygon
def _lpg_inside(b):
    ring, c = b.polygon()
    return _ln([b.inside(ring, c) for _ in range(int(b.rng.integers(2, 4)))]), _pg(ring)


def _lpg_inside_to_vertex(b):
    ring, c = b.polygon()
    return _ln([b.inside(ring, c), ring[int(b.rng.integers(0, len(ring) - 1))]]), _pg(ring)


def _lpg_crossing(b):
    ring, c = b.polygon()
    i = int(b.rng.integers(0, len(ring) - 1))
    mid = 0.5 * (np.array(ring[i]) + np.array(ring[i + 1]))
    out = np.array(c) + (mid - np.array(c)) * b.rng.uniform(1.3, 2.0)
    start = b.inside(ring, c) if b.rng.random() < 0.6 else b.r(np.array(c) - (mid - np.array(c)) * b.rng.uniform(1.3, 2.0))
    return _ln([start, b.r(out)]), _pg(ring)


def _lpg_outside_to_vertex(b):
    ring, c = b.polygon()
    i = int(b.rng.integers(0, len(ring) - 1))
    far = b.outward(ring, c, i, b.rng.uniform(0.4, 1.5))
    return _ln([far, ring[i]] if b.rng.random() < 0.5 else [ring[i], far]), _pg(ring)


def _lpg_to_edge(b):
    """A line from inside (within) or outside (touches) to a lattice point inside an edge."""
    ring, c, i, pts = b.lattice_polygon()
    m = pts[int(b.rng.integers(0, len(pts)))]
    if b.rng.random() < 0.5:
        other = b.inside(ring, c)
    else:
        other = b.r(np.array(c) + (np.array(m) - np.array(c)) * b.rng.uniform(1.3, 2.0))
    return _ln([other, m] if b.rng.random() < 0.5 else [m, other]), _pg(ring)


def _lpg_through_edge_point(b):
    """A line from outside to inside with a vertex at a lattice point inside an edge: crosses."""
    ring, c, i, pts = b.lattice_polygon()
    m = np.array(pts[int(b.rng.integers(0, len(pts)))])
    out = b.r(np.array(c) + (m - np.array(c)) * b.rng.uniform(1.3, 2.0))
    ln = [out, b.r(m), b.inside(ring, c)]
    return _ln(ln if b.rng.random() < 0.5 else ln[::-1]), _pg(ring)


def _lpg_along_edge(b):
    """A line along part of an edge (between lattice points) that then turns inward (within)
    or outward (touches in a line).  Never a line lying wholly in the boundary, where OGC and
    ArcGIS's default within differ (see :mod:`stsim.sim.shapes`)."""
    ring, c, i, pts = b.lattice_polygon()
    if len(pts) < 2:
        pts = [ring[i]] + pts
    j, k = _two(b, pts)
    run = [pts[j], pts[k]] if b.rng.random() < 0.5 else [pts[k], pts[j]]
    if b.rng.random() < 0.5:
        turn = b.inside(ring, c)
    else:
        turn = b.r(np.array(c) + (np.array(run[1]) - np.array(c)) * b.rng.uniform(1.3, 2.0))
    ln = run + [turn]
    return _ln(ln if b.rng.random() < 0.5 else ln[::-1]), _pg(ring)


def _lpg_near(b):
    ring, c = b.polygon()
    i = int(b.rng.integers(0, len(ring) - 1))
    return _ln([b.outward(ring, c, i, b.rng.uniform(0.4, 1.5)), b.outward(ring, c, i, b.delta())]), _pg(ring)


def _lpg_far(b):
    ring, c = b.polygon()
    i = int(b.rng.integers(0, len(ring) - 1))
    return _ln([b.outward(ring, c, i, b.rng.uniform(1.5, 3.0)), b.outward(ring, c, i, b.rng.uniform(0.3, 1.0))]), _pg(ring)


# --------------------------------------------------------------------------- polygon / polygon
def _scaled(b, ring, c, s):
    c = np.array(c)
    pts = [b.r(c + s * (np.array(p) - c)) for p in ring[:-1]]
    return pts + [pts[0]]


def _pgpg_same(b):
    ring, _ = b.polygon()
    verts = ring[:-1]
    k = int(b.rng.integers(0, len(verts)))
    rot = verts[k:] + verts[:k]
    if b.rng.random() < 0.5:
        rot = rot[::-1]
    return _pg(ring), _pg(rot + [rot[0]])


def _pgpg_inner(b):
    ring, c = b.polygon()
    return _pg(ring), _pg(_scaled(b, ring, c, b.rng.uniform(0.3, 0.85)))


def _pgpg_outer(b):
    a, inner = _pgpg_inner(b)
    return inner, a


def _pgpg_vertex_touch(b):
    """Point reflection of a through one of its vertices: convex, so they share only that vertex."""
    ring, _ = b.polygon()
    v = np.array(ring[int(b.rng.integers(0, len(ring) - 1))])
    refl = [b.r(2 * v - np.array(p)) for p in ring[:-1]]
    return _pg(ring), _pg(refl + [refl[0]])


def _pgpg_edge_touch(b):
    """A triangle on the outer side of one edge, sharing the whole edge."""
    ring, c = b.polygon()
    i = int(b.rng.integers(0, len(ring) - 1))
    p, q = np.array(ring[i]), np.array(ring[i + 1])
    mid = 0.5 * (p + q)
    w = b.r(mid + (mid - np.array(c)) / np.linalg.norm(mid - np.array(c)) * b.rng.uniform(0.3, 1.2))
    tri = [ring[i + 1], ring[i], w]
    return _pg(ring), _pg(tri + [tri[0]])


def _pgpg_shifted(b):
    ring, c = b.polygon()
    rad = np.linalg.norm(np.array(ring[0]) - np.array(c))
    ang = b.rng.uniform(0, 2 * np.pi)
    off = rad * b.rng.uniform(0.3, 1.2) * np.array([math.cos(ang), math.sin(ang)])
    moved = [b.r(np.array(p) + off) for p in ring[:-1]]
    return _pg(ring), _pg(moved + [moved[0]])


def _pgpg_nudged(b):
    """b is a with one vertex moved outward or inward a little: nearly equal."""
    ring, c = b.polygon()
    i = int(b.rng.integers(0, len(ring) - 1))
    verts = [list(p) for p in ring[:-1]]
    verts[i] = b.outward(ring, c, i, b.delta() * (1 if b.rng.random() < 0.5 else -1))
    return _pg(ring), _pg(verts + [verts[0]])


def _pgpg_near(b):
    a, touch = _pgpg_vertex_touch(b)
    ring = a["coords"]
    cx, cy = np.mean(np.array(ring[:-1]), axis=0)
    t = np.array(touch["coords"][:-1])
    d = np.mean(t, axis=0) - np.array([cx, cy])
    d = d / np.linalg.norm(d) * b.delta()
    moved = [b.r(p + d) for p in t]
    return a, _pg(moved + [moved[0]])


def _outer_normal(ring, c, i) -> np.ndarray:
    p, q = np.array(ring[i]), np.array(ring[i + 1])
    n = np.array([-(q - p)[1], (q - p)[0]]) / np.linalg.norm(q - p)
    return n if np.dot(n, 0.5 * (p + q) - np.array(c)) > 0 else -n


def _pgpg_edge_point_touch(b):
    """A triangle outside a with one vertex at a lattice point inside a's edge: they touch at
    a point that is a vertex of the triangle only."""
    ring, c, i, pts = b.lattice_polygon()
    m = np.array(pts[int(b.rng.integers(0, len(pts)))])
    n = _outer_normal(ring, c, i)
    t = np.array([-n[1], n[0]])
    h, w = b.rng.uniform(0.3, 1.2), b.rng.uniform(0.2, 0.8)
    tri = [b.r(m), b.r(m + n * h + t * w), b.r(m + n * h - t * w * b.rng.uniform(0.3, 1.0))]
    return _pg(ring), _pg(tri + [tri[0]])


def _pgpg_edge_part(b):
    """A triangle with one side along part of a's edge (between lattice points): outside a
    (touches along a line) or inside it (a contains the triangle)."""
    ring, c, i, pts = b.lattice_polygon()
    if len(pts) < 2:
        pts = [ring[i]] + pts
    j, k = _two(b, pts)
    p, q = np.array(pts[j]), np.array(pts[k])
    n = _outer_normal(ring, c, i)
    if b.rng.random() < 0.5:
        apex = b.r(0.5 * (p + q) + n * b.rng.uniform(0.2, 1.0))
    else:
        apex = b.inside(ring, c)
    tri = [pts[j], pts[k], apex]
    return _pg(ring), _pg(tri + [tri[0]])


def _pgpg_far(b):
    return _pg(b.polygon()[0]), _pg(b.polygon()[0])


#: canonical pair -> {scene name: (builder, weight)}
SCENES: dict[tuple[str, str], dict[str, tuple[Callable, float]]] = {
    ("Point", "Point"): {"same": (_pp_same, 2.0), "near": (_pp_near, 1.5), "far": (_pp_far, 0.5)},
    ("Point", "LineString"): {"end": (_pl_end, 1.0), "inner_vertex": (_pl_inner_vertex, 1.0),
                              "in_segment": (_pl_in_segment, 1.0),
                              "near": (_pl_near, 1.0), "far": (_pl_far, 0.3)},
    ("Point", "Polygon"): {"inside": (_ppg_inside, 1.0), "vertex": (_ppg_vertex, 1.0),
                           "in_edge": (_ppg_in_edge, 1.0),
                           "near": (_ppg_near, 1.0), "far": (_ppg_far, 0.3)},
    ("LineString", "LineString"): {"same": (_ll_same, 1.0), "sub": (_ll_sub, 1.0), "super": (_ll_super, 1.0),
                                   "partial": (_ll_partial, 1.0), "cross": (_ll_cross, 1.0),
                                   "touch": (_ll_end_touch, 1.0), "near": (_ll_near, 1.0),
                                   "nudged": (_ll_nudged, 1.0), "far": (_ll_far, 0.3),
                                   "collinear_sub": (_ll_collinear_sub, 0.6),
                                   "collinear_partial": (_ll_collinear_partial, 0.6),
                                   "collinear_equal": (_ll_collinear_equal, 0.4),
                                   "in_segment_touch": (_ll_in_segment_touch, 0.6),
                                   "in_segment_cross": (_ll_in_segment_cross, 0.6)},
    ("LineString", "Polygon"): {"inside": (_lpg_inside, 1.0), "inside_to_vertex": (_lpg_inside_to_vertex, 1.0),
                                "crossing": (_lpg_crossing, 1.0), "outside_to_vertex": (_lpg_outside_to_vertex, 1.0),
                                "near": (_lpg_near, 1.0), "far": (_lpg_far, 0.3),
                                "to_edge": (_lpg_to_edge, 0.7), "through_edge_point": (_lpg_through_edge_point, 0.6),
                                "along_edge": (_lpg_along_edge, 0.7)},
    ("Polygon", "Polygon"): {"same": (_pgpg_same, 1.0), "inner": (_pgpg_inner, 1.0), "outer": (_pgpg_outer, 1.0),
                             "vertex_touch": (_pgpg_vertex_touch, 1.0), "edge_touch": (_pgpg_edge_touch, 1.0),
                             "shifted": (_pgpg_shifted, 1.0), "nudged": (_pgpg_nudged, 1.0),
                             "near": (_pgpg_near, 1.0), "far": (_pgpg_far, 0.3),
                             "edge_point_touch": (_pgpg_edge_point_touch, 0.8),
                             "edge_part": (_pgpg_edge_part, 0.7)},
}


def draw_scene(rng: np.random.Generator, a_type: str, b_type: str, decimals: int = 4,
               scene: str | None = None) -> tuple[Geom, Geom, str]:
    """One valid geometry pair of the given types on the printed grid: ``(a, b, scene name)``.
    Valid: both geometries pass :func:`~stsim.sim.shapes.to_shapely`, line strings are simple,
    and no vertex of one lies closer than ``MIN_CLEARANCE`` to the other without touching it
    exactly (:func:`~stsim.sim.shapes.near_misses`); scenes that fail are redrawn.

    Raises:
        GeometryError: no scenes for the pair, or no valid pair after 50 draws.
    """
    swap = (a_type, b_type) not in SCENES
    key = (b_type, a_type) if swap else (a_type, b_type)
    if key not in SCENES:
        raise GeometryError(f"no scenes for {a_type}/{b_type}")
    names = list(SCENES[key])
    w = np.array([SCENES[key][n][1] for n in names])
    bld = Builder(rng, decimals)
    for _ in range(50):
        name = scene or names[int(rng.choice(len(names), p=w / w.sum()))]
        a, b = SCENES[key][name][0](bld)
        try:
            to_shapely(a), to_shapely(b)
        except GeometryError:
            continue
        if any(g["type"] == "LineString" and not is_simple_line(g) for g in (a, b)):
            continue
        if near_misses(a, b):
            continue
        return (b, a, name) if swap else (a, b, name)
    raise GeometryError(f"no valid {a_type}/{b_type} scene after 50 draws")


def draw_pair(rng: np.random.Generator, a_type: str, b_type: str, predicate: str, target: bool,
              decimals: int = 4, max_draws: int = 400) -> tuple[Geom, Geom, str]:
    """A pair for which ``a predicate b`` equals ``target`` (shapely, printed coordinates).

    Scenes are drawn at random and kept only when the predicate evaluates to ``target``; since
    most scenes are near-contacts, negatives are mostly hard ones (a touch where an overlap is
    asked, an end point where an interior vertex is needed, a near miss).

    Raises:
        GeometryError: no matching pair within ``max_draws`` draws.
    """
    for _ in range(max_draws):
        a, b, name = draw_scene(rng, a_type, b_type, decimals)
        if holds(a, b, predicate) == target:
            return a, b, name
    raise GeometryError(f"could not construct {a_type} {predicate} {b_type} = {target} "
                        f"in {max_draws} draws")
