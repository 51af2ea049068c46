"""Regions made of unit grid cells and their exact RCC-8 / RCC-23 relations.

A region is a non-empty union of closed unit squares ``[c, c+1] x [r, r+1]`` of an ``n x n``
grid (a regular closed set), stored as a Python ``int`` bit set (bit ``r * (n + 1) + c``; the
extra column is an always-empty guard so that shifts never wrap).  Cells on the outer frame
of the grid are never used, so every closed neighbourhood of a region stays on the grid.

Everything is exact (integer arithmetic), which is what lets :mod:`stsim.qstr.rcc23_witnesses`
*derive* the RCC-23 composition table from concrete configurations:

* interiors of two regions meet iff they share a cell; closures meet iff a cell of one is an
  8-neighbour of (or equal to) a cell of the other; ``x`` is part of ``y`` iff its cells are
  cells of ``y``; a proper part is non-tangential iff every 8-neighbour of ``x`` lies in ``y``
  (RCC-8 of Randell, Cui & Cohn 1992);
* the convex hull of a region is the hull of its cell corners; a cell is *in* the hull iff its
  four corners are (closed hull), and its interior *meets* the hull's interior unless a
  separating axis (a hull edge normal or a coordinate axis) exists;
* for two regions that are DC or EC, ``x`` is INSIDE ``y`` iff ``x`` is part of conv(y),
  OUTSIDE iff the interiors of ``x`` and conv(y) are disjoint, PINSIDE (partly inside)
  otherwise (Cohn, Bennett, Gooday & Gotts 1997, §5: INSIDE, P-INSIDE, OUTSIDE; RCC-23 of Cohn,
  Randell & Cui 1995).

RCC-23 relations are named by the RCC-8 name for the six relations with shared interior and by
a three-letter code otherwise: x's place in conv(y) (``I``, ``P``, ``O``), y's place in conv(x),
then ``E`` (EC) or ``D`` (DC); e.g. ``IPD``.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


class CellRegionError(ValueError):
    """A region that is empty, or uses a cell outside the usable part of the grid."""


def _cross(o, a, b) -> int:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def convex_hull(points) -> list[tuple[int, int]]:
    """Counter-clockwise convex hull of integer points (Andrew's monotone chain), without
    collinear points.  ``points``: iterable of (x, y)."""
    pts = sorted(set(map(tuple, points)))
    if len(pts) < 3:
        return pts
    lower: list = []
    for p in pts:
        while len(lower) >= 2 and _cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list = []
    for p in reversed(pts):
        while len(upper) >= 2 and _cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


@dataclass(frozen=True)
class Grid:
    """An ``n x n`` grid of unit cells; cells with row or column 0 or ``n - 1`` are not usable."""
    n: int

    def __post_init__(self) -> None:
        if self.n < 3:
            raise CellRegionError(f"grid size must be at least 3, got {self.n}")

    @property
    def width(self) -> int:
        """Bits per row: the n cells and one always-empty guard bit."""
        return self.n + 1

    def bit(self, r: int, c: int) -> int:
        """The bit set holding only cell (row ``r``, column ``c``)."""
        return 1 << (r * self.width + c)

    @cached_property
    def usable(self) -> int:
        """Bit set of the cells a region may use (the grid minus its outer frame)."""
        return sum(self.bit(r, c) for r in range(1, self.n - 1) for c in range(1, self.n - 1))

    @cached_property
    def _no_guard(self) -> int:
        return sum(self.bit(r, c) for r in range(self.n) for c in range(self.n))

    def dilate(self, bits: int) -> int:
        """The cells equal or 8-adjacent to a cell of ``bits``."""
        row = bits | (bits << 1) | (bits >> 1)
        row &= self._no_guard
        w = self.width
        return (row | (row << w) | (row >> w)) & self._no_guard

    def pieces(self, bits: int) -> list[int]:
        """The edge-connected pieces of a cell set, largest first (ties: lowest cell first)."""
        w, out, rest = self.width, [], bits
        while rest:
            seen = rest & -rest
            while True:
                grow = (seen | seen << 1 | seen >> 1 | seen << w | seen >> w) & bits
                if grow == seen:
                    break
                seen = grow
            out.append(seen)
            rest &= ~seen
        return sorted(out, key=lambda piece: -piece.bit_count())

    def cells(self, bits: int) -> list[tuple[int, int]]:
        """(row, column) of every cell in ``bits``."""
        w = self.width
        out, i = [], 0
        while bits:
            if bits & 1:
                out.append(divmod(i, w))
            bits >>= 1
            i += 1
        return out

    def region(self, cells) -> "CellRegion":
        """The region made of ``cells`` (iterable of (row, column)).

        Raises:
            CellRegionError: no cells, or a cell on the frame or off the grid.
        """
        bits = 0
        for r, c in cells:
            if not (1 <= r <= self.n - 2 and 1 <= c <= self.n - 2):
                raise CellRegionError(f"cell ({r}, {c}) is outside the usable {self.n - 2}x"
                                      f"{self.n - 2} part of a {self.n}x{self.n} grid")
            bits |= self.bit(r, c)
        return CellRegion(self, bits)

    def hull_cells(self, hull: list[tuple[int, int]]) -> tuple[int, int]:
        """Cells inside a convex polygon ``hull`` (integer vertices, with area), and cells whose
        interior meets the polygon's interior, as two bit sets.

        Row by row: over the strip ``r <= y <= r + 1`` the polygon spans ``[L(y), R(y)]``
        with ``L`` convex and ``R`` concave, so a cell lies inside iff
        ``max(L(r), L(r+1)) <= c`` and ``c + 1 <= min(R(r), R(r+1))``, and its interior
        meets the polygon's iff ``c + 1 > min(L(r), L(r+1))`` and ``c < max(R(r), R(r+1))``.
        """
        ys = [p[1] for p in hull]
        span = {y: _extent(hull, y) for y in range(min(ys), max(ys) + 1)}
        w = self.width
        inside = meets = 0
        for r in range(min(ys), max(ys)):
            (fl0, cl0, fr0, cr0), (fl1, cl1, fr1, cr1) = span[r], span[r + 1]
            lo, hi = max(cl0, cl1), min(fr0, fr1) - 1
            if lo <= hi:
                inside |= ((1 << (hi - lo + 1)) - 1) << (r * w + lo)
            lo, hi = min(fl0, fl1), max(cr0, cr1) - 1
            meets |= ((1 << (hi - lo + 1)) - 1) << (r * w + lo)
        return inside, meets


def _extent(poly: list[tuple[int, int]], y: int) -> tuple[int, int, int, int]:
    """floor and ceiling of the least x, then of the greatest x, of a convex polygon with
    integer vertices on the line at height ``y`` (exact integer arithmetic)."""
    floors, ceils = [], []
    for (ax, ay), (bx, by) in zip(poly, poly[1:] + poly[:1]):
        if min(ay, by) <= y <= max(ay, by):
            if ay == by:
                floors += [ax, bx]
                ceils += [ax, bx]
            else:
                num, den = ax * (by - ay) + (y - ay) * (bx - ax), by - ay
                if den < 0:
                    num, den = -num, -den
                floors.append(num // den)
                ceils.append(-(-num // den))
    return min(floors), min(ceils), max(floors), max(ceils)


@dataclass(frozen=True)
class CellRegion:
    """A region of a :class:`Grid` as a bit set of cells (see the module docstring)."""
    grid: Grid
    bits: int

    def __post_init__(self) -> None:
        if not self.bits:
            raise CellRegionError("a region needs at least one cell")
        if self.bits & ~self.grid.usable:
            raise CellRegionError("a region uses a cell on the grid frame or off the grid")

    @cached_property
    def dilated(self) -> int:
        """The cells equal or 8-adjacent to a cell of the region (those its closure touches)."""
        return self.grid.dilate(self.bits)

    @cached_property
    def hull(self) -> list[tuple[int, int]]:
        """Counter-clockwise vertices (x, y) of the convex hull (x = column, y = row)."""
        ends: dict[int, list[int]] = {}
        for r, c in self.grid.cells(self.bits):     # only each row's end cells matter
            lo_hi = ends.setdefault(r, [c, c])
            lo_hi[0], lo_hi[1] = min(lo_hi[0], c), max(lo_hi[1], c)
        pts = [(x, r + dy) for r, (lo, hi) in ends.items() for x in (lo, hi + 1) for dy in (0, 1)]
        return convex_hull(pts)

    @cached_property
    def _hull_sets(self) -> tuple[int, int]:
        return self.grid.hull_cells(self.hull)

    @property
    def in_hull(self) -> int:
        """Cells lying inside the closed convex hull."""
        return self._hull_sets[0]

    @property
    def meets_hull(self) -> int:
        """Cells whose interior meets the interior of the convex hull."""
        return self._hull_sets[1]

    def is_connected(self) -> bool:
        """True if the cells form one edge-connected piece (a one-piece region with connected
        interior)."""
        return len(self.grid.pieces(self.bits)) == 1


def rcc8_relation(x: CellRegion, y: CellRegion) -> str:
    """Exact RCC-8 relation of ``x`` to ``y`` (same grid)."""
    xb, yb = x.bits, y.bits
    if not xb & yb:
        return "EC" if x.dilated & yb else "DC"
    if xb == yb:
        return "EQ"
    if not xb & ~yb:
        return "TPP" if x.dilated & ~yb else "NTPP"
    if not yb & ~xb:
        return "TPPi" if y.dilated & ~xb else "NTPPi"
    return "PO"


def hull_place(x: CellRegion, y: CellRegion) -> str:
    """Where ``x`` lies with respect to conv(``y``): ``I`` (inside), ``P`` (partly), ``O``."""
    if not x.bits & ~y.in_hull:
        return "I"
    return "O" if not x.bits & y.meets_hull else "P"


def rcc23_relation(x: CellRegion, y: CellRegion) -> str:
    """Exact RCC-23 relation of ``x`` to ``y``: an RCC-8 name, or for DC/EC the code
    ``<x in conv(y)><y in conv(x)><E|D>`` (see the module docstring)."""
    r8 = rcc8_relation(x, y)
    if r8 not in ("DC", "EC"):
        return r8
    return hull_place(x, y) + hull_place(y, x) + r8[0]
