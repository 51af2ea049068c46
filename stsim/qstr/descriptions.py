"""Calculus descriptions for prompts: textual, schematic (ASCII), point-set, LaTeX and Unicode
(own wording; the formulas are the standard RCC definitions of Randell, Cui & Cohn 1992).

Schematics are *drawn* from configurations that realise each relation (correct by
construction): points for PA, interval pairs for IA and INDU, regions on a line for RCC-8 and
(through the coarsening) RCC-5, and for RCC-22 the smallest region pair on a cell grid found
among the witness triples of :mod:`stsim.qstr.rcc23_witnesses` (convex hulls need two
dimensions).
"""
from __future__ import annotations

from functools import lru_cache
from itertools import combinations, product

from .calculus import Calculus

SCHEMATIC_KEYS = ("pa", "ia", "indu", "rcc5", "rcc8", "rcc22")

_LEGEND = {
    "region": ("The relations are drawn below in one dimension: X marks space occupied by x only, "
               "Y space occupied by y only, B space occupied by both, and ~ space occupied by neither."),
    "interval": ("The relations are drawn below on a time line: the row of X shows when x lasts and "
                 "the row of Y when y lasts."),
    "point": "The relations are drawn below on a time line: X marks x, Y marks y, B both at once.",
    "grid": ("The relations are drawn below as examples on a grid of square cells, one character "
             "per cell: X marks a cell of x only, Y a cell of y only, B a cell of both, and ~ a "
             "cell of neither. Cells that share a side or only a corner touch each other, and a "
             "region may consist of several separate groups of cells."),
}

_POINT_SET = {
    "DC": "the closures of x and y have no point in common.",
    "EC": "the closures of x and y have a point in common, but their interiors have none.",
    "PO": ("the interiors of x and y have a point in common, the interior of x has a point outside "
           "the interior of y, and the interior of y has a point outside the interior of x."),
    "EQ": "every point of the closure of x is in the closure of y and every point of the closure of y is in the closure of x.",
    "TPP": ("every point of the closure of x is in the closure of y, the interior of y has a point "
            "outside the interior of x, and some boundary point of x is also a boundary point of y."),
    "NTPP": ("every point of the closure of x is in the interior of y, and the interior of y has a "
             "point outside the interior of x."),
    "TPPi": ("every point of the closure of y is in the closure of x, the interior of x has a point "
             "outside the interior of y, and some boundary point of y is also a boundary point of x."),
    "NTPPi": ("every point of the closure of y is in the interior of x, and the interior of x has a "
              "point outside the interior of y."),
}

_C_INTRO = ("The relations are defined from one primitive, the connection relation C(x,y), read as "
            "'the closures of x and y share a point'.")
_LATEX = {
    "axioms": [r"\forall x \, C(x,x)", r"\forall x \forall y \, [C(x,y) \rightarrow C(y,x)]"],
    "aux": [r"P(x,y) \equiv \forall z \, [C(z,x) \rightarrow C(z,y)]",
            r"O(x,y) \equiv \exists z \, [P(z,x) \wedge P(z,y)]",
            r"PP(x,y) \equiv P(x,y) \wedge \neg P(y,x)"],
    "defs": {
        "DC": r"\neg C(x,y)", "EC": r"C(x,y) \wedge \neg O(x,y)",
        "PO": r"O(x,y) \wedge \neg P(x,y) \wedge \neg P(y,x)", "EQ": r"P(x,y) \wedge P(y,x)",
        "TPP": r"PP(x,y) \wedge \exists z \, [EC(z,x) \wedge EC(z,y)]",
        "NTPP": r"PP(x,y) \wedge \neg \exists z \, [EC(z,x) \wedge EC(z,y)]",
        "TPPi": r"PP(y,x) \wedge \exists z \, [EC(z,x) \wedge EC(z,y)]",
        "NTPPi": r"PP(y,x) \wedge \neg \exists z \, [EC(z,x) \wedge EC(z,y)]",
    },
}
_TO_UNICODE = [(r"\forall ", "∀"), (r"\exists ", "∃"), (r"\rightarrow", "→"), (r"\equiv", "≡"),
               (r"\wedge", "∧"), (r"\neg ", "¬"), (r"\, ", ""), ("  ", " ")]


def _unicode(tex: str) -> str:
    for a, b in _TO_UNICODE:
        tex = tex.replace(a, b)
    return tex


def _summary(cal: Calculus, style) -> str:
    """The calculus paragraph: named, or (anonymous styles) without the calculus's name and
    anything that names relations; the note on symbols only when symbols are shown."""
    text = cal.summary
    if style.anonymous:
        from .prompts import ANONYMOUS_TITLE
        text = f"{ANONYMOUS_TITLE} is {cal.anonymous_summary or cal.summary.partition(' is ')[2]}"
    if style.naming == "symbol" and cal.symbol_note:
        text += " " + cal.symbol_note
    return text


def describe(cal: Calculus, names: dict[str, str], style) -> str:
    """Description block of ``cal`` with display ``names`` in ``style`` (see
    :class:`stsim.qstr.prompts.Style`).

    Raises:
        ValueError: a description kind that does not exist or does not apply to ``cal``.
    """
    from .prompts import atom
    kind = style.description
    order = list(cal.names)
    if kind == "none":
        return ""
    lines = [_summary(cal, style)]
    if kind in ("text", "reverse", "swapped"):
        if kind == "reverse":
            order.reverse()
        lines += [f"{atom(names[n], 'x', 'y', style)} means that {cal.relation(n).description}" for n in order]
    elif kind == "schematic":
        if cal.key not in SCHEMATIC_KEYS:
            raise ValueError(f"no schematic description for {cal.abbrev}")
        lines.append(_LEGEND["grid" if cal.key == "rcc22" else cal.kind])
        for n in order:
            pics = schematics(cal.key)[n]
            lines.append(f"{atom(names[n], 'x', 'y', style)} is drawn as:\n" + "\nor\n".join(pics))
    elif kind == "point":
        _rcc8_only(cal, kind)
        lines += [f"{atom(names[n], 'x', 'y', style)} means that {_POINT_SET[n]}" for n in order]
    elif kind in ("latex", "unicode"):
        _rcc8_only(cal, kind)
        conv = (lambda t: f"$ {t} $") if kind == "latex" else _unicode
        lines.append(_C_INTRO)
        lines.append("Axioms of C:\n" + "\n".join(conv(t) for t in _LATEX["axioms"]))
        lines.append("Auxiliary relations:\n" + "\n".join(conv(t) for t in _LATEX["aux"]))
        lines.append("The eight relations:\n" + "\n".join(
            conv(f"{names[n]}(x,y) \\equiv {_LATEX['defs'][n]}") for n in order))
    else:
        raise ValueError(f"unknown description kind {kind!r}")
    return "\n\n".join(lines)


def _rcc8_only(cal: Calculus, kind: str) -> None:
    if cal.key != "rcc8":
        raise ValueError(f"the {kind} description exists for RCC-8 only, not {cal.abbrev}")


def rcc8_1d(a: int, b: int, c: int, d: int) -> str:
    """RCC-8 relation of the closed interval ``[a, b]`` to ``[c, d]`` (regions on a line)."""
    if b < c or d < a:
        return "DC"
    if b == c or d == a:
        return "EC"
    if (a, b) == (c, d):
        return "EQ"
    if c <= a and b <= d:
        return "TPP" if a == c or b == d else "NTPP"
    if a <= c and d <= b:
        return "TPPi" if a == c or b == d else "NTPPi"
    return "PO"


def _draw_regions(a: int, b: int, c: int, d: int) -> str:
    """One character per stretch between consecutive endpoints (two for occupied stretches):
    X only x, Y only y, B both, ~ neither."""
    pts = sorted({a, b, c, d})
    out = []
    for lo, hi in zip(pts, pts[1:]):
        inx, iny = a <= lo and hi <= b, c <= lo and hi <= d
        ch = "B" if inx and iny else "X" if inx else "Y" if iny else "~"
        out.append(ch if ch == "~" else ch * 2)
    return "".join(out)


@lru_cache(maxsize=None)
def schematics(key: str) -> dict[str, tuple[str, ...]]:
    """Canonical name -> ASCII pictures, drawn from configurations that realise each relation.

    PA: points on a line.  IA, INDU: the smallest pair of intervals (rows of X and Y).
    RCC-8, RCC-5: regions on a line, every endpoint ordering realising the relation (mirror
    images included), RCC-5 through the RCC-8 coarsening.

    Raises:
        ValueError: a calculus outside :data:`SCHEMATIC_KEYS`.
    """
    from .catalogue import get_calculus
    from .temporal import ia_relation, indu_relation
    from .topology import RCC8_TO_RCC5
    if key not in SCHEMATIC_KEYS:
        raise ValueError(f"no schematic pictures for {key!r}")
    if key == "rcc22":
        return _rcc22_schematics()
    cal = get_calculus(key)
    if key in ("rcc5", "rcc8"):
        found: dict[str, list[str]] = {n: [] for n in cal.names}
        for a, b, c, d in product(range(4), repeat=4):
            if a < b and c < d and len({a, b, c, d}) == max(a, b, c, d) + 1 and min(a, c) == 0:
                rel = rcc8_1d(a, b, c, d)
                rel = RCC8_TO_RCC5[rel] if key == "rcc5" else rel
                pic = _draw_regions(a, b, c, d)
                if pic not in found[rel]:
                    found[rel].append(pic)
        return {n: tuple(sorted(v, key=lambda p: (len(p), p))) for n, v in found.items()}
    if key == "pa":
        return {"<": ("X Y",), "=": ("B",), ">": ("Y X",)}
    classify = ia_relation if key == "ia" else indu_relation
    ivs = sorted(combinations(range(5), 2), key=lambda p: (p[1], p))
    out: dict[str, tuple[str, ...]] = {}
    pairs = sorted(((p, q) for p in ivs for q in ivs), key=lambda pq: (max(pq[0][1], pq[1][1]), pq))
    for p, q in pairs:
        rel = classify(*p, *q)
        if rel not in out:
            scale = 3
            x = " " * (p[0] * scale) + "X" * ((p[1] - p[0]) * scale)
            y = " " * (q[0] * scale) + "Y" * ((q[1] - q[0]) * scale)
            out[rel] = (f"{x}\n{y}",)
    return out


def draw_cells(grid, regions, chars: str = "~XYB") -> str:
    """Regions of a cell grid as text, one character per cell, cropped to their bounding box
    plus a one-cell margin (the first row is the grid's top row).  A cell's character is
    ``chars[m]`` where bit ``k`` of ``m`` says whether the cell is in ``regions[k]``: with the
    default, X is a cell of the first region only, Y of the second only, B of both, ~ of neither.
    """
    union = 0
    for b in regions:
        union |= b
    cells = grid.cells(union)
    r0, r1 = min(r for r, _ in cells) - 1, max(r for r, _ in cells) + 1
    c0, c1 = min(c for _, c in cells) - 1, max(c for _, c in cells) + 1
    rows = []
    for r in range(r0, r1 + 1):
        row = ""
        for c in range(c0, c1 + 1):
            bit = grid.bit(r, c)
            row += chars[sum(1 << k for k, b in enumerate(regions) if b & bit)]
        rows.append(row)
    return "\n".join(rows)


def _rcc22_schematics() -> dict[str, tuple[str, ...]]:
    """RCC-22 name -> the smallest picture (fewest cells, then text order) of an ordered pair
    of regions in that relation among the witness triples."""
    from .rcc23_witnesses import shipped_witnesses
    from .topology import rcc22_name
    best: dict[str, str] = {}
    for regs, rel in shipped_witnesses():
        for (i, j), r in rel.items():
            if r == "IIE":
                continue
            name = rcc22_name(r)
            pic = draw_cells(regs[i].grid, (regs[i].bits, regs[j].bits))
            if name not in best or (len(pic), pic) < (len(best[name]), best[name]):
                best[name] = pic
    return {n: (p,) for n, p in best.items()}
