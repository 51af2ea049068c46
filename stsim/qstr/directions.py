"""Direction calculi between points in the plane: CDC and (revised) STAR.

* **CDC** (Frank 1991, projection-based cardinal directions; QSTRBench §4.3): the product
  of two point algebras, one per axis.  ``N(x,y)``: x has the same easting as y and a greater
  northing; ``NE``: greater easting and northing; ... ; ``0``: the same point.  Composition,
  converse and neighbourhood are the products of those of PA (a pair of PA relations is a
  neighbour of another pair when each component is equal or a PA face below it, QSTRBench's
  typo fix N ∘ NE = NE follows).
* **STAR** (Renz & Mitra 2004, revised STAR; QSTRBench §4.7): ``ID`` (same point) plus
  eight half-open 45° sectors: ``k(x,y)`` holds when the direction from y to x makes an angle
  in ``[45k, 45(k+1))`` degrees with the reference direction, counter-clockwise.  Composition
  is read off all triples of points of a 9 x 9 integer grid, classified exactly with integer
  arithmetic; the neighbourhood from the faces of the four lines at 0°, 45°, 90° and 135°.
"""
from __future__ import annotations

from itertools import product

import numpy as np

from .calculus import Calculus, Relation
from .derive import composition_from_sample, neighbourhood_from_faces, sign

# ------------------------------------------------------------------------------------ CDC
#: (PA relation on easting, PA relation on northing) -> (name, word, description)
_CDC = {
    ("=", ">"): ("N", "north", "x is due north of y: same easting, greater northing."),
    (">", ">"): ("NE", "northeast", "x is northeast of y: greater easting and greater northing."),
    (">", "="): ("E", "east", "x is due east of y: greater easting, same northing."),
    (">", "<"): ("SE", "southeast", "x is southeast of y: greater easting, smaller northing."),
    ("=", "<"): ("S", "south", "x is due south of y: same easting, smaller northing."),
    ("<", "<"): ("SW", "southwest", "x is southwest of y: smaller easting and smaller northing."),
    ("<", "="): ("W", "west", "x is due west of y: smaller easting, same northing."),
    ("<", ">"): ("NW", "northwest", "x is northwest of y: smaller easting, greater northing."),
    ("=", "="): ("0", "same_place", "x and y are at the same location."),
}


def cdc_relation(x: tuple[float, float], y: tuple[float, float]) -> str:
    """CDC relation of point ``x`` to point ``y`` (``(easting, northing)``, any unit)."""
    pa = {-1: "<", 0: "=", 1: ">"}
    dx, dy = x[0] - y[0], x[1] - y[1]
    key = (pa[(dx > 0) - (dx < 0)], pa[(dy > 0) - (dy < 0)])
    return _CDC[key][0]


def star_relation(x, y) -> str:
    """Revised-STAR relation of point ``x`` to point ``y``; exact for integers and
    :class:`fractions.Fraction` coordinates (the same comparisons as :func:`star_sector`)."""
    dx, dy = x[0] - y[0], x[1] - y[1]
    if dx == 0 and dy == 0:
        return "ID"
    if dy >= 0 and dx > 0:
        k = 0 if dy < dx else 1
    elif dx <= 0 and dy > 0:
        k = 2 if -dx < dy else 3
    elif dy <= 0 and dx < 0:
        k = 4 if -dy < -dx else 5
    else:
        k = 6 if dx < -dy else 7
    return str(k)


def build_cdc(pa: Calculus) -> Calculus:
    """CDC as the product PA x PA (easting, northing)."""
    name = {k: v[0] for k, v in _CDC.items()}
    rels = tuple(Relation(n, w, d, aliases=(("EQ", "Eq", "O") if n == "0" else ()))
                 for n, w, d in _CDC.values())
    comp = {}
    for a, b in product(_CDC, repeat=2):
        ex = pa.compose(a[0], b[0])
        ny = pa.compose(a[1], b[1])
        comp[(name[a], name[b])] = frozenset(name[(p, q)] for p in ex for q in ny)
    conv = {name[a]: name[(pa.converse[a[0]], pa.converse[a[1]])] for a in _CDC}

    def below(p: str, q: str) -> bool:  # PA face order: '=' lies in the closure of '<' and '>'
        return p == q or p == "="
    nb = {name[a]: frozenset(name[b] for b in _CDC if b != a and (
        all(below(p, q) for p, q in zip(a, b)) or all(below(q, p) for p, q in zip(a, b))))
        for a in _CDC}
    return Calculus(
        key="cdc", title="Cardinal Direction Calculus", abbrev="CDC",
        summary=("The Cardinal Direction Calculus (CDC) is a qualitative spatial calculus about the "
                 "directions between points in the Euclidean plane, based on projections onto the "
                 "east-west and north-south axes. Its nine base relations are jointly exhaustive "
                 "and pairwise disjoint."),
        relations=rels, identity="0", converse=conv, composition=comp, neighbours=nb, kind="point",
        source={"composition": "derived: product of two point algebras",
                "neighbours": "derived: product of the PA face order"})


# ------------------------------------------------------------------------------------ STAR
def star_sector(dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """Revised-STAR relation index of integer displacements ``(dx, dy)`` from y to x.

    Returns 0..7 for the sector ``[45k, 45(k+1))`` degrees counter-clockwise from the
    reference direction (+dx), and 8 for the zero vector (``ID``).  Exact for integers.
    """
    dx, dy = np.asarray(dx), np.asarray(dy)
    out = np.full(np.broadcast(dx, dy).shape, 8, dtype=np.int64)
    q0 = (dy >= 0) & (dx > 0)
    q1 = (dx <= 0) & (dy > 0)
    q2 = (dy <= 0) & (dx < 0)
    q3 = (dx >= 0) & (dy < 0)
    out = np.where(q0, np.where(dy < dx, 0, 1), out)
    out = np.where(q1, np.where(-dx < dy, 2, 3), out)
    out = np.where(q2, np.where(-dy < -dx, 4, 5), out)
    out = np.where(q3, np.where(dx < -dy, 6, 7), out)
    return out


def build_star() -> Calculus:
    names = tuple(str(k) for k in range(8)) + ("ID",)
    rels = tuple(Relation(str(k), f"sector_{k}",
                          f"the direction from y to x lies between {45 * k} degrees (included) and "
                          f"{45 * (k + 1)} degrees (excluded), counter-clockwise from the reference "
                          "direction.") for k in range(8)) + (
        Relation("ID", "identical", "x and y are the same point.", aliases=("EQ", "id")),)
    g = np.array(list(product(range(-4, 5), repeat=2)))
    dx = g[:, 0][:, None] - g[:, 0][None, :]
    dy = g[:, 1][:, None] - g[:, 1][None, :]
    rel = star_sector(dx, dy)
    comp = composition_from_sample(rel, names)
    signs = np.stack([sign(dx), sign(dy), sign(dx - dy), sign(dx + dy)], axis=2).reshape(-1, 4)
    nb = neighbourhood_from_faces(signs, rel.ravel(), names)
    conv = {str(k): str((k + 4) % 8) for k in range(8)} | {"ID": "ID"}
    ordered = rels[-1:] + rels[:-1]
    return Calculus(
        key="star", title="Revised STAR calculus", abbrev="STAR",
        summary=("The revised STAR calculus is a qualitative spatial calculus about the direction "
                 "between two points x and y in the Euclidean plane, measured against a fixed "
                 "reference direction. Four lines through y at 0, 45, 90 and 135 degrees cut the "
                 "plane into eight sectors; with the identity (x and y the same point) this "
                 "gives nine jointly exhaustive and pairwise disjoint base relations."),
        symbol_note=("The sectors are numbered 0 to 7 counter-clockwise from the reference "
                     "direction, and ID names the identity."),
        relations=ordered, identity="ID", converse=conv, composition=comp, neighbours=nb,
        kind="point",
        source={"composition": "derived: all triples of points of a 9x9 integer grid",
                "neighbours": "derived: faces of the lines at 0, 45, 90, 135 degrees"})
