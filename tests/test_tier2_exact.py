"""Decimal-exact spatial predicates (issue 14, item 1): incidences on the printed decimals.

Hand-derived DE-9IM matrices for contacts that binary floats miss (a point inside a segment,
collinear overlaps, a polygon vertex inside another's edge), and agreement with plain shapely
wherever no such incidence exists.
"""
from __future__ import annotations

import numpy as np
import pytest
from shapely.geometry import LineString, Point, Polygon

from stsim.sim.event_interval import satisfying_runs
from stsim.sim.scenes import draw_scene
from stsim.sim.shapes import (GEOMETRY_TYPES, PREDICATES, GeometryError, collinear, holds,
                              incidences, is_simple_line, near_misses, on_segment, orientation,
                              relate, to_shapely)


def L(*c):
    return {"type": "LineString", "coords": [list(x) for x in c]}


def P(c):
    return {"type": "Point", "coords": [list(c)]}


def G(*c):
    return {"type": "Polygon", "coords": [list(x) for x in c] + [list(c[0])]}


def raw(g):
    """Plain shapely on the binary floats (what the gold used before)."""
    c = [tuple(x) for x in g["coords"]]
    return {"Point": lambda: Point(c[0]), "LineString": lambda: LineString(c),
            "Polygon": lambda: Polygon(c)}[g["type"]]()


A = L((0, 0), (2.1, 1.2))             # on the line 1.2 x = 2.1 y, i.e. y = 4x/7
TRI = G((0, 0), (2.1, 1.2), (0, 3))   # left of that line


def test_exact_primitives_on_printed_decimals():
    # 0.7 * 1.2 == 2.1 * 0.4 in decimals; in binary floats the cross product is 4.4e-17 or so
    assert orientation((0, 0), (2.1, 1.2), (0.7, 0.4)) == 0
    assert (2.1 * 0.4 - 1.2 * 0.7) != 0
    assert collinear((0, 0), (2.1, 1.2), (2.8, 1.6))
    assert orientation((0, 0), (2.1, 1.2), (0.7, 0.4001)) == 1
    assert orientation((0, 0), (2.1, 1.2), (0.7, 0.3999)) == -1
    assert on_segment((0.7, 0.4), (0, 0), (2.1, 1.2), interior=True)
    assert on_segment((2.1, 1.2), (0, 0), (2.1, 1.2)) and not on_segment((2.1, 1.2), (0, 0), (2.1, 1.2), interior=True)
    assert not on_segment((2.8, 1.6), (0, 0), (2.1, 1.2))  # collinear, beyond the end


# every matrix below is derived by hand from the DE-9IM definitions (rows: interior, boundary,
# exterior of the first; columns: of the second); "raw" is what plain shapely said on floats
@pytest.mark.parametrize("a, b, want, raw_said", [
    # the issue's case: the point is inside the segment, so the line contains it
    (A, P((0.7, 0.4)), "0F1FF0FF2", "FF1FF00F2"),
    # collinear sub-segment strictly inside A's segment: A contains it
    (A, L((0.7, 0.4), (1.4, 0.8)), "101FF0FF2", "FF1FF0102"),
    # collinear partial overlap: each has an end inside the other -> overlaps
    (A, L((1.4, 0.8), (2.8, 1.6)), "1010F0102", "FF1FF0102"),
    # the same point set with an extra vertex: equals
    (A, L((0, 0), (0.7, 0.4), (2.1, 1.2)), "1FFF0FFF2", "FF1F0F1F2"),
    # triangle with a vertex inside TRI's edge, on the outer side: touches at a non-vertex point
    (TRI, G((0.7, 0.4), (3, 0), (2, -1)), "FF2F01212", "212101212"),
    # point inside a polygon edge: touches (on the boundary), not within
    (P((0.7, 0.4)), TRI, "F0FFFF212", "0FFFFF212"),
    # line along part of a polygon edge: touches in a line
    (L((0.7, 0.4), (1.4, 0.8)), TRI, "F1FF0F212", "1FF0FF212"),
])
def test_hand_derived_matrices_of_decimal_incidences(a, b, want, raw_said):
    assert relate(a, b) == want
    assert raw(a).relate(raw(b)) == raw_said != want  # the float fault these cases exercise
    # and the predicates follow the matrix
    assert relate(b, a) == "".join(want[3 * j + i] for i in range(3) for j in range(3))


def test_issue_predicates():
    assert holds(A, P((0.7, 0.4)), "contains") and holds(P((0.7, 0.4)), A, "within")
    assert holds(A, L((0.7, 0.4), (1.4, 0.8)), "contains")
    assert holds(A, L((1.4, 0.8), (2.8, 1.6)), "overlaps")
    assert holds(A, L((0, 0), (0.7, 0.4), (2.1, 1.2)), "equals")
    assert holds(TRI, G((0.7, 0.4), (3, 0), (2, -1)), "touches")
    assert not holds(TRI, G((0.7, 0.4), (3, 0), (2, -1)), "overlaps")
    assert holds(P((0.7, 0.4)), TRI, "touches") and not holds(P((0.7, 0.4)), TRI, "within")


def test_event_rule_is_exact_per_segment():
    # the trajectory's second segment runs along TRI's edge from (0.7, 0.4) to (1.4, 0.8):
    # it touches TRI (plain shapely said it lies inside, 'within')
    traj = [[0.7, -1.0], [0.7, 0.4], [1.4, 0.8], [3.0, 0.8]]
    assert satisfying_runs(traj, [0, 1, 2, 3], TRI, "within") == []
    assert satisfying_runs(traj, [0, 1, 2, 3], TRI, "touches") == [(0.0, 3.0)]


def test_validity_on_printed_decimals():
    # the last vertex (0.7, 0.4) lies on the first edge: the ring runs back along it
    ring = G((0, 0), (2.1, 1.2), (0, 3), (-1, 1), (0.7, 0.4))
    assert raw(ring).is_valid  # floats miss the self-overlap
    with pytest.raises(GeometryError, match="self-intersecting ring"):
        to_shapely(ring)
    # a line whose third vertex lies inside its first segment is not simple
    assert not is_simple_line(L((0, 0), (2.1, 1.2), (1.0, 2.0), (0.7, 0.4)))
    assert LineString([(0, 0), (2.1, 1.2), (1.0, 2.0), (0.7, 0.4)]).is_simple


def test_incidence_counts():
    assert incidences(A, P((0.7, 0.4))) == {"vertex_in_segment": 1, "collinear_overlap": 0}
    assert incidences(A, L((1.4, 0.8), (2.8, 1.6))) == {"vertex_in_segment": 2, "collinear_overlap": 1}
    assert incidences(A, A) == {"vertex_in_segment": 0, "collinear_overlap": 0}
    assert incidences(A, L((2.1, 1.2), (2.8, 1.6))) == {"vertex_in_segment": 0, "collinear_overlap": 0}


def _random_geom(rng, kind):
    u = lambda: round(float(rng.uniform(0, 10)), 4)  # noqa: E731
    if kind == "Point":
        return P((u(), u()))
    if kind == "LineString":
        return L(*[(u(), u()) for _ in range(int(rng.integers(2, 5)))])
    c = rng.uniform(2, 8, 2)
    ang = np.sort(rng.uniform(0, 2 * np.pi, int(rng.integers(3, 7))))
    rad = rng.uniform(0.5, 3)
    return G(*[(round(float(c[0] + rad * np.cos(a)), 4), round(float(c[1] + rad * np.sin(a)), 4)) for a in ang])


def test_exact_and_plain_shapely_agree_without_incidences():
    """Random pairs (random vertices, and the generator's scenes, whose contacts are shared
    vertices): where no vertex lies inside a segment of the other geometry, every predicate
    and the matrix equal plain shapely's on the floats."""
    rng = np.random.default_rng(1414)
    checked = 0
    for k in range(600):
        ka, kb = (GEOMETRY_TYPES[int(i)] for i in rng.integers(0, 3, 2))
        if k % 2:
            a, b = _random_geom(rng, ka), _random_geom(rng, kb)
            try:
                to_shapely(a), to_shapely(b)
            except GeometryError:
                continue
        else:
            a, b, _ = draw_scene(rng, ka, kb, 4)
        if any(incidences(a, b).values()):
            continue
        ra, rb = raw(a), raw(b)
        assert relate(a, b) == ra.relate(rb), (a, b)
        for p in PREDICATES:
            assert holds(a, b, p) == getattr(ra, p)(rb), (a, b, p)
        checked += 1
    assert checked > 500


# ------------------------------------------------------------------ near-miss clearance (item 2)
def test_near_misses_measure_the_issue_item():
    # stark.relation.spatial/000626 of stark-tier2 seed 5 as main (7f62a69) generated it: the
    # "near" point beside the first segment (shapely distance 1.0514e-4)
    pt = P((5.2257, 6.0095))
    ln = L((5.2183, 6.0115), (5.8427, 5.8519), (6.3857, 5.5757))
    gaps = near_misses(pt, ln)
    assert len(gaps) == 1 and gaps[0] == pytest.approx(raw(pt).distance(raw(ln)), abs=1e-12)
    assert gaps[0] == pytest.approx(1.0514e-4, abs=1e-8)
    # exact contacts are not near misses; 0.005 apart is clear, 0.0049 is not
    assert near_misses(A, P((0.7, 0.4))) == []
    assert near_misses(L((0, 0), (1, 0)), P((0.5, 0.005))) == []
    assert near_misses(L((0, 0), (1, 0)), P((0.5, 0.0049))) == [pytest.approx(0.0049)]
    # exactly 0.005 apart (3-4-5 triangle) is clear, on the decimals (float hypot may round below)
    assert near_misses(P((1.0, 1.0)), P((1.003, 1.004))) == []
    assert near_misses(P((1.0, 1.0)), P((1.003, 1.0039))) == [pytest.approx(0.0049204, abs=1e-7)]


GEOMETRY_FAMILIES = ("stark.relation.spatial", "stark.relation.de9im", "stark.relation.spatiotemporal")


def _item_pairs(t):
    i = t.inputs
    if "a" in i:
        return [(i["a"], i["b"])]
    return [({"type": "LineString", "coords": i["trajectory"]}, i["geometry"])]


def test_every_generated_item_keeps_the_clearance():
    """Property over seeds 1-10 (15 items of each geometry family per seed, plus the issue's
    item; scripts/tier2_edge_counts.py checks whole suites): no vertex of one geometry within
    MIN_CLEARANCE of the other unless exactly on it."""
    from stsim.registry import generate_task
    jobs = [(f, i, s) for s in range(1, 11) for f in GEOMETRY_FAMILIES for i in range(0, 600, 40)]
    jobs.append(("stark.relation.spatial", 626, 5))
    bad = []
    for fam, idx, seed in jobs:
        t = generate_task(fam, idx, suite="stark-tier2", suite_seed=seed)
        for a, b in _item_pairs(t):
            if near_misses(a, b):
                bad.append((t.id, seed, near_misses(a, b)[0]))
    assert bad == []


def test_audit_accepts_the_issue_label_and_the_oracle_gives_it():
    """Before: `stsim audit` flagged label 1 of "LineString (0 0, 2.1 1.2) contains Point
    (0.7 0.4)" as [label] with "gap 4.6e-17"; the label is right in decimal arithmetic."""
    from stsim.baselines import BASELINES
    from stsim.records import Task
    from stsim.scoring.audit import audit_task
    t = Task("t/stark.relation.spatial/000000", "stark.relation.spatial", "",
             {"a": A, "b": P((0.7, 0.4)), "predicate": "contains", "decimals": 1}, 1, "binary")
    (r,) = audit_task(t)
    assert r.ok and r.reason == ""
    assert BASELINES[t.family](t)[0].value == 1
    wrong = Task(t.id, t.family, "", t.inputs, 0, "binary")
    (r,) = audit_task(wrong)
    assert not r.ok and "0F1FF0FF2" in r.reason and "shared point(s) only" in r.reason
