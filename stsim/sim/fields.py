"""Synthetic spatiotemporal scalar fields observed by sensors (STARK §3.2.1: "synthesize
temperature readings with controlled spatial properties").

A field value at site ``s`` (WGS84 ``[lon, lat]``, degrees) and time ``t`` (hours since the first
reading) is

    Z(s, t) = m(t) + X(s, t),    m(t) = mean + A cos(2 pi (h0 + t - h_peak) / 24) + b t

where ``A`` is the diurnal amplitude, ``h0`` the hour of day of ``t = 0``, ``h_peak`` the hour of
the daily maximum and ``b`` the linear trend per hour; ``X`` is a zero-mean Gaussian random field
with the separable covariance

    Cov(X(s, t), X(s', t')) = variance * rho(d(s, s') / length_scale_m) * rho(|t - t'| / time_scale_h)

with ``d`` the great-circle (geodesic, WGS84 ellipsoid, :class:`pyproj.Geod`) distance in metres
and ``rho`` a Matérn correlation (Rasmussen & Williams 2006, *Gaussian Processes for Machine
Learning*, eq. 4.14-4.17: nu = 1/2 exponential, 3/2, 5/2) or the squared exponential (eq. 4.9).
A sensor reads ``Z + eps`` with independent ``eps ~ N(0, noise_sd^2)`` (measurement noise).

:func:`krige` is the best linear unbiased predictor of a reading under this model with the mean
known (simple kriging, i.e. the Gaussian-process posterior mean; R&W eq. 2.23 with a mean
function, eq. 2.38), the reference for what any predictor can achieve in expectation.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from pyproj import Geod
from scipy.linalg import cho_factor, cho_solve

GEOD = Geod(ellps="WGS84")

#: covariance kind -> correlation function of the scaled distance r = d / length scale (r >= 0)
CORRELATIONS = {
    "exponential": lambda r: np.exp(-r),
    "matern32": lambda r: (1.0 + math.sqrt(3.0) * r) * np.exp(-math.sqrt(3.0) * r),
    "matern52": lambda r: (1.0 + math.sqrt(5.0) * r + 5.0 * r ** 2 / 3.0) * np.exp(-math.sqrt(5.0) * r),
    "squared_exponential": lambda r: np.exp(-0.5 * r ** 2),
}

#: how each kind is named in prompts
KIND_NAMES = {"exponential": "exponential (Matérn nu = 1/2)", "matern32": "Matérn nu = 3/2",
              "matern52": "Matérn nu = 5/2", "squared_exponential": "squared-exponential"}


def correlation(kind: str, r: np.ndarray) -> np.ndarray:
    """Correlation ``rho(r)`` of a scaled distance ``r >= 0`` (any shape); ``rho(0) = 1``.

    Raises:
        ValueError: unknown ``kind`` (see :data:`CORRELATIONS`).
    """
    try:
        f = CORRELATIONS[kind]
    except KeyError:
        raise ValueError(f"unknown covariance kind {kind!r}; known: {', '.join(CORRELATIONS)}") from None
    return f(np.abs(np.asarray(r, float)))


def geodesic_distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Great-circle distances on the WGS84 ellipsoid between every ``a[i]`` and ``b[j]``.

    Args:
        a: ``(n, 2)`` ``[lon, lat]`` degrees.  b: ``(m, 2)`` ``[lon, lat]`` degrees.
    Returns:
        ``(n, m)`` distances in metres.
    """
    a = np.asarray(a, float).reshape(-1, 2)
    b = np.asarray(b, float).reshape(-1, 2)
    ai = np.repeat(a, len(b), axis=0)
    bj = np.tile(b, (len(a), 1))
    _, _, d = GEOD.inv(ai[:, 0], ai[:, 1], bj[:, 0], bj[:, 1])
    return np.asarray(d, float).reshape(len(a), len(b))


def random_sites(rng: np.random.Generator, center: tuple[float, float], radius_m: float, n: int,
                 decimals: int = 5) -> np.ndarray:
    """``n`` sites uniform over the disc of ``radius_m`` metres around ``center`` (``[lon, lat]``),
    placed by geodesic forward computation and rounded to ``decimals`` (so printed and
    simulated coordinates agree).  Returns ``(n, 2)`` ``[lon, lat]`` degrees."""
    az = rng.uniform(0.0, 360.0, n)
    dist = radius_m * np.sqrt(rng.uniform(0.0, 1.0, n))
    lon, lat, _ = GEOD.fwd(np.full(n, center[0]), np.full(n, center[1]), az, dist)
    return np.round(np.column_stack([lon, lat]), decimals)


@dataclass(frozen=True)
class FieldModel:
    """Parameters of a synthetic field (see the module docstring for the formula).

    Attributes:
        kind: correlation family, a key of :data:`CORRELATIONS`.
        variance: variance of the random part ``X`` (unit squared, e.g. degC^2).
        length_scale_m: spatial length scale (metres).
        time_scale_h: temporal length scale (hours).
        noise_sd: measurement noise standard deviation (field unit).
        mean: base level (field unit).
        diurnal_amplitude: amplitude ``A`` of the daily cycle (field unit).
        diurnal_peak_hour: hour of day of the daily maximum (0-24).
        trend_per_hour: linear trend ``b`` (field unit per hour).
        start_hour: hour of day at ``t = 0``.
    """
    kind: str = "matern32"
    variance: float = 4.0
    length_scale_m: float = 5000.0
    time_scale_h: float = 6.0
    noise_sd: float = 0.2
    mean: float = 24.0
    diurnal_amplitude: float = 5.0
    diurnal_peak_hour: float = 15.0
    trend_per_hour: float = 0.02
    start_hour: float = 0.0

    def __post_init__(self):
        correlation(self.kind, 0.0)
        for name in ("variance", "length_scale_m", "time_scale_h"):
            if not getattr(self, name) > 0:
                raise ValueError(f"FieldModel.{name} must be positive, got {getattr(self, name)}")
        if self.noise_sd < 0:
            raise ValueError(f"FieldModel.noise_sd must be >= 0, got {self.noise_sd}")

    def params(self) -> dict:
        """Every parameter, JSON-ready (recorded in each task's inputs)."""
        return asdict(self)

    def mean_at(self, t: np.ndarray) -> np.ndarray:
        """Deterministic part ``m(t)`` at hours ``t`` since the first reading (any shape)."""
        t = np.asarray(t, float)
        phase = 2.0 * np.pi * (self.start_hour + t - self.diurnal_peak_hour) / 24.0
        return self.mean + self.diurnal_amplitude * np.cos(phase) + self.trend_per_hour * t

    def covariance(self, sites_a: np.ndarray, times_a: np.ndarray, sites_b: np.ndarray,
                   times_b: np.ndarray) -> np.ndarray:
        """Covariance of the random part between space-time points.

        Args:
            sites_a: ``(n, 2)`` ``[lon, lat]``; times_a: ``(n,)`` hours; likewise ``b`` with ``m``.
        Returns:
            ``(n, m)`` covariance (unit squared), without measurement noise.
        """
        d = geodesic_distances(sites_a, sites_b)
        dt = np.subtract.outer(np.asarray(times_a, float), np.asarray(times_b, float))
        return self.variance * correlation(self.kind, d / self.length_scale_m) * \
            correlation(self.kind, dt / self.time_scale_h)


def space_time_points(sites: np.ndarray, times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All (site, time) pairs, time-major: returns ``(T * n, 2)`` sites and ``(T * n,)`` times
    for ``sites (n, 2)`` and ``times (T,)``; row ``k * n + i`` is site ``i`` at time ``k``."""
    sites = np.asarray(sites, float).reshape(-1, 2)
    times = np.asarray(times, float).ravel()
    return np.tile(sites, (len(times), 1)), np.repeat(times, len(sites))


def sample_readings(model: FieldModel, rng: np.random.Generator, sites: np.ndarray,
                    times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Draw the field at every site and time, and the sensors' noisy readings.

    Args:
        sites: ``(n, 2)`` ``[lon, lat]`` degrees.  times: ``(T,)`` hours since the first reading.
    Returns:
        ``(truth, readings)``, each ``(T, n)``: the field ``Z`` and ``Z + noise``.
    """
    ps, pt = space_time_points(sites, times)
    cov = model.covariance(ps, pt, ps, pt)
    # a tiny jitter keeps the Cholesky factor stable for smooth kernels or coincident points
    chol = np.linalg.cholesky(cov + 1e-9 * model.variance * np.eye(len(cov)))
    x = chol @ rng.standard_normal(len(cov))
    truth = (model.mean_at(pt) + x).reshape(len(np.ravel(times)), -1)
    readings = truth + model.noise_sd * rng.standard_normal(truth.shape)
    return truth, readings


def krige(model: FieldModel, obs_sites: np.ndarray, obs_times: np.ndarray, obs_values: np.ndarray,
          target_sites: np.ndarray, target_times: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Simple kriging (known mean): BLUP of a *reading* at each target point.

    ``pred = m(t*) + k*^T (K + noise_sd^2 I)^-1 (y - m(t))`` and the prediction-error variance
    ``variance - k*^T (K + noise_sd^2 I)^-1 k* + noise_sd^2`` (R&W eq. 2.23-2.24).

    Args:
        obs_sites: ``(n, 2)`` ``[lon, lat]``; obs_times: ``(n,)`` hours; obs_values: ``(n,)``.
        target_sites: ``(m, 2)``; target_times: ``(m,)``.
    Returns:
        ``(pred (m,), error_variance (m,))`` in the field's unit (squared).
    Raises:
        ValueError: mismatched lengths or no observations.
    """
    y = np.asarray(obs_values, float).ravel()
    ot = np.asarray(obs_times, float).ravel()
    tt = np.asarray(target_times, float).ravel()
    if len(y) == 0 or len(y) != len(ot) or len(np.asarray(obs_sites).reshape(-1, 2)) != len(y):
        raise ValueError(f"krige: need as many observation sites, times and values (got "
                         f"{len(np.asarray(obs_sites).reshape(-1, 2))}, {len(ot)}, {len(y)}), at least one")
    k = model.covariance(obs_sites, ot, obs_sites, ot) + model.noise_sd ** 2 * np.eye(len(y))
    k += 1e-9 * model.variance * np.eye(len(y))
    ks = model.covariance(obs_sites, ot, target_sites, tt)
    fac = cho_factor(k)
    pred = model.mean_at(tt) + ks.T @ cho_solve(fac, y - model.mean_at(ot))
    var = model.variance - np.einsum("ij,ij->j", ks, cho_solve(fac, ks)) + model.noise_sd ** 2
    return pred, var
