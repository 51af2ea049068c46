"""The RCC-23 composition table derived from witness configurations.

``stsim/data/rcc23_witnesses.txt`` holds region triples (x, y, z) on a cell grid, found by
``scripts/find_rcc23_witnesses.py``.  :func:`derive_rcc23_composition` classifies every triple
again with the exact relations of :mod:`stsim.qstr.cell_regions` and puts ``T`` in ``R ∘ S``
for each ordering of the triple with R(x, y), S(y, z), T(x, z).  So every entry of the table
is *realised* by a configuration that anyone can draw (soundness by construction); that no
entry is missing is a claim of the search, checked in the tests against the reference table
of GQR (Cohn, Randell & Cui 1995, via ../shared/oracle).

Regions may have several pieces (RCC's regions are regular closed sets, not necessarily
connected); the reference table needs that, e.g. for INSIDE_OUTSIDEi_DC ∘ OUTSIDE_OUTSIDEi_DC ∋
INSIDE_OUTSIDEi_DC.  IIE never occurs between cell regions with disjoint interiors (each
extreme point of a hull lies in a single cell of it), so the derived table is RCC-23 without
IIE, i.e. RCC-22 written with RCC-23's names.

File format (UTF-8): a line ``grid N`` (3 <= N <= 256), then one triple per line: three
hexadecimal numbers (digits only, no sign or ``0x``), each the cells of one region read row by
row over the usable ``(N-2) x (N-2)`` cells (bit ``(r-1)*(N-2) + (c-1)`` is cell (r, c)); a
later ``grid`` line applies to the triples after it.  Lines starting with ``#`` are comments.
"""
from __future__ import annotations

import re
from functools import lru_cache
from itertools import permutations
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from .cell_regions import CellRegion, CellRegionError, Grid, rcc23_relation

WITNESS_FILE = Path(__file__).resolve().parents[1] / "data" / "rcc23_witnesses.txt"

Fact = tuple[str, str, str]

#: Largest grid a witness file may use (the shipped one uses N <= 24); bounds the work and
#: memory a damaged ``grid`` line can cause.
MAX_GRID = 256
_HEX = re.compile(r"[0-9a-fA-F]+")


class WitnessFileError(ValueError):
    """A malformed witness file (the message names the file and line)."""


def facts_of(regions: Sequence, relation: Callable) -> Iterator[tuple[Fact, tuple[int, int, int]]]:
    """The six composition facts shown by three regions, one per ordering ``(i, j, k)``:
    ``(relation(ri, rj), relation(rj, rk), relation(ri, rk))`` with the ordering."""
    rel = {(i, j): relation(regions[i], regions[j]) for i in range(3) for j in range(3) if i != j}
    for i, j, k in permutations(range(3)):
        yield (rel[(i, j)], rel[(j, k)], rel[(i, k)]), (i, j, k)


def _encode(g: Grid, bits: int) -> str:
    m = g.n - 2
    out = 0
    for r, c in g.cells(bits):
        out |= 1 << ((r - 1) * m + (c - 1))
    return format(out, "x")


def _decode(g: Grid, text: str) -> CellRegion:
    m = g.n - 2
    if not _HEX.fullmatch(text):
        raise CellRegionError(f"{text!r} is not a hexadecimal cell set")
    v = int(text, 16)
    if v >> (m * m):
        raise CellRegionError(f"{text} has cells beyond the {m}x{m} usable grid")
    row = (1 << m) - 1
    return CellRegion(g, sum(((v >> (r * m)) & row) << ((r + 1) * g.width + 1) for r in range(m)))


def read_witnesses(path: Path = WITNESS_FILE) -> list[tuple[Grid, tuple[int, int, int]]]:
    """(grid, (x bits, y bits, z bits)) for every triple in a witness file.

    Raises:
        WitnessFileError: text that is not UTF-8, a missing or malformed ``grid N`` line, a
            line without three hexadecimal regions, or an empty / out-of-grid region; the
            message names the file and line.
        OSError: the file cannot be read.
    """
    out = []
    grid = None
    with open(path, "rb") as fh:
        for no, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError as e:
                raise WitnessFileError(f"{path}:{no}: not UTF-8 text ({e.reason} at byte {e.start})") from None
            if not line or line.startswith("#"):
                continue
            parts = line.split()
            try:
                if parts[0] == "grid":
                    if len(parts) != 2 or not parts[1].isascii() or not parts[1].isdigit() \
                            or not 3 <= int(parts[1]) <= MAX_GRID:
                        raise ValueError(f"expected 'grid N' with 3 <= N <= {MAX_GRID}, got {line!r}")
                    grid = Grid(int(parts[1]))
                    continue
                if grid is None:
                    raise ValueError("no 'grid N' line before the first triple")
                if len(parts) != 3:
                    raise ValueError(f"expected three regions, got {len(parts)}")
                out.append((grid, tuple(_decode(grid, p).bits for p in parts)))
            except (ValueError, IndexError) as e:
                raise WitnessFileError(f"{path}:{no}: {e}") from None
    return out


def write_witnesses(path: Path, triples: Iterable[tuple[Grid, tuple[int, int, int]]]) -> int:
    """Write (grid, region triple) pairs in the witness file format, a ``grid N`` line before
    each run of triples on an N-grid; return how many triples were written."""
    rows = sorted((g.n, tuple(_encode(g, b) for b in t)) for g, t in triples)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("# RCC-23 witness triples x y z (made by scripts/find_rcc23_witnesses.py;\n"
                 "# format: stsim/qstr/rcc23_witnesses.py)\n")
        current = None
        for n, enc in rows:
            if n != current:
                fh.write(f"grid {n}\n")
                current = n
            fh.write(" ".join(enc) + "\n")
    return len(rows)


def classify_triples(triples: Iterable[tuple[Grid, tuple[int, int, int]]]
                     ) -> list[tuple[tuple[CellRegion, ...], dict[tuple[int, int], str]]]:
    """For each triple: its three regions and the RCC-23 relation of every ordered pair
    ``(i, j)`` of them."""
    out = []
    for grid, bits in triples:
        regs = tuple(CellRegion(grid, b) for b in bits)
        rel = {(i, j): rcc23_relation(regs[i], regs[j]) for i, j in permutations(range(3), 2)}
        out.append((regs, rel))
    return out


def composition_from_triples(triples: Iterable[tuple[Grid, tuple[int, int, int]]]
                             ) -> dict[tuple[str, str], frozenset[str]]:
    """``(R, S) -> {T}`` over every fact shown by the triples."""
    return _composition(classify_triples(triples))


def _composition(classified) -> dict[tuple[str, str], frozenset[str]]:
    comp: dict[tuple[str, str], set[str]] = {}
    for _, rel in classified:
        for i, j, k in permutations(range(3)):
            comp.setdefault((rel[(i, j)], rel[(j, k)]), set()).add(rel[(i, k)])
    return {k: frozenset(v) for k, v in comp.items()}


@lru_cache(maxsize=1)
def shipped_witnesses() -> tuple:
    """The shipped witness triples, classified (see :func:`classify_triples`)."""
    return tuple(classify_triples(read_witnesses(WITNESS_FILE)))


@lru_cache(maxsize=1)
def derive_rcc23_composition() -> dict[tuple[str, str], frozenset[str]]:
    """The RCC-23 weak composition table without IIE (RCC-8 names and ``IPD``-style codes),
    derived from the shipped witness triples (see the module docstring)."""
    return _composition(shipped_witnesses())


def find_witness(r: str, s: str, t: str) -> tuple[CellRegion, CellRegion, CellRegion] | None:
    """Regions (x, y, z) among the shipped witnesses with R(x, y) = ``r``, S(y, z) = ``s`` and
    T(x, z) = ``t`` (RCC-23 names): the one with the smallest bounding box, or None if ``t``
    is not in ``r ∘ s``."""
    best, best_area = None, None
    for regs, rel in shipped_witnesses():
        for i, j, k in permutations(range(3)):
            if (rel[(i, j)], rel[(j, k)], rel[(i, k)]) == (r, s, t):
                area = _box_area(regs)
                if best_area is None or area < best_area:
                    best, best_area = (regs[i], regs[j], regs[k]), area
    return best


def _box_area(regs) -> int:
    cells = [rc for reg in regs for rc in reg.grid.cells(reg.bits)]
    rows, cols = [r for r, _ in cells], [c for _, c in cells]
    return (max(rows) - min(rows) + 1) * (max(cols) - min(cols) + 1)
