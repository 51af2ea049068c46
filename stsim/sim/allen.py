"""Allen's interval algebra: the 13 base relations between two closed intervals.

Source: Allen (1983), "Maintaining knowledge about temporal intervals", cited by STARK §2;
relation wording of STARK Table 20.  An interval is ``(start, end)`` with ``start < end``.
Endpoints are compared exactly (the numbers as printed), so *meets*, *starts*, *finishes* and
*equals* hold only for identical printed endpoints.
"""
from __future__ import annotations

import math

from ..qstr.temporal import ia_relation
from ..records import UnknownName

#: The 13 base relations, the 6 basic ones, equals, then their converses.
RELATIONS = ("before", "meets", "overlaps", "starts", "during", "finishes", "equals",
             "after", "met_by", "overlapped_by", "started_by", "contains", "finished_by")

CONVERSE = {"before": "after", "meets": "met_by", "overlaps": "overlapped_by",
            "starts": "started_by", "during": "contains", "finishes": "finished_by",
            "equals": "equals"}
CONVERSE.update({v: k for k, v in list(CONVERSE.items())})

#: Interval-algebra symbols (:mod:`stsim.qstr.temporal`, the IA calculus) -> our names.
_BY_SYMBOL = {"<": "before", ">": "after", "=": "equals", "m": "meets", "mi": "met_by",
              "o": "overlaps", "oi": "overlapped_by", "d": "during", "di": "contains",
              "s": "starts", "si": "started_by", "f": "finishes", "fi": "finished_by"}

#: Names STARK's released data and prompts use (Tables 20, 21, 29, 31) -> our names.
STARK_NAMES = {"precedes": "before", "is_preceded_by": "after", "meets": "meets",
               "is_met_by": "met_by", "overlaps_with": "overlaps", "overlaps": "overlaps",
               "is_overlapped_by": "overlapped_by", "starts": "starts",
               "is_started_by": "started_by", "during": "during", "contains": "contains",
               "finishes": "finishes", "finished_by": "finished_by", "is_equal_to": "equals",
               "equals": "equals"}


class IntervalError(ValueError):
    """An interval is malformed (non-finite, or its end does not follow its start)."""


def check_interval(iv, where: str = "interval") -> tuple[float, float]:
    """``(start, end)`` as floats.

    Raises:
        IntervalError: not two finite numbers, or ``end <= start`` (named in the message).
    """
    try:
        s, e = (float(v) for v in iv)
    except (TypeError, ValueError):
        raise IntervalError(f"{where}: expected (start, end), got {iv!r:.60}") from None
    if not (math.isfinite(s) and math.isfinite(e)):
        raise IntervalError(f"{where}: non-finite endpoint in {iv!r}")
    if e <= s:
        raise IntervalError(f"{where}: end {e} does not follow start {s}")
    return s, e


def relation(a, b) -> str:
    """The Allen relation of interval ``a`` to interval ``b`` (exactly one of :data:`RELATIONS`).

    Raises:
        IntervalError: a malformed interval.
    """
    s1, e1 = check_interval(a, "first interval")
    s2, e2 = check_interval(b, "second interval")
    return _BY_SYMBOL[ia_relation(s1, e1, s2, e2)]


def canonical(name: str) -> str:
    """Our name for a relation given in ours or STARK's spelling (case, spaces, hyphens free).

    Raises:
        KeyError: an unknown name.
    """
    key = name.strip().lower().replace("-", "_").replace(" ", "_")
    if key in RELATIONS:
        return key
    if key in STARK_NAMES:
        return STARK_NAMES[key]
    raise UnknownName(f"unknown Allen relation {name!r}; known: {', '.join(RELATIONS)}")
