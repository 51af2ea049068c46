"""Object trajectories (STARK Appendix 7.3).

A trajectory is the sum of one to three basis motions drawn from a library (linear, circular,
sinusoidal, figure-eight, spiral), each with physical parameters sampled uniformly, evaluated
at a fixed sample rate over a fixed duration, then min-max normalised per axis into the domain
(default [0, 10]^2).  Every basis motion is a small frozen dataclass with ``positions(t)``;
:func:`random_trajectory` samples and sums them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Linear:
    """``p(t) = p0 + v t``; p0 in plane units, v in units per second."""
    x0: float
    y0: float
    vx: float
    vy: float

    def positions(self, t: np.ndarray) -> np.ndarray:
        return np.column_stack([self.x0 + self.vx * t, self.y0 + self.vy * t])


@dataclass(frozen=True)
class Circular:
    """``p(t) = c + R (cos(w t + phi), sin(w t + phi))``; w in rad/s (sign = direction)."""
    cx: float
    cy: float
    radius: float
    omega: float
    phase: float

    def positions(self, t):
        a = self.omega * t + self.phase
        return np.column_stack([self.cx + self.radius * np.cos(a), self.cy + self.radius * np.sin(a)])


@dataclass(frozen=True)
class Sinusoidal:
    """Drift along heading ``theta`` at ``speed`` with a transverse oscillation
    ``amplitude * sin(w t + phi)``."""
    x0: float
    y0: float
    speed: float
    theta: float
    amplitude: float
    omega: float
    phase: float

    def positions(self, t):
        along = np.array([np.cos(self.theta), np.sin(self.theta)])
        across = np.array([-along[1], along[0]])
        s = self.speed * t
        o = self.amplitude * np.sin(self.omega * t + self.phase)
        return np.array([self.x0, self.y0]) + np.outer(s, along) + np.outer(o, across)


@dataclass(frozen=True)
class FigureEight:
    """Lissajous figure-eight ``(A sin(w t), (A/2) sin(2 w t))`` rotated by ``theta``."""
    cx: float
    cy: float
    amplitude: float
    omega: float
    theta: float

    def positions(self, t):
        u = self.amplitude * np.sin(self.omega * t)
        v = 0.5 * self.amplitude * np.sin(2 * self.omega * t)
        c, s = np.cos(self.theta), np.sin(self.theta)
        return np.column_stack([self.cx + c * u - s * v, self.cy + s * u + c * v])


@dataclass(frozen=True)
class Spiral:
    """Archimedean spiral ``r(t) = r0 + k t`` at angular rate ``w`` around ``c``."""
    cx: float
    cy: float
    r0: float
    growth: float
    omega: float
    phase: float

    def positions(self, t):
        r = self.r0 + self.growth * t
        a = self.omega * t + self.phase
        return np.column_stack([self.cx + r * np.cos(a), self.cy + r * np.sin(a)])


BASIS_MOTIONS = ("linear", "circular", "sinusoidal", "figure_eight", "spiral")

#: Parameter ranges (uniform ``[low, high]``) of each basis motion, the ranges stsim used before
#: fitting them to STARK's release (Appendix 7.3 names the parameters but not their ranges).
#: Units: positions in plane units, speeds in units per second, angular rates in rad/s (a
#: ``signed`` rate gets a random sign), phases and headings in radians.
DEFAULT_RANGES: dict[str, dict[str, tuple[float, float]]] = {
    "linear": {"x0": (0, 10), "y0": (0, 10), "vx": (-1, 1), "vy": (-1, 1)},
    "circular": {"cx": (2, 8), "cy": (2, 8), "radius": (1, 4), "omega": (0.2, 1.2),
                 "phase": (0, 2 * np.pi)},
    "sinusoidal": {"x0": (0, 10), "y0": (0, 10), "speed": (0.2, 1.0), "theta": (0, 2 * np.pi),
                   "amplitude": (0.5, 2.5), "omega": (0.5, 2.0), "phase": (0, 2 * np.pi)},
    "figure_eight": {"cx": (3, 7), "cy": (3, 7), "amplitude": (1, 4), "omega": (0.2, 1.0),
                     "theta": (0, np.pi)},
    "spiral": {"cx": (3, 7), "cy": (3, 7), "r0": (0.2, 1.0), "growth": (0.1, 0.4),
               "omega": (0.3, 1.5), "phase": (0, 2 * np.pi)},
}
#: Ranges fitted to STARK's released tier-1 trajectories (docs/stark-tier1.md, "Trajectory
#: parameters"; chosen by scripts/fit_stark_trajectories.py on the even-numbered released 50-step
#: trajectories, checked on the odd-numbered ones).  Changes from :data:`DEFAULT_RANGES`: linear
#: velocity components within +-0.15 units/s (not +-1); sinusoidal drift 0.05-0.25 units/s (not
#: 0.2-1.0) at 0.5-1.0 rad/s; circles of radius 2-4; figure-eights unrotated at 0.4-1.0 rad/s;
#: spirals starting at radius 0-0.2.
STARK_RELEASE_RANGES: dict[str, dict[str, tuple[float, float]]] = {
    **DEFAULT_RANGES,
    "linear": {"x0": (0, 10), "y0": (0, 10), "vx": (-0.15, 0.15), "vy": (-0.15, 0.15)},
    "circular": {"cx": (2, 8), "cy": (2, 8), "radius": (2, 4), "omega": (0.2, 1.2),
                 "phase": (0, 2 * np.pi)},
    "sinusoidal": {"x0": (0, 10), "y0": (0, 10), "speed": (0.05, 0.25), "theta": (0, 2 * np.pi),
                   "amplitude": (0.5, 2.5), "omega": (0.5, 1.0), "phase": (0, 2 * np.pi)},
    "figure_eight": {"cx": (3, 7), "cy": (3, 7), "amplitude": (1, 4), "omega": (0.4, 1.0),
                     "theta": (0, 0)},
    "spiral": {"cx": (3, 7), "cy": (3, 7), "r0": (0.0, 0.2), "growth": (0.1, 0.4),
               "omega": (0.3, 1.5), "phase": (0, 2 * np.pi)},
}
_SIGNED = {"circular": "omega", "spiral": "omega"}
_CLASSES = {"linear": Linear, "circular": Circular, "sinusoidal": Sinusoidal,
            "figure_eight": FigureEight, "spiral": Spiral}


#: Names of the basis-motion parameter tables (a tier-1 family's ``motion_ranges`` config).
MOTION_RANGES: dict[str, dict[str, dict[str, tuple[float, float]]]] = {
    "stark_release": STARK_RELEASE_RANGES, "default": DEFAULT_RANGES}


def scaled_ranges(linear_speed: float = 1.0, drift_speed: float = 1.0, omega: float = 1.0,
                  amplitude: float = 1.0, base: dict | None = None) -> dict[str, dict[str, tuple[float, float]]]:
    """``base`` ranges (default :data:`DEFAULT_RANGES`) with four multipliers applied:
    ``linear_speed`` to the linear motion's ``vx, vy``; ``drift_speed`` to the sinusoid's drift
    ``speed``; ``omega`` to every angular rate (circular, sinusoidal, figure-eight, spiral);
    ``amplitude`` to the sinusoid's transverse amplitude.  These are the knobs fitted to STARK's
    released trajectories (docs/stark-tier1.md, "Trajectory parameters")."""
    src = DEFAULT_RANGES if base is None else base
    out = {k: dict(v) for k, v in src.items()}

    def mul(kind, name, f):
        lo, hi = out[kind][name]
        out[kind][name] = (lo * f, hi * f)
    mul("linear", "vx", linear_speed)
    mul("linear", "vy", linear_speed)
    mul("sinusoidal", "speed", drift_speed)
    mul("sinusoidal", "amplitude", amplitude)
    for kind in ("circular", "sinusoidal", "figure_eight", "spiral"):
        mul(kind, "omega", omega)
    return out


def sample_motion(kind: str, rng: np.random.Generator,
                  ranges: dict[str, dict[str, tuple[float, float]]] | None = None):
    """Sample one basis motion's physical parameters uniformly within ``ranges[kind]``
    (default :data:`DEFAULT_RANGES`), in the order the ranges list them.

    Raises ``ValueError`` for an unknown kind (see :data:`BASIS_MOTIONS`).
    """
    table = DEFAULT_RANGES if ranges is None else ranges
    if kind not in _CLASSES or kind not in table:
        raise ValueError(f"unknown basis motion {kind!r}; known: {', '.join(BASIS_MOTIONS)}")
    sign = 1.0 if rng.random() < 0.5 else -1.0
    vals = {name: float(rng.uniform(lo, hi)) for name, (lo, hi) in table[kind].items()}
    if kind in _SIGNED:
        vals[_SIGNED[kind]] *= sign
    return _CLASSES[kind](**vals)


@dataclass(frozen=True)
class Trajectory:
    """Timestamps (n,) and normalised positions (n, 2), plus the basis motions used."""
    times: np.ndarray
    positions: np.ndarray
    components: tuple[dict[str, Any], ...]


def minmax_normalise(p: np.ndarray, low: float = 0.0, high: float = 10.0) -> np.ndarray:
    """Per-axis min-max normalisation of (n, 2) points into ``[low, high]``.  An axis with no
    extent maps to the middle of the domain."""
    p = np.asarray(p, dtype=float)
    lo, hi = p.min(axis=0), p.max(axis=0)
    span = hi - lo
    out = np.empty_like(p)
    for j in range(p.shape[1]):
        if span[j] < 1e-12:
            out[:, j] = 0.5 * (low + high)
        else:
            out[:, j] = low + (p[:, j] - lo[j]) / span[j] * (high - low)
    return out


def random_trajectory(rng: np.random.Generator, n_steps: int = 50, duration: float = 10.0,
                      t0: float = 0.0, max_components: int = 3, low: float = 0.0,
                      high: float = 10.0, kinds: tuple[str, ...] = BASIS_MOTIONS,
                      ranges: dict[str, dict[str, tuple[float, float]]] | None = None) -> Trajectory:
    """A random trajectory as in STARK Appendix 7.3.

    Args:
        n_steps: number of samples (STARK tracking: 50; proximity: 20; spatial event: 40).
        duration: time span in the task's unit, sampled as ``linspace(t0, t0 + duration, n)``.
        max_components: the number of summed basis motions is uniform in 1..max_components.
        ranges: parameter ranges per basis motion (default :data:`DEFAULT_RANGES`; STARK tier 1
            uses :data:`STARK_RELEASE_RANGES`).

    Returns: :class:`Trajectory` with ``times`` (n,) and ``positions`` (n, 2) in ``[low, high]^2``.
    Raises ``ValueError`` if ``n_steps < 2`` or ``duration <= 0``.
    """
    if n_steps < 2 or duration <= 0:
        raise ValueError(f"need n_steps >= 2 and duration > 0 (got {n_steps}, {duration})")
    k = int(rng.integers(1, max_components + 1))
    chosen = rng.choice(len(kinds), size=k, replace=False)
    motions = [sample_motion(kinds[i], rng, ranges) for i in sorted(chosen)]
    t_rel = np.linspace(0.0, duration, n_steps)
    total = sum(m.positions(t_rel) for m in motions)
    pos = minmax_normalise(total, low, high)
    comps = tuple({"kind": kinds[i], **asdict(m)} for i, m in zip(sorted(chosen), motions))
    return Trajectory(times=t0 + t_rel, positions=pos, components=comps)
