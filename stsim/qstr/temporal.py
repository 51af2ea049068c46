"""Point Algebra, Allen's Interval Algebra and INDU, with tables derived by enumeration.

* **PA** (Vilain & Kautz 1986; QSTRBench §4.1): ``<``, ``=``, ``>`` between points on the
  real line.  Composition from all triples of points over the values {0, 1, 2}, which realise
  every weak ordering of three points; neighbourhood from the faces of ``sign(x - y)``.
* **IA** (Allen 1983; QSTRBench Table 6): thirteen relations between intervals
  ``[s, e]``, ``s < e``.  Composition from all triples of intervals with endpoints in 0..5,
  which realise every weak ordering of the six endpoints.  Neighbourhood: moving one endpoint
  at a time (Freksa 1992's A-neighbours, the neighbourhood usually printed for IA), found by
  :func:`~stsim.qstr.derive.neighbourhood_one_coordinate`; the wider neighbourhood where any
  endpoints may move together (faces of the endpoint differences: adds o, oi, d, di -- =) is
  kept as the ``"dominance"`` variant.
* **INDU** (Pujari, Kumari & Sattar 1999; QSTRBench Table 7): IA refined by the comparison
  of durations, 25 relations named ``b<``, ``eq=``, ``oi>`` ... (IA letter, then how the
  duration of x compares with that of y).  Composition from all triples of intervals with
  endpoints in 0..11, a grid fine enough to realise every combination of endpoint order and
  duration order (checked entry by entry against SparQ in the tests); neighbourhood from the
  faces of the endpoint differences plus the duration difference.
"""
from __future__ import annotations

from itertools import combinations

import numpy as np

from .calculus import Calculus, Relation
from .derive import (composition_from_sample, neighbourhood_from_faces, neighbourhood_one_coordinate,
                     sign)

# ------------------------------------------------------------------------------------- PA
_PA = (
    Relation("<", "before", "x is strictly earlier than y.", ("lt",)),
    Relation("=", "equal", "x and y are the same point in time.", ("eq",)),
    Relation(">", "after", "x is strictly later than y.", ("gt",)),
)


def _pa_rel(d: np.ndarray) -> np.ndarray:
    """PA relation index (0 '<', 1 '=', 2 '>') from ``x - y``."""
    return (np.sign(d) + 1).astype(np.int64)


def build_pa() -> Calculus:
    pts = np.arange(3)
    diff = pts[:, None] - pts[None, :]
    names = tuple(r.name for r in _PA)
    comp = composition_from_sample(_pa_rel(diff), names)
    nb = neighbourhood_from_faces(sign(diff.reshape(-1, 1)), _pa_rel(diff).ravel(), names)
    return Calculus(
        key="pa", title="Point Algebra", abbrev="PA",
        summary=("The Point Algebra (PA) is a qualitative temporal calculus about points on the "
                 "real number line. Its three base relations are jointly exhaustive and pairwise "
                 "disjoint."),
        relations=_PA, identity="=", converse={"<": ">", "=": "=", ">": "<"},
        composition=comp, neighbours=nb, kind="point",
        source={"composition": "derived: all triples of points over {0,1,2}",
                "neighbours": "derived: faces of sign(x - y)"})


# ------------------------------------------------------------------------------------- IA
#: (symbol, word, description, converse symbol); order of QSTRBench Table 6.
_IA_SPEC = (
    ("<", "before", "x ends before y starts.", ">"),
    (">", "after", "x starts after y ends.", "<"),
    ("=", "equal", "x and y start together and end together.", "="),
    ("m", "meets", "x ends exactly where y starts.", "mi"),
    ("mi", "met_by", "x starts exactly where y ends.", "m"),
    ("o", "overlaps", "x starts before y, y starts before x ends, and x ends before y ends.", "oi"),
    ("oi", "overlapped_by", "y starts before x, x starts before y ends, and y ends before x ends.", "o"),
    ("d", "during", "x starts after y starts and ends before y ends.", "di"),
    ("di", "contains", "y starts after x starts and ends before x ends.", "d"),
    ("s", "starts", "x and y start together and x ends before y ends.", "si"),
    ("si", "started_by", "x and y start together and y ends before x ends.", "s"),
    ("f", "finishes", "x starts after y starts and they end together.", "fi"),
    ("fi", "finished_by", "y starts after x starts and they end together.", "f"),
)


def ia_relation(s1: float, e1: float, s2: float, e2: float) -> str:
    """Allen relation of interval ``[s1, e1]`` to ``[s2, e2]`` (both with ``s < e``).

    Raises:
        ValueError: an interval with ``s >= e``.
    """
    if not (s1 < e1 and s2 < e2):
        raise ValueError(f"intervals need start < end, got [{s1}, {e1}] and [{s2}, {e2}]")
    if e1 < s2:
        return "<"
    if e2 < s1:
        return ">"
    if e1 == s2:
        return "m"
    if e2 == s1:
        return "mi"
    if s1 == s2:
        return "=" if e1 == e2 else ("s" if e1 < e2 else "si")
    if e1 == e2:
        return "f" if s1 > s2 else "fi"
    if s1 < s2:
        return "o" if e1 < e2 else "di"
    return "d" if e1 < e2 else "oi"


def _intervals(k: int) -> list[tuple[int, int]]:
    return list(combinations(range(k + 1), 2))


def _endpoint_signs(iv: list[tuple[int, int]]) -> np.ndarray:
    """``(n, n, 4)`` signs of s1-s2, s1-e2, e1-s2, e1-e2 for all ordered pairs."""
    a = np.asarray(iv)
    s, e = a[:, 0], a[:, 1]
    return np.stack([sign(s[:, None] - s[None, :]), sign(s[:, None] - e[None, :]),
                     sign(e[:, None] - s[None, :]), sign(e[:, None] - e[None, :])], axis=2)


def build_ia() -> Calculus:
    rels = tuple(Relation(sym, word, desc) for sym, word, desc, _ in _IA_SPEC)
    names = tuple(r.name for r in rels)
    idx = {n: i for i, n in enumerate(names)}
    iv = _intervals(5)
    rel = np.array([[idx[ia_relation(*p, *q)] for q in iv] for p in iv])
    comp = composition_from_sample(rel, names)
    signs = _endpoint_signs(iv).reshape(-1, 4)
    dominance = neighbourhood_from_faces(signs, rel.ravel(), names)
    nb = neighbourhood_one_coordinate(
        lambda c: ia_relation(*c) if c[0] < c[1] and c[2] < c[3] else None, 4, 3, names)
    return Calculus(
        key="ia", title="Allen's Interval Algebra", abbrev="IA",
        summary=("Allen's Interval Algebra (IA) is a qualitative temporal calculus about closed, "
                 "non-empty, one-piece intervals on the real number line. Its thirteen base "
                 "relations are jointly exhaustive and pairwise disjoint."),
        relations=rels, identity="=", converse={s: c for s, _, _, c in _IA_SPEC},
        composition=comp, neighbours=nb, kind="interval",
        source={"composition": "derived: all triples of intervals with endpoints in 0..5",
                "neighbours": "derived: one endpoint moving at a time (Freksa's A-neighbours)",
                "neighbour_variants": "dominance: faces of the four endpoint differences"},
        neighbour_variants={"dominance": dominance})


# ------------------------------------------------------------------------------------- INDU
_INDU_LETTER = {"<": "b", ">": "bi", "=": "eq", "m": "m", "mi": "mi", "o": "o", "oi": "oi",
                "d": "d", "di": "di", "s": "s", "si": "si", "f": "f", "fi": "fi"}
_DUR = {-1: "<", 0: "=", 1: ">"}
_DUR_WORD = {"<": "shorter", "=": "same_length", ">": "longer"}
_DUR_TEXT = {"<": "x is shorter than y", "=": "x and y have the same length",
             ">": "x is longer than y"}


def indu_relation(s1: float, e1: float, s2: float, e2: float) -> str:
    """INDU relation of ``[s1, e1]`` to ``[s2, e2]``: IA letter plus duration comparison."""
    ia = ia_relation(s1, e1, s2, e2)
    d = (e1 - s1) - (e2 - s2)
    return _INDU_LETTER[ia] + _DUR[(d > 0) - (d < 0)]


def build_indu() -> Calculus:
    ia_spec = {sym: (word, desc) for sym, word, desc, _ in _IA_SPEC}
    conv_ia = {sym: c for sym, _, _, c in _IA_SPEC}
    iv = _intervals(11)
    labels = [[indu_relation(*p, *q) for q in iv] for p in iv]
    # relation order: IA order of Table 6, durations < = >, only the realisable ones
    present = {n for row in labels for n in row}
    rels, converse = [], {}
    flip = {"<": ">", "=": "=", ">": "<"}
    for sym, _, _, _ in _IA_SPEC:
        for dsym in "<=>":
            name = _INDU_LETTER[sym] + dsym
            if name not in present:
                continue
            word, desc = ia_spec[sym]
            rels.append(Relation(name, f"{word}_{_DUR_WORD[dsym]}",
                                 f"{desc[:-1]}, and {_DUR_TEXT[dsym]}.",
                                 aliases=(name.upper(),)))
            converse[name] = _INDU_LETTER[conv_ia[sym]] + flip[dsym]
    names = tuple(r.name for r in rels)
    idx = {n: i for i, n in enumerate(names)}
    rel = np.array([[idx[n] for n in row] for row in labels])
    comp = composition_from_sample(rel, names)
    a = np.asarray(iv)
    dur = a[:, 1] - a[:, 0]
    signs = np.concatenate([_endpoint_signs(iv), sign(dur[:, None] - dur[None, :])[:, :, None]], axis=2)
    dominance = neighbourhood_from_faces(signs.reshape(-1, 5), rel.ravel(), names)
    nb = neighbourhood_one_coordinate(
        lambda c: indu_relation(*c) if c[0] < c[1] and c[2] < c[3] else None, 4, 3, names)
    return Calculus(
        key="indu", title="Interval and Duration Network", abbrev="INDU",
        summary=("The Interval and Duration Network (INDU) is a qualitative temporal calculus about "
                 "closed, non-empty, one-piece intervals on the real number line. It refines "
                 "Allen's thirteen interval relations by also comparing the durations of the two "
                 "intervals, giving twenty-five jointly exhaustive and pairwise disjoint base "
                 "relations."),
        anonymous_summary=("a qualitative temporal calculus about closed, non-empty, one-piece "
                           "intervals on the real number line. It refines the thirteen ways in "
                           "which the endpoints of two intervals can be ordered by also comparing "
                           "the durations of the two intervals, giving twenty-five jointly "
                           "exhaustive and pairwise disjoint base relations."),
        symbol_note=("Each relation name is an Allen relation followed by <, = or >, saying "
                     "whether x is shorter than, as long as, or longer than y."),
        relations=tuple(rels), identity="eq=", converse=converse,
        composition=comp, neighbours=nb, kind="interval",
        source={"composition": "derived: all triples of intervals with endpoints in 0..11",
                "neighbours": "derived: one endpoint moving at a time",
                "neighbour_variants": "dominance: faces of endpoint and duration differences"},
        neighbour_variants={"dominance": dominance})
