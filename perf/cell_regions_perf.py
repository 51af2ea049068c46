"""Why the RCC-23 witness search classifies regions with its own cell arithmetic, not shapely.

Times :func:`stsim.qstr.cell_regions.rcc23_relation` (regions built from bit sets, hulls and
hull cells computed once per region, as the search does) against the shapely (GEOS)
classification used as the independent reference in ``tests/test_cell_regions.py`` (polygons
from the cell squares, DE-9IM, ``convex_hull``), on the same random region pairs, in the same
process.  Prints pairs per second of each and their ratio; also checks they agree.

Usage: ``python perf/cell_regions_perf.py [--pairs 400] [--grid 24]``
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' shapely reference

from stsim.qstr.cell_regions import CellRegion, Grid, rcc23_relation  # noqa: E402
from tests.test_cell_regions import _shapely_rcc23  # noqa: E402


def random_bits(rng: random.Random, g: Grid) -> int:
    """A union of one to three random rectangles on the usable part of the grid."""
    bits = 0
    for _ in range(rng.randint(1, 3)):
        r0, c0 = rng.randint(1, g.n - 2), rng.randint(1, g.n - 2)
        r1, c1 = min(g.n - 2, r0 + rng.randint(0, 5)), min(g.n - 2, c0 + rng.randint(0, 5))
        bits |= g.region((r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)).bits
    return bits


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=400)
    ap.add_argument("--grid", type=int, default=24)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    g, rng = Grid(args.grid), random.Random(args.seed)
    pairs = [(random_bits(rng, g), random_bits(rng, g)) for _ in range(args.pairs)]

    t = time.perf_counter()
    ours = [rcc23_relation(CellRegion(g, a), CellRegion(g, b)) for a, b in pairs]
    t_ours = time.perf_counter() - t
    t = time.perf_counter()
    ref = [_shapely_rcc23(g, CellRegion(g, a), CellRegion(g, b)) for a, b in pairs]
    t_ref = time.perf_counter() - t

    agree = sum(o == r for o, r in zip(ours, ref))
    print(f"{args.pairs} random region pairs on a {args.grid}x{args.grid} grid; agreement {agree}/{args.pairs}")
    print(f"{'cell arithmetic (ours)':<26} {args.pairs / t_ours:10.0f} pairs/s")
    print(f"{'shapely / GEOS reference':<26} {args.pairs / t_ref:10.0f} pairs/s")
    print(f"ratio ours / shapely: {t_ref / t_ours:.1f}x faster")
    return 0 if agree == args.pairs else 1


if __name__ == "__main__":
    raise SystemExit(main())
