"""Region calculi: RCC-8 (cited table), RCC-5 (coarsened from RCC-8), RCC-22 and 9IM.

* **RCC-8** (Randell, Cui & Cohn 1992): the composition table cannot be derived by a finite
  enumeration, so it is entered once below from the published table (Randell, Cui & Cohn
  1992, Table 2; the same table as Cohn, Bennett, Gooday & Gotts 1997, Table 1), and checked
  by :meth:`~stsim.qstr.calculus.Calculus.check` (identity and converse laws) and against GQR
  in the tests.  Its conceptual neighbourhood is QSTRBench Fig. 1 (Randell & Cohn 1989).
* **RCC-5** (Bennett 1994; Jonsson & Drakengren 1997): the coarsening DC, EC -> DR;
  TPP, NTPP -> PP; TPPi, NTPPi -> PPi.  Composition of two RCC-5 relations is the coarsened
  union of the compositions of their RCC-8 refinements; the neighbourhood is the image of the
  RCC-8 neighbourhood (edges inside one class dropped).
* **RCC-22** (QSTRBench §3, Appendix C; Cohn, Randell & Cui 1995 for RCC-23): the six RCC-8
  relations other than DC and EC, plus ``α_β_γ`` where ``α`` says whether x is INSIDE,
  PINSIDE (partly inside) or OUTSIDE the convex hull of y, ``β`` the same for y and the hull
  of x (suffix ``i``), and ``γ`` is EC or DC; INSIDE_INSIDEi is excluded.  Converse swaps
  ``α`` and ``β``; the neighbourhood is computed by the dominance rules of Appendix C.  The
  composition table is *derived from witnesses*: concrete region triples on a cell grid, each
  classified exactly (:mod:`stsim.qstr.rcc23_witnesses`); RCC-22 drops IIE from it.
* **9IM** (Egenhofer & Franzosa 1991): eight region-region relations, each defined by its
  3x3 intersection matrix (interior, boundary, exterior of x against those of y).  Converse is
  the matrix transpose; each matrix is mapped to the RCC-8 relation it satisfies (interiors,
  boundaries, and parthood read off the matrix), which carries the RCC-8 composition table
  over; the "closest topological relationships" are those at the least non-zero matrix
  distance (QSTRBench §3.1), made symmetric (the relation graph of Egenhofer & Al-Taha 1992).
"""
from __future__ import annotations

from itertools import product

import numpy as np

from .calculus import Calculus, CalculusError, Relation, table_from_rows

# ------------------------------------------------------------------------------------ RCC-8
_RCC8 = (
    Relation("DC", "disconnected", "x and y share no point, not even on their boundaries."),
    Relation("EQ", "equal", "x and y occupy exactly the same region."),
    Relation("PO", "partial_overlap", "x and y share some interior, but neither is part of the other."),
    Relation("TPP", "tangential_proper_part",
             "x is part of y, x and y differ, and the boundary of x touches the boundary of y."),
    Relation("EC", "externally_connected",
             "x and y touch at their boundaries but share no interior point."),
    Relation("NTPP", "nontangential_proper_part",
             "x is part of y, x and y differ, and the boundary of x does not touch the boundary of y."),
    Relation("TPPi", "tangential_proper_part_inverse",
             "y is part of x, x and y differ, and the boundary of y touches the boundary of x.",
             ("TPPI", "TPP-1")),
    Relation("NTPPi", "nontangential_proper_part_inverse",
             "y is part of x, x and y differ, and the boundary of y does not touch the boundary of x.",
             ("NTPPI", "NTPP-1")),
)

_ALL8 = "DC EC PO TPP NTPP TPPi NTPPi EQ"
#: Randell, Cui & Cohn (1992), Table 2 (rows r, columns s: r ∘ s).
_RCC8_ROWS = {
    "DC": {"DC": _ALL8, "EC": "DC EC PO TPP NTPP", "PO": "DC EC PO TPP NTPP",
           "TPP": "DC EC PO TPP NTPP", "NTPP": "DC EC PO TPP NTPP", "TPPi": "DC",
           "NTPPi": "DC", "EQ": "DC"},
    "EC": {"DC": "DC EC PO TPPi NTPPi", "EC": "DC EC PO TPP TPPi EQ", "PO": "DC EC PO TPP NTPP",
           "TPP": "EC PO TPP NTPP", "NTPP": "PO TPP NTPP", "TPPi": "DC EC", "NTPPi": "DC",
           "EQ": "EC"},
    "PO": {"DC": "DC EC PO TPPi NTPPi", "EC": "DC EC PO TPPi NTPPi", "PO": _ALL8,
           "TPP": "PO TPP NTPP", "NTPP": "PO TPP NTPP", "TPPi": "DC EC PO TPPi NTPPi",
           "NTPPi": "DC EC PO TPPi NTPPi", "EQ": "PO"},
    "TPP": {"DC": "DC", "EC": "DC EC", "PO": "DC EC PO TPP NTPP", "TPP": "TPP NTPP",
            "NTPP": "NTPP", "TPPi": "DC EC PO TPP TPPi EQ", "NTPPi": "DC EC PO TPPi NTPPi",
            "EQ": "TPP"},
    "NTPP": {"DC": "DC", "EC": "DC", "PO": "DC EC PO TPP NTPP", "TPP": "NTPP", "NTPP": "NTPP",
             "TPPi": "DC EC PO TPP NTPP", "NTPPi": _ALL8, "EQ": "NTPP"},
    "TPPi": {"DC": "DC EC PO TPPi NTPPi", "EC": "EC PO TPPi NTPPi", "PO": "PO TPPi NTPPi",
             "TPP": "PO TPP TPPi EQ", "NTPP": "PO TPP NTPP", "TPPi": "TPPi NTPPi",
             "NTPPi": "NTPPi", "EQ": "TPPi"},
    "NTPPi": {"DC": "DC EC PO TPPi NTPPi", "EC": "PO TPPi NTPPi", "PO": "PO TPPi NTPPi",
              "TPP": "PO TPPi NTPPi", "NTPP": "PO TPP NTPP TPPi NTPPi EQ", "TPPi": "NTPPi",
              "NTPPi": "NTPPi", "EQ": "NTPPi"},
    "EQ": {s: s for s in _ALL8.split()},
}
#: QSTRBench Fig. 1 (Randell & Cohn 1989): undirected conceptual-neighbour edges.
_RCC8_CN_EDGES = (("DC", "EC"), ("EC", "PO"), ("PO", "TPP"), ("PO", "TPPi"), ("PO", "EQ"),
                  ("TPP", "NTPP"), ("TPP", "EQ"), ("TPPi", "NTPPi"), ("TPPi", "EQ"),
                  ("NTPP", "EQ"), ("NTPPi", "EQ"))
_RCC8_CONV = {"DC": "DC", "EC": "EC", "PO": "PO", "EQ": "EQ", "TPP": "TPPi", "TPPi": "TPP",
              "NTPP": "NTPPi", "NTPPi": "NTPP"}
_RCC_SUMMARY = ("is a qualitative spatial calculus about non-empty regular closed regions of "
                "uniform dimension in a topological space.")


def _edges_to_nb(names, edges) -> dict[str, frozenset[str]]:
    nb = {n: set() for n in names}
    for a, b in edges:
        nb[a].add(b)
        nb[b].add(a)
    return {n: frozenset(v) for n, v in nb.items()}


def build_rcc8() -> Calculus:
    names = [r.name for r in _RCC8]
    return Calculus(
        key="rcc8", title="Region Connection Calculus RCC-8", abbrev="RCC-8",
        summary=(f"The Region Connection Calculus (RCC-8) {_RCC_SUMMARY} Its eight base relations "
                 "are jointly exhaustive and pairwise disjoint."),
        relations=_RCC8, identity="EQ", converse=dict(_RCC8_CONV),
        composition=table_from_rows(_RCC8_ROWS), neighbours=_edges_to_nb(names, _RCC8_CN_EDGES),
        kind="region",
        source={"composition": "entered from Randell, Cui & Cohn (1992) Table 2",
                "neighbours": "QSTRBench Fig. 1 (Randell & Cohn 1989)"})


# ------------------------------------------------------------------------------------ RCC-5
RCC8_TO_RCC5 = {"DC": "DR", "EC": "DR", "PO": "PO", "TPP": "PP", "NTPP": "PP",
                "TPPi": "PPi", "NTPPi": "PPi", "EQ": "EQ"}
_RCC5 = (
    Relation("DR", "discrete", "x and y share no interior point."),
    Relation("EQ", "equal", "x and y occupy exactly the same region."),
    Relation("PO", "partial_overlap", "x and y share some interior, but neither is part of the other."),
    Relation("PP", "proper_part", "x is part of y and x and y differ."),
    Relation("PPi", "proper_part_inverse", "y is part of x and x and y differ.", ("PPI",)),
)


def coarsen(rcc8: Calculus, mapping: dict[str, str], relations: tuple[Relation, ...], **kw) -> Calculus:
    """Coarsen a calculus through a surjective ``mapping`` of its base relations.

    Composition of coarse relations A, B is the image of the union of ``a ∘ b`` over all
    refinements ``a`` of A and ``b`` of B; converse and neighbourhood are images too.

    Raises:
        CalculusError: (from :class:`Calculus`) when the image is inconsistent.
    """
    pre: dict[str, list[str]] = {}
    for fine, c in mapping.items():
        pre.setdefault(c, []).append(fine)
    comp = {}
    for a, b in product(pre, pre):
        comp[(a, b)] = frozenset(mapping[t] for x in pre[a] for y in pre[b] for t in rcc8.compose(x, y))
    conv = {c: mapping[rcc8.converse[fs[0]]] for c, fs in pre.items()}
    nb = {c: set() for c in pre}
    for fine, nbs in rcc8.neighbours.items():
        for other in nbs:
            if mapping[fine] != mapping[other]:
                nb[mapping[fine]].add(mapping[other])
    return Calculus(relations=relations, converse=conv, composition=comp,
                    neighbours={c: frozenset(v) for c, v in nb.items()}, **kw)


def build_rcc5(rcc8: Calculus) -> Calculus:
    return coarsen(rcc8, RCC8_TO_RCC5, _RCC5, key="rcc5", title="Region Connection Calculus RCC-5",
                   abbrev="RCC-5",
                   summary=(f"The Region Connection Calculus (RCC-5) {_RCC_SUMMARY} Its five base "
                            "relations are jointly exhaustive and pairwise disjoint."),
                   identity="EQ", kind="region",
                   source={"composition": "derived: RCC-8 table coarsened (DC,EC->DR; TPP,NTPP->PP)",
                           "neighbours": "derived: image of the RCC-8 neighbourhood"})


# ------------------------------------------------------------------------------------ RCC-22
_HULL = {"I": ("INSIDE", "inside"), "P": ("PINSIDE", "partly inside"), "O": ("OUTSIDE", "outside")}
_CONTACT = {"E": ("EC", "x and y touch at their boundaries but share no interior point"),
            "D": ("DC", "x and y share no point")}


def rcc22_code_name(code: str) -> str:
    """Long RCC-22 name of a three-letter code: ``IPD`` -> ``INSIDE_PINSIDEi_DC``."""
    a, b, g = code
    return f"{_HULL[a][0]}_{_HULL[b][0]}i_{_CONTACT[g][0]}"


def rcc22_name(rcc23: str) -> str:
    """RCC-22 name of an RCC-23 relation name: RCC-8 names stay, ``IPD`` -> ``INSIDE_PINSIDEi_DC``."""
    hull_code = len(rcc23) == 3 and rcc23[0] in _HULL and rcc23[2] in _CONTACT
    return rcc22_code_name(rcc23) if hull_code else rcc23


def rcc23_code(rcc22: str) -> str:
    """Inverse of :func:`rcc22_name`: ``INSIDE_PINSIDEi_DC`` -> ``IPD``; RCC-8 names stay."""
    return _CODES.get(rcc22, rcc22)


def _rcc22_codes() -> list[str]:
    return [a + b + g for a, b in product("IPO", repeat=2) if (a, b) != ("I", "I") for g in "ED"]


_CODES = {rcc22_code_name(c): c for c in _rcc22_codes()}


def _rcc22_dominates(p: str, q: str) -> bool:
    """QSTRBench Appendix C: outside and inside dominate partly-inside; EC dominates DC."""
    return p == q or (p, q) in {("O", "P"), ("I", "P"), ("E", "D")}


def rcc22_composition(names: list[str]) -> dict[tuple[str, str], frozenset[str]]:
    """RCC-22 composition (long names) from the witness-derived RCC-23 table, IIE dropped.

    Raises:
        CalculusError: some entry ``R ∘ S`` is shown by no witness triple (a weak composition
            of base relations is never empty, so the witness file is incomplete or damaged).
    """
    from .rcc23_witnesses import WITNESS_FILE, derive_rcc23_composition
    comp = {(rcc22_name(r), rcc22_name(s)): frozenset(rcc22_name(t) for t in ts if t != "IIE")
            for (r, s), ts in derive_rcc23_composition().items() if "IIE" not in (r, s)}
    missing = [(r, s) for r in names for s in names if not comp.get((r, s))]
    if missing:
        raise CalculusError(f"RCC-22: no witness triple in {WITNESS_FILE} shows {len(missing)} of "
                            f"{len(names) ** 2} composition entries (e.g. {missing[0][0]} ∘ "
                            f"{missing[0][1]}): the file is incomplete or damaged")
    return {(r, s): comp[(r, s)] for r in names for s in names}


def build_rcc22(rcc8: Calculus) -> Calculus:
    codes = _rcc22_codes()
    core = [r for r in _RCC8 if r.name not in ("DC", "EC")]
    rels = list(core)
    for c in codes:
        a, b, g = c
        rels.append(Relation(
            rcc22_code_name(c), rcc22_code_name(c).lower(),
            f"{_CONTACT[g][1]}; x is {_HULL[a][1]} the convex hull of y and y is {_HULL[b][1]} "
            "the convex hull of x.", aliases=(c,)))
    conv = {r.name: rcc8.converse[r.name] for r in core}
    conv.update({rcc22_code_name(c): rcc22_code_name(c[1] + c[0] + c[2]) for c in codes})
    edges = [(a, b) for a, b in _RCC8_CN_EDGES if "DC" not in (a, b) and "EC" not in (a, b)]
    edges += [("PO", rcc22_code_name(c)) for c in codes if c[2] == "E"]
    for c1, c2 in product(codes, repeat=2):
        if c1 != c2 and all(_rcc22_dominates(p, q) for p, q in zip(c1, c2)):
            edges.append((rcc22_code_name(c1), rcc22_code_name(c2)))
    return Calculus(
        key="rcc22", title="Region Connection Calculus RCC-22", abbrev="RCC-22",
        summary=("The Region Connection Calculus (RCC-22) is a qualitative spatial calculus about "
                 "convex or concave non-empty regular closed regions of uniform dimension in a "
                 "topological space. It refines the RCC-8 relations DC and EC by where each region "
                 "lies with respect to the convex hull of the other, giving twenty-two jointly "
                 "exhaustive and pairwise disjoint base relations."),
        anonymous_summary=("a qualitative spatial calculus about convex or concave non-empty "
                           "regular closed regions of uniform dimension in a topological space. "
                           "Two regions that share no interior point are told apart by whether "
                           "they touch and by where each lies with respect to the convex hull of "
                           "the other, giving twenty-two jointly exhaustive and pairwise disjoint "
                           "base relations."),
        relations=tuple(rels), identity="EQ", converse=conv,
        composition=rcc22_composition([r.name for r in rels]),
        neighbours=_edges_to_nb([r.name for r in rels], edges), kind="region",
        source={"composition": "derived: every entry realised by a region triple on a cell grid "
                               "(stsim/data/rcc23_witnesses.txt), classified exactly; IIE dropped",
                "neighbours": "derived: QSTRBench Appendix C dominance rules + RCC-8 neighbourhood"})


# ------------------------------------------------------------------------------------ 9IM
#: Egenhofer & Franzosa (1991): rows interior, boundary, exterior of x; columns those of y.
_9IM_MATRICES = {
    "D": ((0, 0, 1), (0, 0, 1), (1, 1, 1)),
    "M": ((0, 0, 1), (0, 1, 1), (1, 1, 1)),
    "O": ((1, 1, 1), (1, 1, 1), (1, 1, 1)),
    "E": ((1, 0, 0), (0, 1, 0), (0, 0, 1)),
    "I": ((1, 0, 0), (1, 0, 0), (1, 1, 1)),
    "CB": ((1, 0, 0), (1, 1, 0), (1, 1, 1)),
    "CT": ((1, 1, 1), (0, 0, 1), (0, 0, 1)),
    "CV": ((1, 1, 1), (0, 1, 1), (0, 0, 1)),
}
_9IM_WORDS = {"D": "disjoint", "M": "meet", "O": "overlap", "E": "equal", "I": "inside",
              "CB": "covered_by", "CT": "contains", "CV": "covers"}
_PARTS = ("interior", "boundary", "exterior")


def nine_im_to_rcc8(m) -> str:
    """The RCC-8 relation satisfied by regions with 9-intersection matrix ``m`` (3x3 of 0/1).

    Interiors meet iff ``m[0][0]``; closures meet iff an interior or boundary entry meets;
    x is part of y iff x's interior and boundary miss y's exterior.
    """
    m = np.asarray(m)
    x_in_y = not m[0, 2] and not m[1, 2]
    y_in_x = not m[2, 0] and not m[2, 1]
    touch = bool(m[1, 1])
    if not m[0, 0]:
        return "EC" if touch else "DC"
    if x_in_y and y_in_x:
        return "EQ"
    if x_in_y:
        return "TPP" if touch else "NTPP"
    if y_in_x:
        return "TPPi" if touch else "NTPPi"
    return "PO"


def _describe_matrix(m) -> str:
    parts = []
    for i, a in enumerate(_PARTS):
        for j, b in enumerate(_PARTS):
            parts.append(f"the {a} of x and the {b} of y {'intersect' if m[i][j] else 'do not intersect'}")
    return "; ".join(parts) + "."


def build_9im(rcc8: Calculus) -> Calculus:
    names = list(_9IM_MATRICES)
    mats = {n: np.asarray(v) for n, v in _9IM_MATRICES.items()}
    to8 = {n: nine_im_to_rcc8(m) for n, m in mats.items()}
    from8 = {v: k for k, v in to8.items()}
    conv = {n: next(k for k, v in mats.items() if np.array_equal(v, m.T)) for n, m in mats.items()}
    comp = {(a, b): frozenset(from8[t] for t in rcc8.compose(to8[a], to8[b]))
            for a, b in product(names, repeat=2)}
    dist = {(a, b): int(np.abs(mats[a] - mats[b]).sum()) for a, b in product(names, repeat=2)}
    edges = []
    for a in names:
        least = min(d for (p, q), d in dist.items() if p == a and d > 0)
        edges += [(a, b) for b in names if dist[(a, b)] == least]
    rels = tuple(Relation(n, _9IM_WORDS[n], _describe_matrix(_9IM_MATRICES[n]),
                          aliases=(_9IM_WORDS[n].replace("_", ""),)) for n in names)
    return Calculus(
        key="9im", title="Egenhofer's nine-intersection model", abbrev="9IM",
        summary=("The nine-intersection model (9IM) is a qualitative spatial calculus about "
                 "one-piece non-empty regular closed regions with connected boundaries in the "
                 "plane. A relation is given by which of the nine intersections between the "
                 "interior, boundary and exterior of x and those of y are empty; eight such "
                 "relations are possible between two regions, and they are jointly exhaustive "
                 "and pairwise disjoint."),
        relations=rels, identity="E", converse=conv, composition=comp,
        neighbours=_edges_to_nb(names, edges), kind="9im",
        source={"composition": "derived: matrices mapped to RCC-8, RCC-8 table carried over",
                "converse": "derived: matrix transpose",
                "neighbours": "derived: least non-zero matrix distance, made symmetric"})
