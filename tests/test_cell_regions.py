"""Exact RCC-8 / RCC-23 relations of cell regions (stsim.qstr.cell_regions): hand-drawn
configurations, the converse law on random regions, and errors."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stsim.qstr import get_calculus
from stsim.qstr.cell_regions import (CellRegionError, Grid, convex_hull, rcc8_relation,
                                     rcc23_relation)
from stsim.qstr.topology import rcc22_name

G = Grid(12)


def region(picture: str):
    """Cells from a picture whose first line is grid row 1 and first column grid column 1."""
    return G.region((r + 1, c + 1) for r, line in enumerate(picture.strip().splitlines())
                    for c, ch in enumerate(line.strip()) if ch == "#")


C_SHAPE = region("""
###
#..
###""")


@pytest.mark.parametrize("pic, to_c, from_c", [
    # one cell in the mouth of the C: touches it, lies in its hull, C is outside its hull
    ("...\n.#.\n...", "IOE", "OIE"),
    # one cell just right of the mouth: touches the arm ends at corners, outside the hull
    ("....\n...#\n....", "OOE", "OOE"),
    # two cells away: disconnected and outside
    (".....\n....#\n.....", "OOD", "OOD"),
    # a bar through the mouth sticking out: EC, partly inside conv(C); C only touches the
    # bar's hull (the strip of row 2) along its boundary, so C is outside it
    ("....\n.###\n....", "POE", "OPE"),
])
def test_relations_to_a_c_shape(pic, to_c, from_c):
    x = region(pic)
    assert rcc23_relation(x, C_SHAPE) == to_c
    assert rcc23_relation(C_SHAPE, x) == from_c


def test_inside_partly_inside_disconnected():
    """IPD by hand: a hook inside a U's hull wraps around a tooth of the U without touching."""
    u = region("""
#........#
#........#
#........#
#........#
###......#
#........#
#........#
#........#
##########""")
    hook = region("""
..........
..........
..#####...
......#...
......#...
......#...
..#####...
..........
..........""")
    assert rcc8_relation(hook, u) == "DC"
    assert rcc23_relation(hook, u) == "IPD"
    assert rcc23_relation(u, hook) == "PID"


def test_rcc8_parthood():
    big = region("#####\n#####\n#####\n#####\n#####")
    mid = region(".....\n.###.\n.###.\n.###.\n.....")
    edge = region("###..\n###..\n.....\n.....\n.....")
    assert rcc8_relation(mid, big) == "NTPP" and rcc8_relation(big, mid) == "NTPPi"
    assert rcc8_relation(edge, big) == "TPP" and rcc8_relation(big, edge) == "TPPi"
    assert rcc8_relation(edge, mid) == "PO" and rcc8_relation(big, big) == "EQ"
    # a corner cell of mid only meets big's boundary if big ends there: here it does not
    corner = region(".....\n.#...\n.....\n.....\n.....")
    assert rcc8_relation(corner, big) == "NTPP"


def test_convex_hull_drops_collinear_points():
    assert convex_hull([(0, 0), (1, 0), (2, 0), (2, 2), (0, 2), (1, 1)]) == [(0, 0), (2, 0), (2, 2), (0, 2)]


def test_hull_cells_of_an_l_shape():
    """An L's hull is a pentagon: the notch cell meets the hull's interior but is not in it."""
    ell = region("#.\n##")
    assert ell.hull == [(1, 1), (2, 1), (3, 2), (3, 3), (1, 3)]
    notch = G.bit(1, 2)
    assert ell.meets_hull & notch and not ell.in_hull & notch
    assert ell.in_hull == ell.bits


cells = st.sets(st.tuples(st.integers(1, 10), st.integers(1, 10)), min_size=1, max_size=25)


@settings(max_examples=150, deadline=None)
@given(cells, cells)
def test_converse_law_on_random_regions(a, b):
    """R(y, x) is the converse of R(x, y) (RCC-22 converse table; IIE is its own converse)."""
    x, y = G.region(a), G.region(b)
    r, s = rcc23_relation(x, y), rcc23_relation(y, x)
    if r == "IIE":
        assert s == "IIE"
    else:
        assert get_calculus("rcc22").converse[rcc22_name(r)] == rcc22_name(s)


def test_bad_regions():
    with pytest.raises(CellRegionError, match="outside the usable"):
        G.region([(0, 3)])
    with pytest.raises(CellRegionError, match="at least one cell"):
        G.region([])
    with pytest.raises(CellRegionError, match="at least 3"):
        Grid(2)


def _sat_hull_cells(grid, hull):
    """Independent second computation: corner tests and separating axes (hull edge normals
    and the coordinate axes) over every cell, with numpy."""
    import numpy as np
    rc = np.array([(r, c) for r in range(grid.n) for c in range(grid.n)])
    corners = rc[:, None, ::-1] + np.array([(0, 0), (1, 0), (0, 1), (1, 1)])[None]
    h = np.asarray(hull)
    e = np.roll(h, -1, axis=0) - h
    rel = corners[:, :, None, :] - h[None, None]
    cross = e[None, None, :, 0] * rel[..., 1] - e[None, None, :, 1] * rel[..., 0]
    inside = (cross >= 0).all(axis=(1, 2))
    sep = (cross <= 0).all(axis=1).any(axis=1)
    sep |= ((corners.max(axis=1) <= h.min(axis=0)) | (corners.min(axis=1) >= h.max(axis=0))).any(axis=1)
    to_bits = lambda m: sum(grid.bit(int(i) // grid.n, int(i) % grid.n) for i in np.flatnonzero(m))
    return to_bits(inside), to_bits(~sep)


@settings(max_examples=200, deadline=None)
@given(cells)
def test_hull_cells_agree_with_separating_axes(a):
    x = G.region(a)
    assert (x.in_hull, x.meets_hull) == _sat_hull_cells(G, x.hull)


def _shapely_rcc23(grid, x, y):
    """Independent second computation with shapely (GEOS): each region the union of its cell
    squares; RCC-8 from DE-9IM (interiors meet, covered_by, boundaries meet); for DC/EC, x is
    INSIDE y if it is covered by y's convex_hull, OUTSIDE if their interiors are disjoint
    (relate pattern ``F********``), PINSIDE otherwise."""
    from shapely.geometry import box
    from shapely.ops import unary_union

    def poly(bits):
        return unary_union([box(c, r, c + 1, r + 1) for r, c in grid.cells(bits)])

    def place(a, b):
        hull = b.convex_hull
        if a.covered_by(hull):
            return "I"
        return "O" if a.relate_pattern(hull, "F********") else "P"

    a, b = poly(x.bits), poly(y.bits)
    if a.relate_pattern(b, "F********"):
        return place(a, b) + place(b, a) + ("E" if a.intersects(b) else "D")
    if a.equals(b):
        return "EQ"
    touch = a.boundary.intersects(b.boundary)
    if a.covered_by(b):
        return "TPP" if touch else "NTPP"
    if b.covered_by(a):
        return "TPPi" if touch else "NTPPi"
    return "PO"


G9 = Grid(9)
_blocks = st.lists(st.tuples(st.integers(1, 7), st.integers(1, 7), st.integers(0, 3), st.integers(0, 3)),
                   min_size=1, max_size=3)


def _cells_of(blocks):
    """Cells of a union of rectangles (row, column, extra rows, extra columns), clipped to the
    usable 7x7 part of G9: rectangles, bars, L/U shapes, several pieces."""
    return {(r, c) for r0, c0, dr, dc in blocks
            for r in range(r0, min(r0 + dr, 7) + 1) for c in range(c0, min(c0 + dc, 7) + 1)}


@settings(max_examples=150, deadline=None)
@given(_blocks, _blocks, st.sampled_from(["apart", "union", "same"]))
def test_rcc23_relation_agrees_with_shapely(a, b, how):
    """rcc23_relation (exact integer cell arithmetic) equals a shapely computation from DE-9IM
    and convex hulls, on random unions of rectangles; y is sometimes x plus more cells (parts)
    or x itself (EQ)."""
    xa = _cells_of(a)
    yb = {"apart": _cells_of(b), "union": xa | _cells_of(b), "same": xa}[how]
    x, y = G9.region(xa), G9.region(yb)
    assert rcc23_relation(x, y) == _shapely_rcc23(G9, x, y)
    assert rcc23_relation(y, x) == _shapely_rcc23(G9, y, x)


def test_pieces_largest_first():
    g = Grid(8)
    bits = g.region([(1, 1), (1, 2), (2, 2), (4, 4), (6, 1), (6, 2)]).bits
    pieces = g.pieces(bits)
    assert [len(g.cells(p)) for p in pieces] == [3, 2, 1]
    assert sum(pieces) == bits and g.cells(pieces[2]) == [(4, 4)]
    # corner contact does not join pieces (edge-connected)
    assert len(g.pieces(g.region([(1, 1), (2, 2)]).bits)) == 2
