"""Search for concrete region triples that realise RCC-23 composition facts.

A fact ``(R, S, T)`` says: some regions x, y, z have R(x, y), S(y, z) and T(x, z), i.e. T is
in the weak composition R ∘ S.  Regions are unions of grid cells (:mod:`stsim.qstr.cell_regions`,
exact relations; regions may have several pieces unless ``--connected``).  Each triple shows
six facts, one per ordering of its three regions.  The search:

* optionally tries every triple inside a small block (``--exhaustive 3``: 511 regions);
* evaluates random triples: blobs, rectangles, frames, snakes, branched and thickened snakes,
  combs, ragged sets, scattered cells, shapes drawn in the room another region leaves (inside
  or outside its hull, touching it or not), scattered cells nested inside a region and in its
  hull;
* is coverage-guided: a triple that shows a new fact joins a corpus; corpus triples (the one
  showing the rarest relation among a few, or a recent one) are mutated (a cell toggled next to
  a region or anywhere, a region or one of its pieces moved, grown, eroded or redrawn, the
  whole triple magnified twice);
* for two regions of a corpus triple, tries every "structured" third region: pieces and
  scattered cells of the sets that keep away from, touch, lie in or lie in the interior of
  each, inside, outside or regardless of each one's convex hull.

The witnesses (a small set cover of the facts, each triple shrunk with ``--shrink`` and moved
to the smallest grid that holds it) are written to
``stsim/data/rcc23_witnesses.txt``; the package derives the RCC-22/23 composition table
from them by classifying each triple again.  The search never reads any reference table.

    python scripts/find_rcc23_witnesses.py --grid 24 --exhaustive 3 --seconds 600 --seed 1 --shrink \
        -o stsim/data/rcc23_witnesses.txt
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from itertools import product
from pathlib import Path

from stsim.qstr.cell_regions import CellRegion, CellRegionError, Grid, rcc23_relation
from stsim.qstr.rcc23_witnesses import WITNESS_FILE, facts_of, read_witnesses, write_witnesses


def random_blob(rng: random.Random, g: Grid, size: int) -> int:
    """Cells grown from a random seed cell by adding edge-neighbours (a random polyomino)."""
    lo, hi = 1, g.n - 2
    r, c = rng.randint(lo, hi), rng.randint(lo, hi)
    cells = {(r, c)}
    frontier = [(r, c)]
    while len(cells) < size and frontier:
        r, c = rng.choice(frontier)
        dr, dc = rng.choice(((0, 1), (1, 0), (0, -1), (-1, 0)))
        nb = (r + dr, c + dc)
        if lo <= nb[0] <= hi and lo <= nb[1] <= hi and nb not in cells:
            cells.add(nb)
            frontier.append(nb)
    return g.region(cells).bits


def random_rect(rng: random.Random, g: Grid) -> int:
    lo, hi = 1, g.n - 2
    r0, r1 = sorted(rng.randint(lo, hi) for _ in range(2))
    c0, c1 = sorted(rng.randint(lo, hi) for _ in range(2))
    return g.region((r, c) for r in range(r0, r1 + 1) for c in range(c0, c1 + 1)).bits


def random_frame(rng: random.Random, g: Grid) -> int:
    """A rectangle outline with some of its sides removed (U, L, C, ring shapes)."""
    lo, hi = 1, g.n - 2
    r0, r1 = sorted(rng.sample(range(lo, hi + 1), 2))
    c0, c1 = sorted(rng.sample(range(lo, hi + 1), 2))
    sides = [s for s in range(4) if rng.random() < 0.7] or [0]
    cells = set()
    for s in sides:
        if s == 0:
            cells |= {(r0, c) for c in range(c0, c1 + 1)}
        elif s == 1:
            cells |= {(r1, c) for c in range(c0, c1 + 1)}
        elif s == 2:
            cells |= {(r, c0) for r in range(r0, r1 + 1)}
        else:
            cells |= {(r, c1) for r in range(r0, r1 + 1)}
    return g.region(cells).bits


def random_snake(rng: random.Random, g: Grid, length: int) -> int:
    """A self-avoiding random walk of edge-adjacent cells (thin winding shapes)."""
    lo, hi = 1, g.n - 2
    steps = ((0, 1), (1, 0), (0, -1), (-1, 0))
    head = (rng.randint(lo, hi), rng.randint(lo, hi))
    cells, d = {head}, rng.choice(steps)
    for _ in range(3 * length):
        if len(cells) >= length:
            break
        if rng.random() < 0.35:
            d = rng.choice(steps)
        nb = (head[0] + d[0], head[1] + d[1])
        if lo <= nb[0] <= hi and lo <= nb[1] <= hi and nb not in cells:
            cells.add(nb)
            head = nb
    return g.region(cells).bits


def random_sparse(rng: random.Random, g: Grid) -> int:
    """The largest piece of a random cell set of density 0.3-0.6 (ragged shapes with holes)."""
    p = rng.uniform(0.3, 0.6)
    bits = sum(g.bit(r, c) for r in range(1, g.n - 1) for c in range(1, g.n - 1) if rng.random() < p)
    return g.pieces(bits)[0] if bits else random_blob(rng, g, 3)


def random_around(rng: random.Random, g: Grid, others: list[int]) -> int:
    """A ragged piece of the space the ``others`` leave free (away from them, or touching
    them), often kept inside the convex hull of the first: shapes that wrap around others."""
    others = [o for o in others if o]
    if not others:
        return random_region(rng, g)
    occ = 0
    for o in others:
        occ |= o
    allowed = g.usable & ~(g.dilate(occ) if rng.random() < 0.5 else occ)
    if rng.random() < 0.5:
        allowed &= CellRegion(g, others[0]).in_hull
    p = 1.0 if rng.random() < 0.3 else rng.uniform(0.4, 0.95)
    bits = sum(g.bit(r, c) for r, c in g.cells(allowed) if rng.random() < p)
    pieces = g.pieces(bits)
    if not pieces:
        return random_region(rng, g)
    if MULTI_PIECE and len(pieces) > 1 and rng.random() < MULTI_PIECE:
        return rng.choice(pieces) | rng.choice(pieces)
    return rng.choice(pieces)


def random_triple(rng: random.Random, g: Grid) -> tuple[int, int, int]:
    """Three regions, independent or drawn around one another (in a random order)."""
    k = rng.random()
    a = random_tree(rng, g) if rng.random() < 0.3 else random_region(rng, g)
    if k < 0.25:
        b, c = random_region(rng, g), random_region(rng, g)
    elif k < 0.5:
        b, c = random_around(rng, g, [a]), random_region(rng, g)
    elif k < 0.65:
        b = random_around(rng, g, [a])
        c = random_around(rng, g, [a])
    elif k < 0.75:                 # nested: scattered cells inside a and in the room it leaves
        a = random_comb(rng, g) if rng.random() < 0.5 else g.dilate(a) & g.usable
        inner = g.cells(eroded(g, a))
        if not inner:
            return random_triple(rng, g)
        b = sum(g.bit(*c) for c in rng.sample(inner, min(len(inner), rng.randint(1, 4))))
        room = a_room(g, a) & (CellRegion(g, b).in_hull if rng.random() < 0.5 else -1)
        room = g.cells(room)
        if not room:
            return random_triple(rng, g)
        c = sum(g.bit(*c) for c in rng.sample(room, min(len(room), rng.randint(1, 4))))
    else:
        b = random_around(rng, g, [a])
        c = random_around(rng, g, [a, b] if rng.random() < 0.5 else [b, a])
    t = [a, b, c]
    rng.shuffle(t)
    return tuple(t)


def a_room(g: Grid, bits: int) -> int:
    """Cells inside the convex hull of a region that keep away from it."""
    return CellRegion(g, bits).in_hull & ~g.dilate(bits) & g.usable


def eroded(g: Grid, bits: int) -> int:
    """The cells of a region all of whose 8 neighbours are in it (its interior part)."""
    return bits & ~g.dilate(g.dilate(g.usable) & ~bits)


def structured_thirds(rng: random.Random, g: Grid, x: CellRegion, y: CellRegion) -> list[int]:
    """Candidate third regions shaped by two given ones: the pieces of every cell set that
    keeps away from, may touch, or must lie in each of x and y, and lies inside, outside or
    anywhere with respect to each of their convex hulls."""
    out = set()
    for sx, sy in product((~x.dilated, ~x.bits, x.bits, eroded(g, x.bits), -1),
                          (~y.dilated, ~y.bits, y.bits, eroded(g, y.bits), -1)):
        base = g.usable & sx & sy
        if not base:
            continue
        for hx, hy in product((x.in_hull, ~x.meets_hull, -1), (y.in_hull, ~y.meets_hull, -1)):
            pieces = g.pieces(base & hx & hy)
            out.update(pieces[:4])
            if MULTI_PIECE and len(pieces) > 1:      # two pieces: one far from the other
                out.add(pieces[0] | pieces[-1])
                out.add(rng.choice(pieces) | rng.choice(pieces))
            cells = g.cells(base & hx & hy)
            if MULTI_PIECE and len(cells) > 1:       # a few scattered cells of the set
                for k in (2, 3):
                    out.add(sum(g.bit(*c) for c in rng.sample(cells, min(k, len(cells)))))
    return list(out)


def random_tree(rng: random.Random, g: Grid) -> int:
    """A snake with one to four short branches (teeth that other regions can wrap around)."""
    lo, hi = 1, g.n - 2
    steps = ((0, 1), (1, 0), (0, -1), (-1, 0))
    bits = random_snake(rng, g, rng.randint(8, 30))
    for _ in range(rng.randint(1, 4)):
        head, d = rng.choice(g.cells(bits)), rng.choice(steps)
        for _ in range(rng.randint(1, 6)):
            nb = (head[0] + d[0], head[1] + d[1])
            if not (lo <= nb[0] <= hi and lo <= nb[1] <= hi):
                break
            bits |= g.bit(*nb)
            head = nb
            if rng.random() < 0.3:
                d = rng.choice(steps)
    return bits


def random_region(rng: random.Random, g: Grid) -> int:
    if rng.random() < MULTI_PIECE:
        small = rng.random() < 0.5       # scattered cells or small blobs, or whole shapes
        parts = [random_blob(rng, g, rng.choice((1, 1, 2, 3))) if small else random_piece(rng, g)
                 for _ in range(rng.choice((2, 2, 3)))]
        return parts[0] | parts[1] | parts[-1]
    return random_piece(rng, g)


def random_piece(rng: random.Random, g: Grid) -> int:
    k = rng.random()
    if k < 0.3:
        return random_blob(rng, g, rng.choice((1, 2, 3, 4, 6, 9, 14, 20, 30)))
    if k < 0.45:
        return random_rect(rng, g)
    if k < 0.65:
        return random_frame(rng, g)
    if k < 0.8:
        return random_snake(rng, g, rng.randint(3, 30))
    if k < 0.85:
        return random_tree(rng, g)
    if k < 0.9:                   # thick branched shapes: teeth with an interior
        return g.dilate(random_tree(rng, g)) & g.usable
    if k < 0.95:
        return random_comb(rng, g)
    return random_sparse(rng, g)


def random_comb(rng: random.Random, g: Grid) -> int:
    """A thick comb: a spine along one side and teeth three cells wide, 3-6 cells apart."""
    m = g.n - 2
    cells = {(r, c) for r in (1, 2) for c in range(1, m + 1)}
    starts = [rng.randint(1, 3)]
    while starts[-1] + 3 + 3 + 3 <= m and len(starts) < 5:       # gaps of at least 3 cells
        starts.append(starts[-1] + 3 + rng.randint(3, 6))
    for c0 in starts:
        depth = rng.randint(4, m)
        cells |= {(r, c) for r in range(3, depth + 1) for c in range(c0, min(c0 + 3, m + 1))}
    k = rng.randrange(4)                               # spine on a random side
    turn = lambda r, c: [(r, c), (c, m + 1 - r), (m + 1 - r, m + 1 - c), (m + 1 - c, r)][k]
    return g.region(turn(r, c) for r, c in cells).bits


def mutate(rng: random.Random, g: Grid, bits: int) -> int:
    """A small change of one region: toggle a cell next to it, move it, or grow/shrink."""
    k = rng.random()
    cells = g.cells(bits)
    if not cells:
        return random_region(rng, g)
    if k < 0.55:
        ring = g.dilate(bits) & g.usable
        cand = g.cells(ring)
        r, c = rng.choice(cand)
        return bits ^ g.bit(r, c)
    if k < 0.8:
        dr, dc = rng.choice(((0, 1), (1, 0), (0, -1), (-1, 0)))
        try:
            return g.region((r + dr, c + dc) for r, c in cells).bits
        except CellRegionError:
            return bits
    if k < 0.8:
        return g.dilate(bits) & g.usable
    if k < 0.85:
        return eroded(g, bits) or bits
    if MULTI_PIECE and k < 0.95:
        pieces = g.pieces(bits)
        if len(pieces) > 1 and rng.random() < 0.5:        # drop or move one piece
            piece = rng.choice(pieces)
            dr, dc = rng.choice(((0, 1), (1, 0), (0, -1), (-1, 0), (0, 0)))
            try:
                moved = 0 if (dr, dc) == (0, 0) else g.region((r + dr, c + dc) for r, c in g.cells(piece)).bits
            except CellRegionError:
                moved = piece
            return (bits & ~piece) | moved
        r, c = rng.choice(g.cells(g.usable))                # a cell anywhere
        return bits ^ g.bit(r, c)
    return random_region(rng, g)


def scaled(g: Grid, triple: list[int]) -> list[int]:
    """The triple magnified twice about its top-left corner (every relation is kept, and
    there is room for half-cell changes), or unchanged if that does not fit on the grid."""
    cells = [g.cells(b) for b in triple]
    r0 = min(r for cs in cells for r, _ in cs)
    c0 = min(c for cs in cells for _, c in cs)
    try:
        return [g.region((1 + 2 * (r - r0) + dr, 1 + 2 * (c - c0) + dc)
                         for r, c in cs for dr in (0, 1) for dc in (0, 1)).bits for cs in cells]
    except CellRegionError:
        return triple


#: Share of random regions made of several pieces (0 with --connected).
MULTI_PIECE = 0.3


class Search:
    def __init__(self, n: int, seed: int, connected: bool):
        self.g = Grid(n)
        self.rng = random.Random(seed)
        self.connected = connected
        self.regions: dict[int, CellRegion] = {}
        self.facts: dict[tuple[str, str, str], tuple[int, int, int]] = {}
        self.corpus: list[tuple[int, int, int]] = []
        self.rarity: list[tuple[str, ...]] = []          # relations shown by each corpus triple
        self.seen = Counter()                             # relation -> corpus triples showing it
        self.by_pair: dict[tuple[str, str], list] = {}    # two of a fact's relations -> facts
        self.evaluated = 0

    def region(self, bits: int) -> CellRegion | None:
        reg = self.regions.get(bits)
        if reg is None:
            if not bits or bits & ~self.g.usable:
                return None
            reg = CellRegion(self.g, bits)
            if self.connected and not reg.is_connected():
                return None
            if len(self.regions) > 200_000:
                self.regions.clear()
            self.regions[bits] = reg
        return reg

    def evaluate(self, triple: tuple[int, int, int]) -> int:
        regs = [self.region(b) for b in triple]
        if any(r is None for r in regs):
            return 0
        self.evaluated += 1
        new = 0
        rels = set()
        for fact, order in facts_of(regs, rcc23_relation):
            rels.update(fact)
            if fact not in self.facts:
                self.facts[fact] = tuple(triple[i] for i in order)
                a, b, c = fact
                for key in ((a, b), (a, "*" + c), ("*" + b, c)):
                    self.by_pair.setdefault(key, []).append(fact)
                new += 1
        if new:
            self.corpus.append(triple)
            self.rarity.append(tuple(rels))
            self.seen.update(rels)
        return new

    def pick(self) -> list[int]:
        """A corpus triple: the one showing the rarest relation among a few drawn at random."""
        idx = [self.rng.randrange(len(self.corpus)) for _ in range(6)]
        best = min(idx, key=lambda i: min(self.seen[r] for r in self.rarity[i]))
        return list(self.corpus[best])

    def structured(self) -> None:
        """Two regions of a corpus triple and every structured third region for them."""
        t = self.pick()
        i, j = self.rng.sample(range(3), 2)
        x, y = self.region(t[i]), self.region(t[j])
        for z in structured_thirds(self.rng, self.g, x, y):
            self.evaluate((t[i], t[j], z))

    def step(self) -> None:
        rng, g = self.rng, self.g
        if self.corpus and rng.random() < 0.05:
            self.structured()
            return
        if not self.corpus or rng.random() < 0.25:
            self.evaluate(random_triple(rng, g))
            return
        base = list(rng.choice(self.corpus[-2000:])) if rng.random() < 0.4 else self.pick()
        if rng.random() < 0.05:
            base = scaled(g, base)
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            i = rng.randrange(3)
            if rng.random() < 0.1:
                base[i] = random_around(rng, g, [base[(i + 1) % 3], base[(i + 2) % 3]][::rng.choice((1, -1))])
            else:
                base[i] = mutate(rng, g, base[i])
        self.evaluate(tuple(base))


def exhaustive(s: "Search", k: int) -> int:
    """Every triple of regions made of cells of a k x k block (all non-empty subsets, in any
    overlap): the relation of every ordered pair is computed once, then each middle region's
    facts are read off with numpy.  Returns the number of new facts."""
    import numpy as np
    g = Grid(k + 2)
    block = [(r, c) for r in range(1, k + 1) for c in range(1, k + 1)]
    regs = [g.region(cell for i, cell in enumerate(block) if m >> i & 1) for m in range(1, 1 << len(block))]
    names = sorted({rcc23_relation(a, b) for a in regs[:1] for b in regs} | set(rcc23_names()))
    index = {n: i for i, n in enumerate(names)}
    rel = np.array([[index[rcc23_relation(a, b)] for b in regs] for a in regs], dtype=np.int32)
    n = len(names)
    before = len(s.facts)
    for j in range(len(regs)):
        ids = rel[:, j][:, None] * n * n + rel[j, :][None, :] * n + rel
        for fid in np.unique(ids):
            fact = (names[fid // (n * n)], names[fid // n % n], names[fid % n])
            if fact not in s.facts:
                a, c = np.argwhere(ids == fid)[0]
                triple = tuple(s.g.region(g.cells(regs[i].bits)).bits for i in (a, j, c))
                s.evaluate(triple)
    return len(s.facts) - before


def rcc23_names() -> list[str]:
    """The 23 RCC-23 relation names."""
    return ["EQ", "PO", "TPP", "NTPP", "TPPi", "NTPPi"] + [
        a + b + c for a in "IPO" for b in "IPO" for c in "ED" if (a, b, c) != ("I", "I", "D")]


def cover(s: "Search") -> dict[tuple[int, int, int], set]:
    """A small set of triples showing every fact (greedy set cover), each with the facts it
    is kept for."""
    shows = {}
    for triple in set(s.facts.values()):
        shows[triple] = {f for f, _ in facts_of([s.region(b) for b in triple], rcc23_relation)}
    todo, chosen = set(s.facts), {}
    while todo:
        best = max(shows, key=lambda t: (len(shows[t] & todo), t))
        chosen[best] = shows[best] & todo
        todo -= shows.pop(best)
    return chosen


def shrink(s: "Search", triple: tuple[int, int, int], keep: set) -> tuple[int, int, int]:
    """Remove cells one at a time (regions stay one piece) while the triple still shows every
    fact in ``keep``: smaller witnesses draw smaller pictures."""
    cur = list(triple)
    for i in range(3):
        cells = s.g.cells(cur[i])
        s.rng.shuffle(cells)
        for r, c in cells:
            cand = list(cur)
            cand[i] &= ~s.g.bit(r, c)
            regs = [s.region(b) for b in cand]
            if None not in regs and keep <= {f for f, _ in facts_of(regs, rcc23_relation)}:
                cur = cand
    return tuple(cur)


def compact(g: Grid, triple) -> tuple[Grid, tuple[int, int, int]]:
    """The triple moved to the top-left corner of the smallest grid that holds it (relations
    do not change under translation)."""
    cells = [g.cells(b) for b in triple]
    r0 = min(r for cs in cells for r, _ in cs)
    c0 = min(c for cs in cells for _, c in cs)
    n = max(max(r - r0, c - c0) for cs in cells for r, c in cs) + 3
    small = Grid(n)
    return small, tuple(small.region((r - r0 + 1, c - c0 + 1) for r, c in cs).bits for cs in cells)


def save(s: "Search", path: Path, shrink_cells: bool = False) -> int:
    chosen = cover(s)
    triples = [shrink(s, t, keep) if shrink_cells else t for t, keep in chosen.items()]
    return write_witnesses(path, [compact(s.g, t) for t in triples])


def _grid_size(text: str) -> int:
    n = int(text)
    if not 5 <= n <= 64:
        raise argparse.ArgumentTypeError(f"grid size must be 5-64, got {n}")
    return n


def _existing_file(text: str) -> Path:
    if not Path(text).is_file():
        raise argparse.ArgumentTypeError(f"no such witness file: {text}")
    return Path(text)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--grid", type=_grid_size, default=24, help="grid size n, 5-64 (usable (n-2)^2 cells)")
    ap.add_argument("--connected", action="store_true",
                    help="only edge-connected regions (default: regions may have several pieces, "
                         "as RCC's regular closed sets may)")
    ap.add_argument("--merge", action="store_true", help="keep the witnesses already in the file")
    ap.add_argument("-o", "--out", type=Path, required=True,
                    help=f"witness file to write (the package reads {WITNESS_FILE})")
    ap.add_argument("--seed-from", type=_existing_file, nargs="*", default=[],
                    help="witness files whose triples start the search")
    ap.add_argument("--shrink", action="store_true",
                    help="before the final write, remove every cell the kept facts do not need")
    ap.add_argument("--exhaustive", type=int, default=0, choices=(0, 1, 2, 3),
                    help="first try every triple of regions inside a K x K block")
    args = ap.parse_args(argv)
    global MULTI_PIECE
    if args.connected:
        MULTI_PIECE = 0.0
    s = Search(args.grid, args.seed, connected=args.connected)
    seeds = args.seed_from + ([args.out] if args.merge and args.out.exists() else [])
    for other in seeds:
        for grid, triple in read_witnesses(other):
            if grid.n <= args.grid:          # a smaller grid's cells keep their places
                s.evaluate(tuple(s.g.region(grid.cells(b)).bits for b in triple))
    if args.exhaustive:
        print(f"exhaustive {args.exhaustive}x{args.exhaustive}: {exhaustive(s, args.exhaustive)} new facts",
              file=sys.stderr)
    t0 = time.monotonic()
    last = t0
    while time.monotonic() - t0 < args.seconds:
        for _ in range(200):
            s.step()
        if time.monotonic() - last > 30:
            last = time.monotonic()
            print(f"{last - t0:6.0f} s  {s.evaluated:9d} triples  {len(s.facts):5d} facts", file=sys.stderr)
            save(s, args.out)
    save(s, args.out, shrink_cells=args.shrink)
    print(f"{len(s.facts)} facts from {s.evaluated} triples -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
