"""The oracle for STARK tier 2: shapely (OGC / DE-9IM) for space, Allen's algebra for time.

Each solver reads only ``task.inputs`` (the printed geometries and intervals), never the gold,
and recomputes the answer exactly; on generated items it must score 100 %.  On STARK's
released items it scores the released labels against the same rules (see ``stsim audit``).

Convention for the event interval (STARK Table 21 rule, :mod:`stsim.sim.event_interval`): no
satisfying segment -> answer 0; several disjoint runs -> the span from the first run's start to
the last run's end is used (the union is not an interval; the audit flags such items).
"""
from __future__ import annotations

from typing import Callable

from ..records import Answer, Task
from ..sim import allen
from ..sim.event_interval import satisfying_runs
from ..sim.shapes import GeometryError, holds, relate


def _ok(task: Task, value, solver: str) -> list[Answer]:
    return [Answer(task.id, None, "ok", value=value, solver=solver)]


def solve_spatial(task: Task, solver: str = "baseline") -> list[Answer]:
    """1 if ``a <predicate> b`` holds (shapely, exact), else 0."""
    i = task.inputs
    return _ok(task, int(holds(i["a"], i["b"], i["predicate"])), solver)


def solve_temporal(task: Task, solver: str = "baseline") -> list[Answer]:
    """1 if the Allen relation of ``a`` to ``b`` is the asked one, else 0."""
    i = task.inputs
    return _ok(task, int(allen.relation(i["a"], i["b"]) == allen.canonical(i["relation"])), solver)


def solve_choice(task: Task, solver: str = "baseline") -> list[Answer]:
    """The Allen relation of ``a`` to ``b`` (one of the 13 names)."""
    return _ok(task, allen.relation(task.inputs["a"], task.inputs["b"]), solver)


def event_span(inputs) -> tuple[float, float] | None:
    """The event interval of a spatiotemporal task's inputs (first start to last end), or
    ``None`` when the event never happens."""
    runs = satisfying_runs(inputs["trajectory"], inputs["times"], inputs["geometry"], inputs["predicate"])
    return (runs[0][0], runs[-1][1]) if runs else None


def solve_spatiotemporal(task: Task, solver: str = "baseline") -> list[Answer]:
    """1 if the event interval (Table 21 rule) stands in the asked Allen relation to the reference interval, else 0."""
    i = task.inputs
    allen.check_interval(i["reference"], "reference interval")
    span = event_span(i)
    ok = span is not None and allen.relation(span, i["reference"]) == allen.canonical(i["relation"])
    return _ok(task, int(ok), solver)


def solve_de9im(task: Task, solver: str = "baseline") -> list[Answer]:
    """The DE-9IM matrix of ``a`` against ``b`` (shapely ``relate``)."""
    return _ok(task, relate(task.inputs["a"], task.inputs["b"]), solver)


def _guarded(fn: Callable[..., list[Answer]]) -> Callable[..., list[Answer]]:
    """Degenerate inputs (e.g. a zero-length interval in released data) -> ``no_estimate``."""
    def solve(task: Task, solver: str = "baseline") -> list[Answer]:
        try:
            return fn(task, solver)
        except (GeometryError, allen.IntervalError) as exc:
            return [Answer(task.id, None, "no_estimate", detail=f"degenerate input: {exc}", solver=solver)]
    solve.__doc__ = fn.__doc__
    return solve


BASELINES: dict[str, Callable[..., list[Answer]]] = {
    "stark.relation.spatial": _guarded(solve_spatial),
    "stark.relation.temporal": _guarded(solve_temporal),
    "stark.relation.temporal_choice": _guarded(solve_choice),
    "stark.relation.spatiotemporal": _guarded(solve_spatiotemporal),
    "stark.relation.de9im": _guarded(solve_de9im),
}
