"""Sensor models of STARK §3.1: range, bearing, range+bearing, proximity and time of arrival.

Every sensor class measures a set of targets from a layout of sensor positions:

``measure(sensors, targets, rng, ...) -> readings``
    ``sensors``: (m, 2) sensor positions in plane units (STARK: [0, 10]^2, unitless or km);
    ``targets``: (k, 2) true target positions (one per time step);
    ``readings``: (k, m) for scalar modalities, (k, m, 2) for range+bearing.

Conventions (STARK Appendix 7.9, Table 12): bearings are degrees in [0, 360), counter-clockwise
from +x, measured at the sensor.  Noise defaults follow Table 7 (see :mod:`stsim.sim.noise`).

Sensor layouts and per-step dropout (missing readings become NaN, STARK §3.2.1 "random sensor
dropout") are separate functions so they compose with any modality.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .noise import (STARK_BEARING_NOISE_RAD, STARK_RANGE_NOISE, STARK_TOA_NOISE, NoNoise,
                    noise_from_dict)


def _as_points(a: Any, name: str) -> np.ndarray:
    arr = np.asarray(a, dtype=float)
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise ValueError(f"{name} must have shape (n, 2), got {arr.shape}")
    return arr


def distances(sensors: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Euclidean distances, shape (k, m), between k targets and m sensors (plane units)."""
    s, t = _as_points(sensors, "sensors"), _as_points(targets, "targets")
    return np.hypot(t[:, None, 0] - s[None, :, 0], t[:, None, 1] - s[None, :, 1])


def bearings_deg(sensors: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """True bearings, shape (k, m), in degrees [0, 360), counter-clockwise from +x at each sensor."""
    s, t = _as_points(sensors, "sensors"), _as_points(targets, "targets")
    ang = np.degrees(np.arctan2(t[:, None, 1] - s[None, :, 1], t[:, None, 0] - s[None, :, 0]))
    return np.mod(ang, 360.0)


@dataclass(frozen=True)
class RangeSensor:
    """Distance to the target; noise STARK Table 7 (uniform, 1 % of the true range)."""

    noise: Any = STARK_RANGE_NOISE
    modality = "range"

    def true(self, sensors, targets):
        return distances(sensors, targets)

    def measure(self, sensors, targets, rng):
        return np.abs(self.noise.apply(self.true(sensors, targets), rng))

    def params(self) -> dict[str, Any]:
        return {"modality": self.modality, "noise": self.noise.to_dict()}


@dataclass(frozen=True)
class BearingSensor:
    """Bearing to the target in degrees [0, 360), CCW from +x at the sensor.

    ``noise`` acts in **radians** (STARK Table 7: ``U(-2*pi*sigma, 2*pi*sigma)``, sigma = 0.01);
    readings are converted to degrees and wrapped into [0, 360).
    """

    noise: Any = STARK_BEARING_NOISE_RAD
    modality = "bearing"

    def true(self, sensors, targets):
        return bearings_deg(sensors, targets)

    def measure(self, sensors, targets, rng):
        rad = np.radians(self.true(sensors, targets))
        return np.mod(np.degrees(self.noise.apply(rad, rng)), 360.0)

    def params(self):
        return {"modality": self.modality, "noise_rad": self.noise.to_dict()}


@dataclass(frozen=True)
class RangeBearingSensor:
    """Composition of :class:`RangeSensor` and :class:`BearingSensor`; readings (k, m, 2) as
    ``[range, bearing_deg]``."""

    range_sensor: RangeSensor = field(default_factory=RangeSensor)
    bearing_sensor: BearingSensor = field(default_factory=BearingSensor)
    modality = "range_bearing"

    def true(self, sensors, targets):
        return np.stack([self.range_sensor.true(sensors, targets),
                         self.bearing_sensor.true(sensors, targets)], axis=-1)

    def measure(self, sensors, targets, rng):
        r = self.range_sensor.measure(sensors, targets, rng)
        b = self.bearing_sensor.measure(sensors, targets, rng)
        return np.stack([r, b], axis=-1)

    def params(self):
        return {"modality": self.modality, "range": self.range_sensor.params(),
                "bearing": self.bearing_sensor.params()}


@dataclass(frozen=True)
class ProximitySensor:
    """Binary detection: 1 if the target lies in the closed disk of ``radius`` around the
    sensor, else 0 (STARK Table 7: r = 4.0, no numeric noise).  ``flip_prob`` optionally flips
    each reading (0 by default, as in the released data)."""

    radius: float = 4.0
    flip_prob: float = 0.0
    modality = "proximity"

    def __post_init__(self):
        if not (np.isfinite(self.radius) and self.radius > 0):
            raise ValueError(f"proximity radius must be a finite number > 0, got {self.radius!r}")
        if not 0.0 <= self.flip_prob <= 1.0:
            raise ValueError(f"proximity flip_prob must be in [0, 1], got {self.flip_prob!r}")

    def true(self, sensors, targets):
        return (distances(sensors, targets) <= self.radius).astype(float)

    def measure(self, sensors, targets, rng):
        hits = self.true(sensors, targets)
        if self.flip_prob > 0:
            flips = rng.random(hits.shape) < self.flip_prob
            hits = np.where(flips, 1.0 - hits, hits)
        return hits

    def params(self):
        return {"modality": self.modality, "radius": self.radius, "flip_prob": self.flip_prob}


@dataclass(frozen=True)
class ToASensor:
    """Event-based sensor: time of arrival ``T = t_emit + d / speed`` plus noise.

    ``speed`` is the propagation speed in plane units per time unit (STARK Table 14: 5 km/s for
    seismic events; Table 17: 20 km/min for sound).  Noise: STARK Table 7, absolute uniform
    +-0.01 time units.
    """

    speed: float = 5.0
    noise: Any = STARK_TOA_NOISE
    modality = "toa"

    def __post_init__(self):
        if not (np.isfinite(self.speed) and self.speed > 0):
            raise ValueError(f"toa speed must be a finite number > 0, got {self.speed!r}")

    def true(self, sensors, targets, emit_times):
        emit = np.asarray(emit_times, dtype=float).reshape(-1, 1)
        return emit + distances(sensors, targets) / self.speed

    def measure(self, sensors, targets, rng, emit_times):
        return self.noise.apply(self.true(sensors, targets, emit_times), rng)

    def params(self):
        return {"modality": self.modality, "speed": self.speed, "noise": self.noise.to_dict()}


def sensor_from_params(p: dict[str, Any]):
    """Rebuild a sensor from its ``params()`` dict (used by the audit and the published loader).

    Raises:
        ValueError: unknown modality or malformed parameters (a missing key, a non-number, a
            NaN, infinite or negative noise scale, a speed or radius <= 0).
    """
    if not isinstance(p, dict):
        raise ValueError(f"sensor parameters must be an object, got {p!r}")
    try:
        return _sensor_from_params(p)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"bad sensor parameters {p!r}: {type(exc).__name__} {exc}") from None


def _sensor_from_params(p: dict[str, Any]):
    m = p.get("modality")
    if m == "range":
        return RangeSensor(noise_from_dict(p.get("noise")))
    if m == "bearing":
        return BearingSensor(noise_from_dict(p.get("noise_rad")))
    if m == "range_bearing":
        return RangeBearingSensor(sensor_from_params(p["range"]), sensor_from_params(p["bearing"]))
    if m == "proximity":
        return ProximitySensor(float(p.get("radius", 4.0)), float(p.get("flip_prob", 0.0)))
    if m == "toa":
        return ToASensor(float(p["speed"]), noise_from_dict(p.get("noise")))
    raise ValueError(f"unknown sensor modality {m!r}")


# ------------------------------------------------------------------------------------- layouts
def uniform_layout(rng: np.random.Generator, n: int = 4, low: float = 0.0,
                   high: float = 10.0) -> np.ndarray:
    """``n`` sensor positions uniform in ``[low, high]^2`` (STARK default: 4 in [0, 10]^2).

    Returns: (n, 2) array.  Raises ``ValueError`` if ``n < 1`` or ``high <= low``.
    """
    if n < 1 or high <= low:
        raise ValueError(f"need n >= 1 and high > low (got n={n}, low={low}, high={high})")
    return rng.uniform(low, high, size=(n, 2))


def circle_layout(n: int = 4, center=(5.0, 5.0), radius: float = 4.0) -> np.ndarray:
    """``n`` sensors evenly spaced on a circle (a well-conditioned geometry; low GDOP)."""
    ang = 2 * np.pi * np.arange(n) / n
    return np.column_stack([center[0] + radius * np.cos(ang), center[1] + radius * np.sin(ang)])


def make_layout(spec: Any, rng: np.random.Generator, n: int = 4) -> np.ndarray:
    """Sensor layout from a config value: ``"uniform"``, ``"circle"`` or an explicit list of
    ``[x, y]``.  Returns (n, 2)."""
    if isinstance(spec, str):
        if spec == "uniform":
            return uniform_layout(rng, n)
        if spec == "circle":
            return circle_layout(n)
        raise ValueError(f"unknown sensor layout {spec!r}; use 'uniform', 'circle' or a list of [x, y]")
    return _as_points(spec, "sensor layout")


def detection_region(sensors: np.ndarray, radius: float, min_hits: int,
                     domain: tuple[float, float] = (0.0, 10.0), quad_segs: int = 64):
    """Where a target is detected by at least ``min_hits`` of the disk sensors (closed disks of
    ``radius`` around each (m, 2) sensor position): the union, over every ``min_hits``-subset of
    sensors, of the intersection of their disks, clipped to the square ``domain``.  A shapely
    geometry; disks are polygons with ``4 * quad_segs`` vertices on the circle (so the region
    is inscribed in the true one, short by at most ``radius * (1 - cos(pi / (4 quad_segs)))``).

    Raises:
        ValueError: ``min_hits`` outside ``1..m``.
    """
    from itertools import combinations

    import shapely
    pts = _as_points(sensors, "sensors")
    if not 1 <= min_hits <= len(pts):
        raise ValueError(f"min_hits must be in 1..{len(pts)} (the number of sensors), got {min_hits}")
    disks = [shapely.Point(x, y).buffer(radius, quad_segs=quad_segs) for x, y in pts]
    parts = [shapely.intersection_all([disks[i] for i in c]) for c in combinations(range(len(pts)), min_hits)]
    box = shapely.box(domain[0], domain[0], domain[1], domain[1])
    return shapely.union_all(parts).intersection(box)


def apply_dropout(readings: np.ndarray, rate: float, rng: np.random.Generator) -> np.ndarray:
    """Set each (step, sensor) reading to NaN with probability ``rate``.

    ``readings``: (k, m) or (k, m, 2); a dropped range+bearing reading loses both parts.
    Returns a new array.  Raises ``ValueError`` unless ``0 <= rate < 1``.
    """
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"dropout rate must be in [0, 1), got {rate}")
    out = np.array(readings, dtype=float, copy=True)
    mask = rng.random(out.shape[:2]) < rate
    out[mask] = np.nan
    return out


def apply_count_dropout(readings: np.ndarray, kept_counts, rng: np.random.Generator) -> np.ndarray:
    """Per-step dropout with a fixed set of reading counts (the structure of STARK's release).

    At every step the number of readings kept is drawn uniformly from ``kept_counts`` and that
    many sensors, chosen uniformly without replacement, keep their reading; the others become
    NaN.  STARK's released range / bearing / range+bearing tracking tasks keep 1, 2 or 3 of
    4 readings per step (about a third each, mean dropout 0.5); its ToA tracking tasks keep 3
    or 4 (about half each, mean dropout 0.125), so no step is empty and a ToA step can always
    fix ``(x, y, t0)``.  Independent per-reading dropout (:func:`apply_dropout`) has the same
    mean but also gives steps with no or all readings.

    ``readings``: (k, m) or (k, m, 2); a dropped range+bearing reading loses both parts.
    Returns a new array.  The mean dropout rate is ``1 - mean(kept_counts) / m``.

    Raises:
        ValueError: ``kept_counts`` empty or holding a count outside ``0..m``.
    """
    out = np.array(readings, dtype=float, copy=True)
    k, m = out.shape[:2]
    counts = np.asarray(list(kept_counts), dtype=int)
    if counts.size == 0 or counts.min() < 0 or counts.max() > m:
        raise ValueError(f"kept reading counts must be in 0..{m} (the number of sensors), got "
                         f"{list(kept_counts)}")
    keep = counts[rng.integers(0, counts.size, size=k)]
    order = np.argsort(rng.random((k, m)), axis=1)      # a uniform random permutation per step
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(m)[None, :].repeat(k, 0), axis=1)
    out[ranks >= keep[:, None]] = np.nan
    return out


def count_dropout_rate(kept_counts, m: int) -> float:
    """Mean fraction of dropped readings under :func:`apply_count_dropout` with ``m`` sensors."""
    return 1.0 - float(np.mean(list(kept_counts))) / m


__all__ = ["RangeSensor", "BearingSensor", "RangeBearingSensor", "ProximitySensor", "ToASensor",
           "NoNoise", "distances", "bearings_deg", "uniform_layout", "circle_layout",
           "make_layout", "detection_region", "apply_dropout", "apply_count_dropout", "count_dropout_rate",
           "sensor_from_params"]
