"""Measurement noise models.

Defaults follow STARK Appendix 7.4, Table 7:

* range: uniform, relative to the true distance, ``r + U(-r*sigma, r*sigma)``, sigma = 0.01;
* bearing: uniform, proportional to the full circle, ``b + U(-2*pi*sigma, 2*pi*sigma)`` radians
  (sigma = 0.01, i.e. +-3.6 degrees);
* time of arrival: uniform, absolute, ``t + U(-sigma, sigma)``, sigma = 0.01 (in the task's time
  unit).

Each model is a small object with ``apply(true, rng)``, ``logpdf(z, true)`` (the likelihood the
Bayes estimators of :mod:`stsim.baselines.posterior` use) and ``bound(true)`` giving the largest
possible deviation (``inf`` for Gaussian noise), which the audit uses to check that a gold answer
is consistent with its readings.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class NoNoise:
    """Exact readings."""

    kind = "none"

    def apply(self, true: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(true, dtype=float).copy()

    def bound(self, true: np.ndarray) -> np.ndarray:
        return np.zeros_like(np.asarray(true, dtype=float))

    def logpdf(self, z, true):
        return np.where(np.asarray(z) == np.asarray(true), 0.0, -np.inf)

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind}


def _check_scale(owner: str, name: str, value) -> None:
    """Raise ``ValueError`` unless a noise scale is a finite number >= 0 (a NaN scale would make
    every bound check pass; a negative one every check fail)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
        raise ValueError(f"{owner} {name} must be a finite number >= 0, got {value!r}")


@dataclass(frozen=True)
class UniformRelative:
    """``x + U(-|x|*sigma, |x|*sigma)``: STARK Table 7, range noise (sigma = 0.01)."""

    sigma: float = 0.01
    kind = "uniform_relative"

    def __post_init__(self):
        _check_scale(self.kind, "sigma", self.sigma)

    def apply(self, true, rng):
        true = np.asarray(true, dtype=float)
        return true + rng.uniform(-1.0, 1.0, size=true.shape) * np.abs(true) * self.sigma

    def bound(self, true):
        return np.abs(np.asarray(true, dtype=float)) * self.sigma

    def logpdf(self, z, true):
        """Log density of reading ``z`` given ``true``: ``-log(2 sigma |true|)`` inside the
        bound, ``-inf`` outside."""
        half = np.maximum(np.abs(true) * self.sigma, 1e-12)
        return np.where(np.abs(np.asarray(z) - true) <= half, -np.log(2 * half), -np.inf)

    def to_dict(self):
        return {"kind": self.kind, "sigma": self.sigma}


@dataclass(frozen=True)
class UniformAbsolute:
    """``x + U(-half_width, half_width)``: STARK Table 7, ToA noise (half_width = 0.01) and,
    with ``half_width = 2*pi*0.01`` rad, bearing noise."""

    half_width: float = 0.01
    kind = "uniform_absolute"

    def __post_init__(self):
        _check_scale(self.kind, "half_width", self.half_width)

    def apply(self, true, rng):
        true = np.asarray(true, dtype=float)
        return true + rng.uniform(-self.half_width, self.half_width, size=true.shape)

    def bound(self, true):
        return np.full_like(np.asarray(true, dtype=float), self.half_width)

    def logpdf(self, z, true):
        """``-log(2 half_width)`` inside the bound, ``-inf`` outside."""
        return np.where(np.abs(np.asarray(z) - true) <= self.half_width,
                        -np.log(2 * self.half_width), -np.inf)

    def to_dict(self):
        return {"kind": self.kind, "half_width": self.half_width}


@dataclass(frozen=True)
class Gaussian:
    """``x + N(0, s^2)`` with ``s = sigma`` (absolute) or ``s = |x|*sigma`` (relative)."""

    sigma: float = 0.01
    relative: bool = False
    kind = "gaussian"

    def __post_init__(self):
        _check_scale(self.kind, "sigma", self.sigma)

    def apply(self, true, rng):
        true = np.asarray(true, dtype=float)
        scale = np.abs(true) * self.sigma if self.relative else self.sigma
        return true + rng.normal(size=true.shape) * scale

    def bound(self, true):
        return np.full_like(np.asarray(true, dtype=float), np.inf)

    def logpdf(self, z, true):
        """Normal log density."""
        true = np.asarray(true, dtype=float)
        sd = np.maximum(np.abs(true) * self.sigma, 1e-12) if self.relative else self.sigma
        return -0.5 * ((np.asarray(z) - true) / sd) ** 2 - np.log(sd * np.sqrt(2 * np.pi))

    def to_dict(self):
        return {"kind": self.kind, "sigma": self.sigma, "relative": self.relative}


def noise_from_dict(d: dict[str, Any] | None):
    """Rebuild a noise model from its ``to_dict`` form (``None`` means no noise).

    Raises:
        ValueError: unknown ``kind`` or bad parameters (missing, not a number, NaN, infinite or
            negative).
    """
    if d is None:
        return NoNoise()
    if not isinstance(d, dict):
        raise ValueError(f"bad noise model {d!r}: expected an object with a 'kind'")
    kind = d.get("kind")
    try:
        if kind == "none":
            return NoNoise()
        if kind == "uniform_relative":
            return UniformRelative(float(d["sigma"]))
        if kind == "uniform_absolute":
            return UniformAbsolute(float(d["half_width"]))
        if kind == "gaussian":
            return Gaussian(float(d["sigma"]), bool(d.get("relative", False)))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"bad noise model {d!r}: {exc}") from None
    raise ValueError(f"unknown noise model kind {kind!r}; known: none, uniform_relative, "
                     "uniform_absolute, gaussian")


#: STARK Table 7 defaults.
STARK_RANGE_NOISE = UniformRelative(0.01)
STARK_BEARING_NOISE_RAD = UniformAbsolute(2 * np.pi * 0.01)
STARK_TOA_NOISE = UniformAbsolute(0.01)
