"""The event interval of a trajectory against a fixed geometry (STARK Table 21's rule).

Rule as STARK's prompt states it: test the spatial predicate on each trajectory *segment*
(consecutive vertices ``k, k+1``); for each maximal run of consecutive satisfying segments take
``[t_first_vertex, t_last_vertex]``; the event interval is the union of these, with no
interpolation between time stamps.

Our reading of the rule's open points (documented, and applied the same way everywhere):

* a segment is the two-vertex line string ``[p_k, p_{k+1}]`` and the predicate is
  ``segment <predicate> geometry`` (the trajectory is the first operand, as in the prompt),
  evaluated exactly on the printed decimals (:func:`stsim.sim.shapes.exact_segments`);
* if no segment satisfies the predicate the event never happens, so no Allen relation holds
  (the answer is 0);
* if several disjoint runs satisfy it the union is not one interval and Allen's relations are
  undefined: :func:`event_interval` returns the runs and callers decide (generated items never
  have more than one run; the audit flags such published items).
"""
from __future__ import annotations

from typing import Any

from .shapes import GeometryError, PREDICATES, exact_segments


def satisfying_runs(positions, times, geometry: dict[str, Any], predicate: str) -> list[tuple[float, float]]:
    """``[(t_start, t_end), ...]`` of each maximal run of satisfying segments, in time order.

    Args:
        positions: (n, 2) trajectory vertices, plane units.
        times: (n,) time stamps, strictly increasing.
        geometry: the fixed geometry dict (see :mod:`stsim.sim.shapes`).
        predicate: one of :data:`~stsim.sim.shapes.PREDICATES`.
    Raises:
        GeometryError: lengths differ, fewer than 2 vertices, times not increasing, a
            zero-length segment, or a degenerate geometry.
    """
    pts = [(float(x), float(y)) for x, y in positions]
    ts = [float(t) for t in times]
    if len(pts) != len(ts) or len(pts) < 2:
        raise GeometryError(f"trajectory: need >= 2 vertices with one time stamp each "
                            f"(got {len(pts)} vertices, {len(ts)} time stamps)")
    if any(b <= a for a, b in zip(ts, ts[1:])):
        raise GeometryError("trajectory: time stamps must increase strictly")
    if predicate not in PREDICATES:
        raise GeometryError(f"unknown spatial predicate {predicate!r}")
    for k in range(len(pts) - 1):
        if pts[k] == pts[k + 1]:
            raise GeometryError(f"trajectory: zero-length segment between vertices {k} and {k + 1}")
    segs, g = exact_segments(pts, geometry)
    sat = [bool(getattr(seg, predicate)(g)) for seg in segs]
    runs, k = [], 0
    while k < len(sat):
        if sat[k]:
            j = k
            while j + 1 < len(sat) and sat[j + 1]:
                j += 1
            runs.append((ts[k], ts[j + 1]))
            k = j + 1
        else:
            k += 1
    return runs


def event_interval(positions, times, geometry, predicate) -> tuple[float, float] | None:
    """The single event interval, ``None`` when the event never holds.

    Raises:
        GeometryError: as :func:`satisfying_runs`, or when the predicate holds on more than one
            disjoint run (the union is not an interval).
    """
    runs = satisfying_runs(positions, times, geometry, predicate)
    if not runs:
        return None
    if len(runs) > 1:
        raise GeometryError(f"event holds on {len(runs)} disjoint intervals {runs}: "
                            "not one interval, Allen relations undefined")
    return runs[0]
