"""Constructed interval pairs for Allen-relation tasks, on printed (rounded) endpoints.

:func:`interval_with_relation` builds a reference interval ``b`` such that
``relation(a, b)`` is a requested Allen relation, reusing ``a``'s printed endpoints wherever the
relation needs equal endpoints (meets, starts, finishes, equals and converses), and keeping
strict inequalities at least ``min_gap`` apart so rounding cannot turn them into equalities.
"""
from __future__ import annotations

import numpy as np

from .allen import RELATIONS, relation

#: Conceptual neighbours (Freksa 1992): relations one endpoint move apart.  Used to draw hard
#: negatives (a near relation instead of a random one).
NEIGHBOURS = {
    "before": ("meets",), "meets": ("before", "overlaps"),
    "overlaps": ("meets", "starts", "finished_by"), "starts": ("overlaps", "during", "equals"),
    "during": ("starts", "finishes"), "finishes": ("during", "equals", "overlapped_by"),
    "equals": ("starts", "finishes", "started_by", "finished_by"),
    "finished_by": ("overlaps", "contains", "equals"), "contains": ("finished_by", "started_by"),
    "started_by": ("equals", "contains", "overlapped_by"),
    "overlapped_by": ("finishes", "started_by", "met_by"), "met_by": ("overlapped_by", "after"),
    "after": ("met_by",),
}


def interval_with_relation(rng: np.random.Generator, a: tuple[float, float], rel: str,
                           decimals: int = 4, min_gap: float = 0.05, max_len: float = 5.0,
                           floor: float = 0.0) -> list[float]:
    """An interval ``b`` (rounded) with ``relation(a, b) == rel`` and ``b`` starting at or
    after ``floor`` when possible.

    Raises:
        ValueError: unknown relation, or ``a`` too short / too close to ``floor`` for ``rel``.
    """
    if rel not in RELATIONS:
        raise ValueError(f"unknown Allen relation {rel!r}")
    s, e = float(a[0]), float(a[1])
    span = e - s
    u = rng.uniform
    room = max(min_gap * 1.5, min(max_len, s - floor - min_gap))

    def frac() -> float:
        return s + u(0.15, 0.85) * span

    def length(lim: float = max_len) -> float:
        return u(min_gap, max(min_gap * 1.01, lim))

    if rel == "before":
        g = length(); b = [e + g, e + g + length()]
    elif rel == "after":
        g = u(min_gap, room * 0.5); b = [s - g - u(min_gap, room * 0.5), s - g]
    elif rel == "meets":
        b = [e, e + length()]
    elif rel == "met_by":
        b = [s - u(min_gap, room), s]
    elif rel == "overlaps":
        b = [frac(), e + length()]
    elif rel == "overlapped_by":
        b = [s - u(min_gap, room), frac()]
    elif rel == "starts":
        b = [s, e + length()]
    elif rel == "started_by":
        b = [s, frac()]
    elif rel == "during":
        b = [s - u(min_gap, room), e + length()]
    elif rel == "contains":
        f1, f2 = sorted(u(0.1, 0.9, 2))
        f2 = max(f2, f1 + 0.05)
        b = [s + f1 * span, s + f2 * span]
    elif rel == "finishes":
        b = [s - u(min_gap, room), e]
    elif rel == "finished_by":
        b = [frac(), e]
    else:
        b = [s, e]
    b = [round(b[0], decimals), round(b[1], decimals)]
    got = relation(a, b)
    if got != rel:
        raise ValueError(f"interval {a} too short or too close to {floor} to build {rel!r} (got {got!r})")
    return b


def draw_other_relation(rng: np.random.Generator, asked: str, p_neighbour: float = 0.6) -> str:
    """A relation different from ``asked``: a conceptual neighbour with probability
    ``p_neighbour`` (hard negative), else uniform over the other 12."""
    if rng.random() < p_neighbour:
        opts = NEIGHBOURS[asked]
    else:
        opts = tuple(r for r in RELATIONS if r != asked)
    return str(opts[int(rng.integers(0, len(opts)))])
