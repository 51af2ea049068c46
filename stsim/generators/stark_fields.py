"""STARK field-variable prediction families on synthetic temperature fields (STARK §3.2.1,
Table 18 for the prompt content; the field model is :mod:`stsim.sim.fields`).

===================================  =======  ===============================================
family                               answer   task
===================================  =======  ===============================================
stark.field.spatial_impute           scalar   one hour, n sensors -> reading at a new site
stark.field.temporal_impute          scalar   one sensor, k hours either side -> middle hour
stark.field.spatiotemporal_impute    vector   n sensors, k hours either side -> all at t
stark.field.spatiotemporal_forecast  vector   n sensors, k past hours -> all at the next hour
===================================  =======  ===============================================

Gold is the target sensor's noisy reading (what a real sensor would have reported).  Sites are
rounded to 5 decimals and readings to 2 decimals before they are printed and stored, so the
prompt and ``inputs`` carry the same numbers.  Every field parameter is printed in the prompt
and recorded in ``inputs['field_model']``; ``meta['error_scale']`` is the gold's magnitude so
the scorer reports RMSPE (STARK §4.1).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..registry import Family, TaskBody, register_family
from ..sim.fields import KIND_NAMES, FieldModel, random_sites, sample_readings

SITE_DECIMALS = 5
VALUE_DECIMALS = 2

FIELD_DEFAULTS: dict[str, Any] = {
    "center": [-118.25, 34.05], "radius_m": 15000.0, "kind": "matern32", "variance": 4.0,
    "length_scale_m": 5000.0, "time_scale_h": 6.0, "noise_sd": 0.2, "mean": 24.0,
    "diurnal_amplitude": 5.0, "diurnal_peak_hour": 15.0, "trend_per_hour": 0.02,
}

_ANSWER_ONE = ("Reply with one predicted value in this form (nothing else between the markers): "
               "[RESULTS_START] [value] [RESULTS_END]. Example: [RESULTS_START] [23.5] [RESULTS_END]")
_ANSWER_MANY = ("Reply with one predicted value per sensor, in the order the sensors are listed, in "
                "this form (nothing else between the markers): [RESULTS_START] [v1, v2, ...] "
                "[RESULTS_END]. Example: [RESULTS_START] [23.5, 24.1, 22.9] [RESULTS_END]")


def _model(rng: np.random.Generator, cfg: dict[str, Any]) -> FieldModel:
    keys = ("kind", "variance", "length_scale_m", "time_scale_h", "noise_sd", "mean",
            "diurnal_amplitude", "diurnal_peak_hour", "trend_per_hour")
    return FieldModel(**{k: cfg[k] for k in keys}, start_hour=float(rng.integers(0, 24)))


def describe_model(m: FieldModel) -> str:
    """The field model in words, every parameter stated (prompt text)."""
    return (
        "Temperature (degrees Celsius) over the area is modelled as a deterministic part plus a "
        "Gaussian random field. Deterministic part: "
        f"{m.mean:g} + {m.diurnal_amplitude:g} * cos(2*pi*(hour_of_day - {m.diurnal_peak_hour:g})/24) "
        f"+ {m.trend_per_hour:g} * (hours since {int(m.start_hour):02d}:00 of day 1). Random part: zero "
        f"mean, standard deviation {np.sqrt(m.variance):g}, separable {KIND_NAMES[m.kind]} covariance "
        f"with spatial length scale {m.length_scale_m / 1000:g} km (great-circle distance on the "
        f"WGS84 ellipsoid) and temporal length scale {m.time_scale_h:g} h. Each reading adds "
        f"independent Gaussian measurement noise with standard deviation {m.noise_sd:g}.")


def _clock(m: FieldModel, t: float) -> str:
    total = m.start_hour + t
    return f"day {int(total // 24) + 1}, {int(total % 24):02d}:00"


def _site(s) -> str:
    return f"(lat {s[1]:.{SITE_DECIMALS}f}, lon {s[0]:.{SITE_DECIMALS}f})"


def _block(m: FieldModel, sites: np.ndarray, row: np.ndarray, t: float, label: str) -> str:
    lines = [f"Readings at {label} ({_clock(m, t)}):"]
    lines += [f"  sensor {i + 1} at {_site(s)}: {v:.{VALUE_DECIMALS}f}" for i, (s, v) in enumerate(zip(sites, row))]
    return "\n".join(lines)


def _rel(k: int) -> str:
    return "t" if k == 0 else (f"t{k:+d}")


def _inputs(m: FieldModel, sites: np.ndarray, cfg: dict[str, Any], **extra) -> dict[str, Any]:
    return {"sites": sites.tolist(), "field_model": m.params(), "unit": "degC",
            "time_unit": "h", "center": list(cfg["center"]), "radius_m": float(cfg["radius_m"]), **extra}


def _meta(gold) -> dict[str, Any]:
    g = np.atleast_1d(np.asarray(gold, float))
    meta: dict[str, Any] = {"error_scale": float(np.linalg.norm(g))}
    if g.size > 1:
        meta["answer_spec"] = {"length": int(g.size)}
    return meta


def make_spatial(rng: np.random.Generator, cfg: dict[str, Any]) -> TaskBody:
    m = _model(rng, cfg)
    n = int(cfg["n_sensors"])
    sites = random_sites(rng, tuple(cfg["center"]), float(cfg["radius_m"]), n + 1, SITE_DECIMALS)
    t = float(rng.integers(0, 24))
    _, readings = sample_readings(m, rng, sites, [t])
    known = np.round(readings[0, :n], VALUE_DECIMALS)
    gold = float(readings[0, n])
    prompt = "\n".join([
        "Impute a missing sensor reading from nearby sensors at the same time.",
        describe_model(m), "",
        _block(m, sites[:n], known, t, "time t"),
        f"What does a sensor at {_site(sites[n])} read at the same time?", _ANSWER_ONE])
    inputs = _inputs(m, sites[:n], cfg, values=known.tolist(), time=t, target_site=sites[n].tolist())
    return TaskBody(prompt, inputs, gold, meta=_meta(gold))


def _window(m, sites, readings, times, target_k, known_idx) -> list[str]:
    return [_block(m, sites, np.round(readings[k], VALUE_DECIMALS), times[k], _rel(int(times[k] - times[target_k])))
            for k in known_idx]


def _make_temporal(n_sensors_key: str | None, forecast: bool):
    def make(rng: np.random.Generator, cfg: dict[str, Any]) -> TaskBody:
        m = _model(rng, cfg)
        n = 1 if n_sensors_key is None else int(cfg[n_sensors_key])
        sites = random_sites(rng, tuple(cfg["center"]), float(cfg["radius_m"]), n, SITE_DECIMALS)
        before = int(cfg["hours_before"])
        after = 0 if forecast else int(cfg["hours_after"])
        t0 = float(rng.integers(0, 24))
        times = t0 + np.arange(before + 1 + after, dtype=float)
        _, readings = sample_readings(m, rng, sites, times)
        target = before
        known = [k for k in range(len(times)) if k != target]
        vals = np.round(readings[known], VALUE_DECIMALS)
        gold_row = readings[target]
        gold: Any = float(gold_row[0]) if n == 1 else gold_row.tolist()
        if forecast:
            head = "Forecast every sensor's reading one hour after the last readings shown."
            ask = f"What does each sensor read at time t ({_clock(m, times[target])})?"
        elif n == 1:
            head = "Impute one sensor's missing hourly reading from its readings before and after."
            ask = f"What did the sensor read at time t ({_clock(m, times[target])})?"
        else:
            head = "Impute the missing hourly readings of a group of sensors from their readings before and after."
            ask = f"What did each sensor read at time t ({_clock(m, times[target])})?"
        prompt = "\n".join([head, describe_model(m), "", *_window(m, sites, readings, times, target, known),
                            ask, _ANSWER_ONE if n == 1 else _ANSWER_MANY])
        inputs = _inputs(m, sites, cfg, times=times[known].tolist(), values=vals.tolist(),
                         target_time=float(times[target]))
        return TaskBody(prompt, inputs, gold, meta=_meta(gold))
    return make


def validate_field(task) -> None:
    """Reject field inputs no sensor network could produce: sites that are not ``[lon, lat]``
    pairs in range, a values table whose shape disagrees with sites/times, non-numeric values.

    Raises:
        RecordError: naming the task and the offending key.
    """
    import math

    from ..records import RecordError, finite_numbers
    inp = task.inputs
    where = f"task {task.id}"
    for key in ("sites", "values"):
        if key not in inp:
            raise RecordError(f"{where}: inputs.{key} is missing")
    for key in ("center", "target_site"):
        if key in inp:
            lon, lat = finite_numbers(inp[key], f"{where}: inputs.{key}", 2)
            if abs(lon) > 180 or abs(lat) > 90:
                raise RecordError(f"{where}: inputs.{key} must be [lon, lat] in degrees, got {inp[key]}")
    if "times" in inp:
        finite_numbers(inp["times"], f"{where}: inputs.times")
    try:
        sites = np.asarray(inp["sites"], float)
        vals = np.asarray([math.nan if v is None else v for v in np.ravel(np.asarray(inp["values"], dtype=object))],
                          float)
    except (TypeError, ValueError) as exc:
        raise RecordError(f"{where}: inputs.sites/values must be numbers ({exc})") from None
    if sites.ndim != 2 or sites.shape[1] != 2 or not np.all(np.abs(sites[:, 0]) <= 180) \
            or not np.all(np.abs(sites[:, 1]) <= 90):
        raise RecordError(f"{where}: inputs.sites must be [lon, lat] pairs in degrees")
    n_times = len(inp["times"]) if "times" in inp else 1
    if vals.size != n_times * len(sites):
        raise RecordError(f"{where}: inputs.values has {vals.size} numbers, expected "
                          f"{n_times} time(s) x {len(sites)} site(s)")
    if np.any(np.isinf(vals)):
        raise RecordError(f"{where}: inputs.values contains an infinite value")


def _register(name, fmt, make, extra, description):
    register_family(Family(name, fmt, make, {**FIELD_DEFAULTS, **extra}, description, validate=validate_field,
                           source="STARK §3.2.1 (field-variable prediction), prompt content Table 18; scored by RMSPE (§4.1)"))


_register("stark.field.spatial_impute", "scalar", make_spatial, {"n_sensors": 6},
          "Impute a temperature reading at a new site from 6 sensors at the same hour (IDW vs kriging).")
_register("stark.field.temporal_impute", "scalar", _make_temporal(None, False),
          {"hours_before": 4, "hours_after": 4},
          "Impute one sensor's missing hourly temperature from 4 h before and after.")
_register("stark.field.spatiotemporal_impute", "vector", _make_temporal("n_sensors", False),
          {"n_sensors": 4, "hours_before": 3, "hours_after": 3},
          "Impute 4 sensors' missing hour from their 3 h before and after.")
_register("stark.field.spatiotemporal_forecast", "vector", _make_temporal("n_sensors", True),
          {"n_sensors": 4, "hours_before": 7},
          "Forecast 4 sensors' next hourly temperature from their last 7 h (Table 18).")
