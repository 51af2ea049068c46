"""Field-variable prediction baselines (STARK Appendix 7.6 and Table 9) and the kriging reference.

* spatial imputation: inverse-distance weighting with great-circle distances (weights
  ``1 / d^p``, ``p = 1`` as STARK's released spatial-imputation prompts state);
* temporal imputation: linear interpolation along the time axis;
* spatiotemporal imputation: linear interpolation in time at each sensor (the distance-weighted
  average of the nearest samples in time, which have equal weight one step either side);
* spatiotemporal forecasting: linear extrapolation from the two most recent readings
  (``baseline:persistence`` repeats the last reading);
* ``baseline:kriging``: the BLUP under the field's own covariance
  (:func:`stsim.sim.fields.krige`), available when the task records its ``field_model``
  (generated tasks); published tasks get an explicit ``no_estimate``.

Task inputs read (all families): ``sites`` ``(n, 2)`` ``[lon, lat]`` degrees, ``values``
(spatial: ``(n,)``; others: ``(T, n)`` at ``times``), ``times`` (steps, e.g. hours), and the
target: ``target_site`` (spatial) or ``target_time``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..records import Answer, Task
from ..sim.fields import FieldModel, geodesic_distances, krige, space_time_points


def idw(sites: np.ndarray, values: np.ndarray, target: np.ndarray, power: float = 1.0) -> float:
    """Inverse-distance-weighted mean at ``target`` of ``values`` at ``sites``.

    Args:
        sites: ``(n, 2)`` ``[lon, lat]`` degrees; values: ``(n,)`` (NaN entries ignored);
        target: ``(2,)`` ``[lon, lat]``; power: exponent ``p`` of the weights ``1 / d^p``
            (``d`` great-circle metres, WGS84).
    Returns:
        The weighted mean; the value of a site at zero distance if there is one.
    Raises:
        ValueError: no finite value.
    """
    v = np.asarray(values, float).ravel()
    ok = np.isfinite(v)
    if not ok.any():
        raise ValueError("idw: no finite value to interpolate from")
    d = geodesic_distances(np.asarray(sites, float).reshape(-1, 2)[ok], target)[:, 0]
    if np.any(d == 0):
        return float(v[ok][np.argmin(d)])
    w = d ** -power
    return float(np.sum(w * v[ok]) / np.sum(w))


def interpolate_in_time(times: np.ndarray, values: np.ndarray, target_time: float) -> float:
    """Linear interpolation of one sensor's readings at ``target_time`` (NaN readings ignored;
    outside the known range the nearest reading is held).  Raises ``ValueError`` if none."""
    t = np.asarray(times, float)
    v = np.asarray(values, float)
    ok = np.isfinite(v)
    if not ok.any():
        raise ValueError("interpolate_in_time: no finite reading")
    return float(np.interp(target_time, t[ok], v[ok]))


def extrapolate(times: np.ndarray, values: np.ndarray, target_time: float) -> float:
    """Linear extrapolation through the two most recent finite readings (persistence when only
    one is available).  Raises ``ValueError`` if there is none."""
    t = np.asarray(times, float)
    v = np.asarray(values, float)
    ok = np.flatnonzero(np.isfinite(v))
    if len(ok) == 0:
        raise ValueError("extrapolate: no finite reading")
    if len(ok) == 1:
        return float(v[ok[-1]])
    i, j = ok[-2], ok[-1]
    slope = (v[j] - v[i]) / (t[j] - t[i])
    return float(v[j] + slope * (target_time - t[j]))


def persistence(times: np.ndarray, values: np.ndarray, target_time: float) -> float:
    """The most recent finite reading.  Raises ``ValueError`` if there is none."""
    v = np.asarray(values, float)
    ok = np.flatnonzero(np.isfinite(v))
    if len(ok) == 0:
        raise ValueError("persistence: no finite reading")
    return float(v[ok[-1]])


# ------------------------------------------------------------------------------------ solvers
def _answer(task: Task, fn: Callable[[], Any], solver: str) -> list[Answer]:
    try:
        value = fn()
    except ValueError as exc:
        return [Answer(task.id, None, "no_estimate", detail=str(exc), solver=solver)]
    return [Answer(task.id, None, "ok", value=value, solver=solver)]


def _per_sensor(task: Task, method: Callable[[np.ndarray, np.ndarray, float], float]) -> list[float]:
    inp = task.inputs
    vals = np.asarray(inp["values"], float)
    return [method(inp["times"], vals[:, i], float(inp["target_time"])) for i in range(vals.shape[1])]


def solve_spatial(task: Task, solver: str = "baseline") -> list[Answer]:
    """IDW (p = 1, great-circle distances) at the target site."""
    inp = task.inputs
    return _answer(task, lambda: idw(inp["sites"], inp["values"], inp["target_site"]), solver)


def solve_temporal(task: Task, solver: str = "baseline") -> list[Answer]:
    """Linear interpolation in time of the single sensor's readings."""
    inp = task.inputs
    return _answer(task, lambda: interpolate_in_time(inp["times"], np.asarray(inp["values"], float)[:, 0],
                                                     float(inp["target_time"])), solver)


def solve_st_impute(task: Task, solver: str = "baseline") -> list[Answer]:
    """Per-sensor linear interpolation in time."""
    return _answer(task, lambda: _per_sensor(task, interpolate_in_time), solver)


def solve_st_forecast(task: Task, solver: str = "baseline") -> list[Answer]:
    """Per-sensor linear extrapolation from the two most recent readings."""
    return _answer(task, lambda: _per_sensor(task, extrapolate), solver)


def solve_persistence(task: Task, solver: str = "baseline:persistence") -> list[Answer]:
    """Per-sensor last reading (forecasting alternative)."""
    return _answer(task, lambda: _per_sensor(task, persistence), solver)


def kriging_prediction(task: Task) -> Any:
    """BLUP of the target reading(s) under the task's recorded ``field_model``.

    Raises:
        ValueError: the task records no field model (e.g. STARK's published data).
    """
    inp = task.inputs
    if not inp.get("field_model"):
        raise ValueError("no field_model in the task inputs (kriging needs the field's covariance)")
    model = FieldModel(**inp["field_model"])
    sites = np.asarray(inp["sites"], float).reshape(-1, 2)
    if "target_site" in inp:  # spatial: one time, readings at every site
        v = np.asarray(inp["values"], float)
        t = np.full(len(sites), float(inp["time"]))
        pred, _ = krige(model, sites, t, v, np.asarray(inp["target_site"], float), [float(inp["time"])])
        return float(pred[0])
    vals = np.asarray(inp["values"], float)
    ps, pt = space_time_points(sites, inp["times"])
    y = vals.ravel()
    ok = np.isfinite(y)
    pred, _ = krige(model, ps[ok], pt[ok], y[ok], sites, np.full(len(sites), float(inp["target_time"])))
    out = [float(p) for p in pred]
    return out[0] if task.answer_format == "scalar" else out


def solve_kriging(task: Task, solver: str = "baseline:kriging") -> list[Answer]:
    """The kriging / GP reference (see :func:`kriging_prediction`)."""
    return _answer(task, lambda: kriging_prediction(task), solver)


FIELD_FAMILIES = {
    "stark.field.spatial_impute": solve_spatial,
    "stark.field.temporal_impute": solve_temporal,
    "stark.field.spatiotemporal_impute": solve_st_impute,
    "stark.field.spatiotemporal_forecast": solve_st_forecast,
}

BASELINES = dict(FIELD_FAMILIES)
ALTERNATIVES: dict[str, dict[str, Callable[..., list[Answer]]]] = {
    f: {"kriging": solve_kriging} for f in FIELD_FAMILIES}
ALTERNATIVES["stark.field.spatiotemporal_forecast"]["persistence"] = solve_persistence
