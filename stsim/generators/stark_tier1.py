"""STARK tier 1: localisation and tracking families (STARK §3.2.1, Appendix 7.3, 7.4, 7.9).

Fourteen families, each a pure function ``(rng, config) -> TaskBody``:

======================================  ========  ==========================================
family                                  answer    gold
======================================  ========  ==========================================
stark.localization.{range, bearing,     point     true [x, y]
range_bearing, proximity}
stark.localization.event                point     true [x, y] (km); emission time unknown
stark.temporal_localization.event       time      true emission time t0 (s)
stark.localization.event_xyt            vector    true [x, y, t0]
stark.tracking.{range, bearing,         point     true [x, y] at each step
range_bearing, proximity}
stark.tracking.event                    point     per step [x, y]; emission time = step time
stark.temporal_tracking.event           time      per step emission time t0 (min)
stark.tracking.event_xyt                vector    per step [x, y, t0]
======================================  ========  ==========================================

"What the model sees is what the solver reads": sensor positions are rounded to the printed
2 decimals *before* simulating, and readings to the printed 4 decimals, so ``inputs`` and
``prompt`` carry identical numbers and the gold is exact for those numbers.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..records import Step
from ..registry import Family, TaskBody, register_family
from ..sim.motion import MOTION_RANGES, random_trajectory
from ..sim.noise import Gaussian, UniformAbsolute, UniformRelative
from ..sim.readings import readings_to_json
from ..sim.sensors import (BearingSensor, ProximitySensor, RangeBearingSensor, RangeSensor,
                           ToASensor, apply_count_dropout, apply_dropout, count_dropout_rate,
                           detection_region, make_layout)
from . import stark_prompts as P

SENSOR_DECIMALS = 2
READING_DECIMALS = 4

COMMON = {"n_sensors": 4, "layout": "uniform", "noise": "uniform"}


def _range_noise(cfg):
    s = float(cfg["range_sigma"])
    return Gaussian(s, relative=True) if cfg["noise"] == "gaussian" else UniformRelative(s)


def _bearing_noise(cfg):
    half = 2 * np.pi * float(cfg["bearing_sigma"])
    return Gaussian(half) if cfg["noise"] == "gaussian" else UniformAbsolute(half)


def _toa_noise(cfg):
    s = float(cfg["toa_sigma"])
    return Gaussian(s) if cfg["noise"] == "gaussian" else UniformAbsolute(s)


def _check_noise_kind(cfg):
    if cfg["noise"] not in ("uniform", "gaussian"):
        raise ValueError(f"noise must be 'uniform' (STARK Table 7) or 'gaussian', got {cfg['noise']!r}")


def make_sensor(modality: str, cfg: dict[str, Any]):
    """The sensor object of a modality, configured from a family config."""
    _check_noise_kind(cfg)
    if modality == "range":
        return RangeSensor(_range_noise(cfg))
    if modality == "bearing":
        return BearingSensor(_bearing_noise(cfg))
    if modality == "range_bearing":
        return RangeBearingSensor(RangeSensor(_range_noise(cfg)), BearingSensor(_bearing_noise(cfg)))
    if modality == "proximity":
        return ProximitySensor(float(cfg["radius"]), float(cfg.get("flip_prob", 0.0)))
    if modality == "toa":
        return ToASensor(float(cfg["wave_speed"]), _toa_noise(cfg))
    raise ValueError(f"unknown modality {modality!r}")


def _layout(rng, cfg) -> np.ndarray:
    return np.round(make_layout(cfg["layout"], rng, int(cfg["n_sensors"])), SENSOR_DECIMALS)


def _round(a: np.ndarray) -> np.ndarray:
    return np.round(a, READING_DECIMALS)


# ------------------------------------------------------------------------------- localisation
def _draw_scene(rng, cfg, modality: str, tries: int = 10_000):
    """Sensor layout and target.

    Range, bearing and range+bearing: sensors, then the target, uniform on the domain.
    Proximity: sensors first (uniform, as for every modality; redrawn only when no point of the
    domain is detected by ``min_detections`` of them), then the target uniform *inside* the
    region detected by at least ``min_detections`` sensors (rejection sampling within the
    region's bounding box, exact disk test).  This reproduces the release (3 or 4 detections in
    every localisation instance, sensor hull and feasible-region sizes as released; issue 15);
    redrawing sensors and target together would favour clustered sensors.

    Raises:
        ValueError: no layout with a non-empty region in ``tries`` draws.
    """
    need = int(cfg.get("min_detections", 0)) if modality == "proximity" else 0
    if need == 0:
        sensors = _layout(rng, cfg)
        return sensors, rng.uniform(0.0, 10.0, size=(1, 2))
    radius = float(cfg["radius"])
    sensor = ProximitySensor(radius)
    pad = 0.01 + radius * (1 - np.cos(np.pi / 256))  # the polygon region is inscribed in the true one
    for _ in range(tries):
        sensors = _layout(rng, cfg)
        if need > len(sensors):
            break
        region = detection_region(sensors, radius, need)
        if region.is_empty or region.area <= 1e-9:
            continue
        x0, y0, x1, y1 = region.bounds
        lo = np.maximum([x0 - pad, y0 - pad], 0.0)
        hi = np.minimum([x1 + pad, y1 + pad], 10.0)
        while True:
            target = rng.uniform(lo, hi, size=(1, 2))
            if sensor.true(sensors, target).sum() >= need:
                return sensors, target
    raise ValueError(f"no sensor layout with a point detected by {need} of {cfg['n_sensors']} "
                     f"sensors in {tries} draws; lower min_detections")


def _make_localization(modality: str):
    def make(rng: np.random.Generator, cfg: dict[str, Any]) -> TaskBody:
        sensor = make_sensor(modality, cfg)
        sensors, target = _draw_scene(rng, cfg, modality)
        readings = readings_to_json(_round(sensor.measure(sensors, target, rng)[0]),
                                    pairs=modality == "range_bearing", stepped=False)
        prompt = P.localization_prompt(modality, sensors.tolist(), readings, radius=cfg.get("radius"))
        inputs = {"modality": modality, "sensors": sensors.tolist(), "readings": readings,
                  "sensor_model": sensor.params(), "domain": [0.0, 10.0]}
        if modality == "proximity":
            inputs["radius"] = float(cfg["radius"])
        return TaskBody(prompt, inputs, target[0].tolist())
    return make


def _make_event_localization(target_kind: str):
    def make(rng, cfg):
        sensor = make_sensor("toa", cfg)
        sensors = _layout(rng, cfg)
        pos = rng.uniform(0.0, 10.0, size=(1, 2))
        t0 = float(rng.uniform(*cfg["emit_time_range"]))
        readings = readings_to_json(_round(sensor.measure(sensors, pos, rng, [t0])[0]), False, False)
        speed = float(cfg["wave_speed"])
        prompt = P.event_localization_prompt(target_kind, sensors.tolist(), readings,
                                             speed=speed, time_unit=cfg["time_unit"])
        inputs = {"modality": "toa", "sensors": sensors.tolist(), "readings": readings,
                  "wave_speed": speed, "time_unit": cfg["time_unit"], "sensor_model": sensor.params(),
                  "domain": [0.0, 10.0]}
        answer = {"position": pos[0].tolist(), "time": t0,
                  "both": [*pos[0].tolist(), t0]}[target_kind]
        meta = {"truth": {"position": pos[0].tolist(), "t0": t0}}
        if target_kind == "both":
            meta["answer_spec"] = {"length": 3}
        return TaskBody(prompt, inputs, answer, meta=meta)
    return make


# ----------------------------------------------------------------------------------- tracking
def _motion_ranges(cfg):
    """The basis-motion parameter table named by the config's ``motion_ranges``
    (:data:`stsim.sim.motion.MOTION_RANGES`)."""
    name = cfg.get("motion_ranges", "stark_release")
    try:
        return MOTION_RANGES[name]
    except (KeyError, TypeError):
        raise ValueError(f"motion_ranges must be one of {', '.join(MOTION_RANGES)}, got {name!r}") from None


def _dropout(readings: np.ndarray, cfg, rng) -> tuple[np.ndarray, float]:
    """Apply the family's dropout; returns the readings and the mean dropout rate.

    ``readings_per_step`` (a list of counts, default for STARK tracking) keeps that many
    readings per step, the count uniform over the list (:func:`apply_count_dropout`, the
    release's structure); ``readings_per_step: null`` drops each reading independently with
    probability ``dropout_rate``."""
    counts = cfg.get("readings_per_step")
    if counts is not None:
        return apply_count_dropout(readings, counts, rng), count_dropout_rate(counts, readings.shape[1])
    rate = float(cfg.get("dropout_rate") or 0.0)
    return apply_dropout(readings, rate, rng), rate


def _steps(readings: list, times: np.ndarray, golds: list, show_time: bool) -> list[Step]:
    steps = []
    for k in range(len(times)):
        r = readings[k]
        steps.append(Step(index=k, prompt=P.step_fragment(k, float(times[k]) if show_time else None, r),
                          inputs={"time": float(times[k]) if show_time else None, "readings": r},
                          answer=golds[k]))
    return steps


def _make_tracking(modality: str):
    def make(rng, cfg):
        sensor = make_sensor(modality, cfg)
        need = int(cfg.get("min_detections", 0))
        traj = random_trajectory(rng, n_steps=int(cfg["n_steps"]), duration=float(cfg["duration"]),
                                 max_components=int(cfg["max_components"]), ranges=_motion_ranges(cfg))
        # proximity: step 0 must be detected (as in the release).  Only the sensors are redrawn:
        # redrawing the trajectory too would favour trajectories starting mid-domain (issue 15).
        for _ in range(10_000):
            sensors = _layout(rng, cfg)
            if need == 0 or sensor.true(sensors, traj.positions[:1]).sum() >= need:
                break
        else:
            raise ValueError(f"no sensor layout with {need} detections at step 0; lower min_detections")
        readings, rate = _dropout(sensor.measure(sensors, traj.positions, rng), cfg, rng)
        readings = readings_to_json(_round(readings), pairs=modality == "range_bearing", stepped=True)
        golds = traj.positions.tolist()
        steps = _steps(readings, traj.times, golds, show_time=True)
        prompt = P.tracking_prompt(modality, sensors.tolist(), radius=cfg.get("radius"))
        inputs = {"modality": modality, "sensors": sensors.tolist(), "times": traj.times.tolist(),
                  "readings": readings, "sensor_model": sensor.params(),
                  "dropout_rate": rate, "domain": [0.0, 10.0]}
        if modality == "proximity":
            inputs["radius"] = float(cfg["radius"])
        return TaskBody(prompt, inputs, None, steps=steps,
                        meta={"trajectory_components": list(traj.components)})
    return make


def _make_event_tracking(target_kind: str):
    def make(rng, cfg):
        sensor = make_sensor("toa", cfg)
        sensors = _layout(rng, cfg)
        t_start = float(rng.uniform(*cfg["emit_time_range"]))
        traj = random_trajectory(rng, n_steps=int(cfg["n_steps"]), duration=float(cfg["duration"]),
                                 t0=t_start, max_components=int(cfg["max_components"]),
                                 ranges=_motion_ranges(cfg))
        emit = traj.times
        readings, rate = _dropout(sensor.measure(sensors, traj.positions, rng, emit), cfg, rng)
        readings = readings_to_json(_round(readings), pairs=False, stepped=True)
        if target_kind == "position":
            golds = traj.positions.tolist()
        elif target_kind == "time":
            golds = emit.tolist()
        else:
            golds = [[*p, t] for p, t in zip(traj.positions.tolist(), emit.tolist())]
        steps = _steps(readings, emit, golds, show_time=(target_kind == "position"))
        speed = float(cfg["wave_speed"])
        prompt = P.event_tracking_prompt(target_kind, sensors.tolist(), speed=speed,
                                         time_unit=cfg["time_unit"])
        inputs = {"modality": "toa", "sensors": sensors.tolist(), "readings": readings,
                  "times": emit.tolist() if target_kind == "position" else None,
                  "wave_speed": speed, "time_unit": cfg["time_unit"], "sensor_model": sensor.params(),
                  "dropout_rate": rate, "domain": [0.0, 10.0]}
        meta = {"trajectory_components": list(traj.components),
                "truth": {"positions": traj.positions.tolist(), "emit_times": emit.tolist()}}
        if target_kind == "both":
            meta["answer_spec"] = {"length": 3}
        return TaskBody(prompt, inputs, None, steps=steps, meta=meta)
    return make


# --------------------------------------------------------------------------------- validation
def validate_inputs(task) -> None:
    """Reject tier-1 inputs no sensor could produce: non-numeric, NaN or infinite readings
    (a dropped tracking reading must be ``null``), negative ranges, bearings outside
    [0, 360], proximity readings other than 0/1, sensors that are not [x, y] pairs, or a
    readings list whose length differs from the number of sensors, a tracking task with no
    steps, or a ``sensor_model`` that :func:`~stsim.sim.sensors.sensor_from_params` refuses (an
    unknown noise kind; a NaN, infinite or negative noise scale; a speed or radius <= 0).
    Tracking tasks hold their readings twice, in ``inputs.readings`` (one list per step) and in
    each step's ``inputs.readings`` (and the time in ``inputs.times`` and each step's
    ``inputs.time``): every copy is checked, and the copies must agree.

    Raises:
        RecordError: naming the task, step and sensor.
    """
    import math

    from ..records import RecordError, finite_numbers
    inp = task.inputs
    where = f"task {task.id}"
    for key in ("sensors", "readings", "modality"):
        if key not in inp:
            raise RecordError(f"{where}: inputs.{key} is missing")
    sensors = inp["sensors"]
    if not isinstance(sensors, list) or not sensors or not all(
            isinstance(s, list) and len(s) == 2 and all(isinstance(v, (int, float)) and math.isfinite(v) for v in s)
            for s in sensors):
        raise RecordError(f"{where}: inputs.sensors must be a non-empty list of finite [x, y] pairs")
    m = inp["modality"]
    if "tracking" in task.family.split(".")[1] and not task.steps:
        n = len(inp["readings"]) if isinstance(inp["readings"], list) else 0
        raise RecordError(f"{where}: has no steps, but {task.family} readings are per step "
                          f"(inputs.readings holds {n} step(s)); 'steps' needs one entry per "
                          "reading step, each with its gold answer")
    if "domain" in inp:
        lo, hi = finite_numbers(inp["domain"], f"{where}: inputs.domain", 2)
        if not lo < hi:
            raise RecordError(f"{where}: inputs.domain must be [low, high] with low < high, got {inp['domain']}")
    if "sensor_model" in inp:        # the audit's noise bounds come from it
        from ..sim.sensors import sensor_from_params
        try:
            sensor_from_params(inp["sensor_model"])
        except ValueError as exc:
            raise RecordError(f"{where}: inputs.sensor_model: {exc}") from None
    allow_null = bool(task.steps)  # a dropped tracking reading is null

    def check_row(row, at: str) -> None:
        if not isinstance(row, list) or len(row) != len(sensors):
            raise RecordError(f"{at}: expected {len(sensors)} readings (one per sensor), got "
                              f"{len(row) if isinstance(row, list) else type(row).__name__}")
        for j, r in enumerate(row):
            if r is None:
                if allow_null:
                    continue
                raise RecordError(f"{at}, {P.sensor_name(j)}: reading is missing (null); localisation "
                                  "tasks need every reading")
            parts = r if m == "range_bearing" else [r]
            if m == "range_bearing" and not (isinstance(r, list) and len(r) == 2):
                raise RecordError(f"{at}, {P.sensor_name(j)}: expected [range, bearing], got {r!r}")
            for v in parts:
                if isinstance(v, bool) or not isinstance(v, (int, float)):
                    raise RecordError(f"{at}, {P.sensor_name(j)}: reading {v!r} is not a number")
                if not math.isfinite(v):
                    raise RecordError(f"{at}, {P.sensor_name(j)}: reading is {v} (NaN or infinite); "
                                      "write null for a dropped reading")
            if m in ("range", "range_bearing") and parts[0] < 0:
                raise RecordError(f"{at}, {P.sensor_name(j)}: negative range {parts[0]}")
            if m in ("bearing", "range_bearing") and not 0 <= parts[-1] <= 360:
                raise RecordError(f"{at}, {P.sensor_name(j)}: bearing {parts[-1]} outside [0, 360] degrees")
            if m == "proximity" and parts[0] not in (0, 1):
                raise RecordError(f"{at}, {P.sensor_name(j)}: proximity reading must be 0 or 1, got {parts[0]}")

    if not task.steps:
        check_row(inp["readings"], where)
        return
    rows = inp["readings"]
    if not isinstance(rows, list) or len(rows) != len(task.steps):
        raise RecordError(f"{where}: inputs.readings holds "
                          f"{len(rows) if isinstance(rows, list) else type(rows).__name__} step(s), "
                          f"but the task has {len(task.steps)} steps")
    times = inp.get("times")
    if times is not None:  # event tracking: emission times are unknowns (null)
        finite_numbers(times, f"{where}: inputs.times", len(task.steps))
    for k, row in enumerate(rows):
        check_row(row, f"{where}, step {k} (inputs.readings[{k}])")
    # each step carries its own copy of its readings (and time): what `show`, `fidelity` and
    # the code solver's time stamps read; checked as the main copy is, and against it
    # (by position: a step's index may carry a shot schedule, e.g. steps 0, 1, 2, 8, 9)
    for i, st in enumerate(task.steps):
        if "readings" in st.inputs:
            at = f"{where}, step {i} (steps[{i}].inputs.readings)"
            check_row(st.inputs["readings"], at)
            if st.inputs["readings"] != rows[i]:
                j = next((j for j, (a, b) in enumerate(zip(st.inputs["readings"], rows[i])) if a != b), 0)
                raise RecordError(f"{at}, {P.sensor_name(j)}: reading {st.inputs['readings'][j]!r} differs from "
                                  f"inputs.readings[{i}] ({rows[i][j]!r}); the two copies must agree")
        t = st.inputs.get("time")
        if t is not None:
            at = f"{where}, step {i} (steps[{i}].inputs.time)"
            if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t):
                raise RecordError(f"{at}: time must be a finite number or null, got {t!r:.40}")
            if times is not None and t != times[i]:
                raise RecordError(f"{at}: time {t!r} differs from inputs.times[{i}] ({times[i]!r}); "
                                  "the two copies must agree")


# ----------------------------------------------------------------------------------- register
_LOC = {**COMMON, "range_sigma": 0.01, "bearing_sigma": 0.01, "radius": 4.0}
_EVT = {**COMMON, "toa_sigma": 0.01, "wave_speed": 5.0, "time_unit": "s", "emit_time_range": [0.0, 10.0]}
# Tracking dropout as released: 1, 2 or 3 of 4 readings per step (mean rate 0.5); ToA 3 or 4
# (mean rate 0.125).  ``dropout_rate`` applies only with ``readings_per_step: null``.
_TRK = {**_LOC, "n_steps": 50, "duration": 10.0, "readings_per_step": [1, 2, 3], "dropout_rate": 0.5,
        "max_components": 3, "motion_ranges": "stark_release"}
_ETRK = {**COMMON, "toa_sigma": 0.01, "wave_speed": 20.0, "time_unit": "min",
         "emit_time_range": [0.0, 10.0], "n_steps": 50, "duration": 10.0, "readings_per_step": [3, 4],
         "dropout_rate": 0.125, "max_components": 3, "motion_ranges": "stark_release"}

#: Generator versions (bump when a family's output changes for the same seed).  Version 2
#: (issue 15): tracking draws trajectories with :data:`~stsim.sim.motion.STARK_RELEASE_RANGES`
#: and (except proximity) keeps a per-step count of readings; proximity localisation draws the
#: sensors first and the target inside their detection region.
_VERSIONS = {"stark.localization.proximity": "2"}


def _register(name, fmt, make, defaults, description):
    version = "2" if ".tracking." in name or name.startswith("stark.temporal_tracking.") else \
        _VERSIONS.get(name, "1")
    part = "Appendix 7.4 (tracking)" if ".tracking." in name or "_tracking." in name else "Appendix 7.3 (localisation)"
    register_family(Family(name, fmt, make, defaults, description, version=version,
                           validate=validate_inputs,
                           source=f"STARK §3.2.1, {part}; prompt content Appendix 7.9 Tables 11-17"))


for _m, _desc in [("range", "multilateration from 4 noisy ranges"),
                  ("bearing", "triangulation from 4 noisy bearings"),
                  ("range_bearing", "position from 4 noisy [range, bearing] pairs"),
                  ("proximity", "position from 4 binary disk detections (r = 4)")]:
    _register(f"stark.localization.{_m}", "point", _make_localization(_m),
          {**_LOC, "min_detections": 3} if _m == "proximity" else dict(_LOC), f"Localise a static object: {_desc} (STARK Tables 11-13).")
    _cfg = dict(_TRK)
    if _m == "proximity":
        # the released proximity trajectories drift more than the others: the wider default
        # table fits them better on both halves (docs/stark-tier1.md, "Trajectory parameters")
        _cfg.update(n_steps=20, readings_per_step=None, dropout_rate=0.0, min_detections=1,
                    motion_ranges="default")
    _register(f"stark.tracking.{_m}", "point", _make_tracking(_m), _cfg,
          f"Track a moving object step by step: {_desc}, with dropout (STARK Table 16).")

_register("stark.localization.event", "point", _make_event_localization("position"),
          dict(_EVT), "Locate a seismic event from ToA at 4 geophones, emission time unknown (STARK Table 14).")
_register("stark.temporal_localization.event", "time", _make_event_localization("time"),
          dict(_EVT), "Estimate a seismic event's time from ToA at 4 geophones (STARK Table 15).")
_register("stark.localization.event_xyt", "vector", _make_event_localization("both"),
          dict(_EVT), "Estimate a seismic event's [x, y, t0] jointly from ToA (STARK released data).")
_register("stark.tracking.event", "point", _make_event_tracking("position"),
          {**_ETRK, "n_steps": 40, "duration": 20.0, "emit_time_range": [0.0, 0.0]},
          "Track a moving sound source from ToA; emission times known (STARK released data).")
_register("stark.temporal_tracking.event", "time", _make_event_tracking("time"),
          dict(_ETRK), "Estimate each shot's firing time of a moving source from ToA (STARK Table 17).")
_register("stark.tracking.event_xyt", "vector", _make_event_tracking("both"),
          dict(_ETRK), "Track a moving source's [x, y, t0] per shot from ToA (STARK released data).")
