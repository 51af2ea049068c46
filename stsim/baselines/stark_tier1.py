"""First-principle baselines for STARK tier 1 (Appendix 7.6, Table 9): ``Task -> [Answer]``.

Each solver reads only ``task.inputs`` (never the gold).  A solver that cannot estimate
(fewer usable readings than unknowns) returns an explicit ``no_estimate`` answer saying why;
scoring counts it as a failure.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..records import Answer, Task
from ..sim.readings import readings_to_array
from .geometry import (multilaterate, proximity_grid_search, proximity_mmse, range_bearing_fix,
                       toa_fit, triangulate)
from .tracking import ekf_track, proximity_track, toa_track


def _readings(task: Task) -> np.ndarray:
    return readings_to_array(task.inputs["readings"], pairs=task.inputs["modality"] == "range_bearing",
                             stepped=bool(task.steps))


def _noise_levels(task: Task) -> tuple[float, float]:
    """(relative range half-width, bearing half-width in rad) from the task's sensor model."""
    sm = task.inputs.get("sensor_model", {})
    rng_model = sm.get("range", sm) if sm.get("modality") == "range_bearing" else sm
    brg_model = sm.get("bearing", sm) if sm.get("modality") == "range_bearing" else sm
    rs = (rng_model.get("noise") or {}).get("sigma", 0.01)
    bs = (brg_model.get("noise_rad") or {}).get("half_width", (brg_model.get("noise_rad") or {}).get("sigma", 2 * np.pi * 0.01))
    return float(rs), float(bs)


def _one(task: Task, value, solver: str, why: str) -> list[Answer]:
    if value is None:
        return [Answer(task.id, None, "no_estimate", detail=why, solver=solver)]
    return [Answer(task.id, None, "ok", value=value, solver=solver)]


def _usable(r: np.ndarray) -> int:
    return int(np.all(np.isfinite(r.reshape(len(r), -1)), axis=1).sum())


# ------------------------------------------------------------------------------- localisation
def solve_localization(task: Task, solver: str = "baseline") -> list[Answer]:
    """Multilateration, triangulation, range+bearing fusion or proximity MMSE by modality."""
    m = task.inputs["modality"]
    s = np.asarray(task.inputs["sensors"], float)
    z = _readings(task)
    rs, bs = _noise_levels(task)
    n = _usable(z)
    if m == "range":
        est = multilaterate(s, z)
        need = 2
    elif m == "bearing":
        est = triangulate(s, z)
        need = 2
    elif m == "range_bearing":
        est = range_bearing_fix(s, z, rs, bs)
        need = 1
    elif m == "proximity":
        est = proximity_mmse(s, z, float(task.inputs["radius"]))
        need = 1
    else:
        raise ValueError(f"{task.id}: unknown modality {m!r}")
    return _one(task, None if est is None else [float(est[0]), float(est[1])], solver,
                f"{n} usable {m} reading(s); need at least {need}")


def solve_proximity_grid(task: Task, solver: str = "baseline:grid") -> list[Answer]:
    """STARK's own proximity baseline: grid search over mismatch counts."""
    s = np.asarray(task.inputs["sensors"], float)
    est = proximity_grid_search(s, _readings(task), float(task.inputs["radius"]))
    return _one(task, None if est is None else est.tolist(), solver, "no usable reading")


def solve_event_localization(task: Task, solver: str = "baseline") -> list[Answer]:
    """ToA fit of position and emission time; answers position, time or both by family."""
    s = np.asarray(task.inputs["sensors"], float)
    z = _readings(task)
    fit = toa_fit(s, z, float(task.inputs["wave_speed"]))
    if fit is None:
        return _one(task, None, solver, f"{_usable(z)} usable ToA reading(s); need 3 for (x, y, t0)")
    p, t0 = fit
    if task.answer_format == "time":
        value = t0
    elif task.answer_format == "vector":
        value = [float(p[0]), float(p[1]), t0]
    else:
        value = [float(p[0]), float(p[1])]
    return _one(task, value, solver, "")


# ----------------------------------------------------------------------------------- tracking
def _per_step(task: Task, values, solver: str) -> list[Answer]:
    out = []
    for st, v in zip(task.steps, values):
        if v is None or not np.all(np.isfinite(v)):
            out.append(Answer(task.id, st.index, "no_estimate", detail="no reading yet", solver=solver))
        else:
            out.append(Answer(task.id, st.index, "ok", value=v, solver=solver))
    return out


def solve_tracking(task: Task, solver: str = "baseline") -> list[Answer]:
    """SCAAT-style EKF (range, bearing, range+bearing) or zone intersection (proximity)."""
    m = task.inputs["modality"]
    s = np.asarray(task.inputs["sensors"], float)
    z = _readings(task)
    times = np.asarray(task.inputs["times"], float)
    if m == "proximity":
        est = proximity_track(s, z, float(task.inputs["radius"]))
    else:
        rs, bs = _noise_levels(task)
        est = ekf_track(m, s, times, z, range_sigma=rs, bearing_sigma_rad=bs)
    return _per_step(task, [[float(a), float(b)] for a, b in est], solver)


def solve_event_tracking(task: Task, solver: str = "baseline") -> list[Answer]:
    """ToA tracking: position (known emission times), time, or both, by family."""
    s = np.asarray(task.inputs["sensors"], float)
    z = _readings(task)
    emit = task.inputs.get("times")
    sigma = float((task.inputs.get("sensor_model", {}).get("noise") or {}).get("half_width", 0.01))
    pos, t0 = toa_track(s, z, float(task.inputs["wave_speed"]),
                        emit_times=None if emit is None else np.asarray(emit, float), toa_sigma=sigma)
    if task.answer_format == "point":
        vals = [[float(a), float(b)] for a, b in pos]
    elif task.answer_format == "time":
        vals = [None if not np.isfinite(t) else float(t) for t in t0]
    else:
        vals = [None if not np.isfinite(t) else [float(p[0]), float(p[1]), float(t)] for p, t in zip(pos, t0)]
    return _per_step(task, vals, solver)


#: family -> (default baseline, {alternative name: solver})
BASELINES: dict[str, Callable[[Task], list[Answer]]] = {}
ALTERNATIVES: dict[str, dict[str, Callable[[Task], list[Answer]]]] = {
    "stark.localization.proximity": {"grid": solve_proximity_grid},
}
for _m in ("range", "bearing", "range_bearing", "proximity"):
    BASELINES[f"stark.localization.{_m}"] = solve_localization
    BASELINES[f"stark.tracking.{_m}"] = solve_tracking
for _f in ("stark.localization.event", "stark.temporal_localization.event", "stark.localization.event_xyt"):
    BASELINES[_f] = solve_event_localization
for _f in ("stark.tracking.event", "stark.temporal_tracking.event", "stark.tracking.event_xyt"):
    BASELINES[_f] = solve_event_tracking
