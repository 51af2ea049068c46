"""Tracking estimators (STARK Appendix 7.6, Table 9, "Tracking"): causal, one estimate per
step, each using only the readings up to that step.

* :func:`ekf_track` -- SCAAT-style extended Kalman filter (Welch & Bishop 1997, as cited by
  STARK): constant-velocity state ``[x, y, vx, vy]``; each available reading is applied as its
  own scalar update ("single constraint at a time"), so steps with one or two readings still
  inform the filter.  Measurement models: range ``|p - s|``, bearing ``atan2`` (innovation
  wrapped to (-pi, pi]), or both.  Built on ``filterpy.kalman.ExtendedKalmanFilter``.
* :func:`proximity_track` -- intersect each step's detection zones with the previous feasible
  region grown by the largest plausible step, and report the centroid.
* :func:`toa_track` -- per-step nonlinear least squares over ``(x, y, t0)`` with the previous
  position as a weak prior ("history"), for steps where fewer than three sensors reported.

Failure modes: with dropout, the EKF may run several steps on one or two readings; a wrong
initial fix (two-range mirror ambiguity, poor GDOP) can then persist.  We initialise from the
first step's localisation fix and fall back to the domain centre with a wide covariance.
"""
from __future__ import annotations

import numpy as np

from .geometry import (DOMAIN, feasible_region, linearized_multilateration, proximity_mmse,
                       toa_fit, wrap_pi)


def _cv_matrices(dt: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Constant-velocity transition and white-noise-acceleration process noise."""
    F = np.eye(4)
    F[0, 2] = F[1, 3] = dt
    g = np.array([[dt ** 4 / 4, dt ** 3 / 2], [dt ** 3 / 2, dt ** 2]]) * q
    Q = np.zeros((4, 4))
    for i in (0, 1):
        Q[np.ix_([i, i + 2], [i, i + 2])] = g
    return F, Q


def _h_range(s):
    def hx(x):
        return np.array([np.hypot(x[0] - s[0], x[1] - s[1])])

    def jac(x):
        d = max(np.hypot(x[0] - s[0], x[1] - s[1]), 1e-6)
        return np.array([[(x[0] - s[0]) / d, (x[1] - s[1]) / d, 0.0, 0.0]])
    return hx, jac


def _h_bearing(s):
    def hx(x):
        return np.array([np.arctan2(x[1] - s[1], x[0] - s[0])])

    def jac(x):
        dx, dy = x[0] - s[0], x[1] - s[1]
        d2 = max(dx * dx + dy * dy, 1e-9)
        return np.array([[-dy / d2, dx / d2, 0.0, 0.0]])
    return hx, jac


def _angle_residual(a, b):
    return wrap_pi(np.asarray(a) - np.asarray(b))


def _scalar_updates(modality: str, sensors: np.ndarray, z: np.ndarray, range_sigma: float,
                    bearing_sigma_rad: float, range_abs: float | None):
    """The step's readings as SCAAT scalar updates ``(z, hx, jacobian, R, residual)``.
    Range variance: ``(range_sigma * r)^2 / 3`` (uniform relative noise) or ``range_abs^2 / 3``;
    bearing variance ``bearing_sigma_rad^2 / 3``."""
    ups = []
    for j in range(len(sensors)):
        zj = z[j]
        if modality in ("range", "range_bearing"):
            r = zj[0] if modality == "range_bearing" else zj
            if np.isfinite(r):
                var = range_abs ** 2 / 3.0 if range_abs is not None else (range_sigma * r) ** 2 / 3.0
                ups.append((np.array([r]), *_h_range(sensors[j])[::-1], np.array([[max(var, 1e-8)]]), np.subtract))
        if modality in ("bearing", "range_bearing"):
            b = zj[1] if modality == "range_bearing" else zj
            if np.isfinite(b):
                ups.append((np.array([np.radians(b)]), *_h_bearing(sensors[j])[::-1],
                            np.array([[bearing_sigma_rad ** 2 / 3.0]]), _angle_residual))
    return ups


def _quick_fix(modality: str, sensors: np.ndarray, z: np.ndarray) -> np.ndarray | None:
    """A closed-form point fix from one step's readings, or None when they do not fix a point:
    range >= 3 readings (linearised multilateration), bearing >= 2 (least-squares intersection
    of the bearing lines ``n_i . p = n_i . s_i``, ``n_i = (-sin b_i, cos b_i)``), range+bearing
    >= 1 (mean of ``s_i + r_i (cos b_i, sin b_i)``)."""
    if modality == "range":
        ok = np.isfinite(z)
        return linearized_multilateration(sensors[ok], z[ok]) if ok.sum() >= 3 else None
    if modality == "bearing":
        ok = np.isfinite(z)
        if ok.sum() < 2:
            return None
        b = np.radians(z[ok])
        n = np.column_stack([-np.sin(b), np.cos(b)])
        sol, _, rank, _ = np.linalg.lstsq(n, np.sum(n * sensors[ok], axis=1), rcond=None)
        return sol if rank == 2 else None
    ok = np.all(np.isfinite(z), axis=1)
    if not ok.any():
        return None
    b = np.radians(z[ok, 1])
    return np.mean(sensors[ok] + z[ok, :1] * np.column_stack([np.cos(b), np.sin(b)]), axis=0)


def ekf_track(modality: str, sensors: np.ndarray, times: np.ndarray, readings: np.ndarray,
              range_sigma: float = 0.01, bearing_sigma_rad: float = 2 * np.pi * 0.01,
              q: float = 8.0, domain=DOMAIN, range_abs: float | None = None,
              n_grid: int = 4, prune_nats: float = 20.0, respawn: float | None = 1.0) -> np.ndarray:
    """SCAAT-style EKF tracking for ``modality`` in {range, bearing, range_bearing}, run as a
    bank of hypotheses so a poor first fix cannot trap it.

    One EKF per starting point of an ``n_grid`` x ``n_grid`` grid over the domain; each applies
    every available reading as its own scalar update and accumulates the log-likelihood of its
    innovations (``-(y^2 / S + log 2 pi S) / 2``).  Hypotheses more than ``prune_nats`` below
    the best are dropped and near-duplicates merged; the estimate is the likelihood-weighted mean
    of the surviving hypotheses' positions (a Gaussian-sum filter).

    Args:
        sensors: (m, 2); times: (k,) time stamps; readings: (k, m) or (k, m, 2), NaN = dropped.
        range_sigma: relative range noise half-width (Table 7); ``range_abs`` replaces it by an
            absolute half-width (ranges derived from ToA with known emission times).
        bearing_sigma_rad: bearing noise half-width in radians.
        respawn: when a step's readings alone fix a point (:func:`_quick_fix`) farther than
            this (plane units) from every hypothesis, a new hypothesis starts there (None: off).
        q: process-noise spectral density (plane units^2 / s^3) of the acceleration.  8 is
            the best of {0.25, 1, 4, 8, 16} on 30 generated tasks per family (suite seed 7,
            issue 20): trimmed RMSE over the first 10 / all 50 steps, range 0.213 / 0.125
            (q = 4: 0.222 / 0.140), bearing 0.350 / 0.339 (0.345 / 0.379), range+bearing
            0.070 / 0.067 (0.072 / 0.072).
    Returns: (k, 2) position estimates, clipped to the domain.
    """
    from filterpy.kalman import ExtendedKalmanFilter   # 0.8 s of scipy.stats: only when tracking
    k = len(times)
    out = np.empty((k, 2))
    bank: list[list] = []  # [ekf, loglik]
    for t in range(k):
        ups = _scalar_updates(modality, sensors, readings[t], range_sigma, bearing_sigma_rad, range_abs)
        if not bank:
            c = np.linspace(domain[0], domain[1], 2 * n_grid + 1)[1::2]
            half = (domain[1] - domain[0]) / (2 * n_grid)
            for x0 in c:
                for y0 in c:
                    ekf = ExtendedKalmanFilter(dim_x=4, dim_z=1)
                    ekf.x = np.array([x0, y0, 0.0, 0.0])
                    ekf.P = np.diag([half ** 2, half ** 2, 4.0, 4.0])
                    bank.append([ekf, 0.0])
        else:
            dt = float(times[t] - times[t - 1]) or 1e-3
            F, Q = _cv_matrices(dt, q)
            for h in bank:
                h[0].F, h[0].Q = F, Q
                h[0].predict()
        for h in bank:
            ekf = h[0]
            for z, jac, hx, R, res in ups:
                ekf.update(z, jac, hx, R=R, residual=res)
                S = float(ekf.S[0, 0])
                h[1] += -0.5 * (float(ekf.y[0]) ** 2 / S + np.log(2 * np.pi * S))
            ekf.x[:2] = np.clip(ekf.x[:2], domain[0], domain[1])
        bank.sort(key=lambda h: -h[1])
        best = bank[0][1]
        fix = _quick_fix(modality, sensors, readings[t]) if respawn and t else None
        if fix is not None and np.all((fix >= domain[0] - 0.5) & (fix <= domain[1] + 0.5)) and \
                min(np.hypot(*(h[0].x[:2] - fix)) for h in bank) > respawn:
            # the step fixes a point no hypothesis is near: a pruned mode (mirror image,
            # poor first fix) comes back, weighted far below the best until readings favour it
            ekf = ExtendedKalmanFilter(dim_x=4, dim_z=1)
            ekf.x = np.array([*np.clip(fix, domain[0], domain[1]), 0.0, 0.0])
            ekf.P = np.diag([0.25, 0.25, 4.0, 4.0])
            bank.append([ekf, best - 0.5 * prune_nats])
        kept: list[list] = []
        for h in bank:
            if h[1] < best - prune_nats:
                break
            if all(np.hypot(*(h[0].x[:2] - g[0].x[:2])) > 0.05 for g in kept):
                kept.append(h)
        bank = kept
        w = np.exp(np.array([h[1] for h in bank]) - best)
        out[t] = w @ np.array([h[0].x[:2] for h in bank]) / w.sum()
    return out


def proximity_track(sensors: np.ndarray, readings: np.ndarray, radius: float,
                    max_step: float = 2.5, domain=DOMAIN) -> np.ndarray:
    """Proximity tracking by intersecting detection zones (STARK Table 9): at each step the
    feasible set is this step's detection region intersected with the previous feasible set
    grown by ``max_step`` (the largest plausible move per step); its centroid is the estimate.
    When that intersection is empty the current region alone is used.  Returns (k, 2)."""
    k = len(readings)
    out = np.empty((k, 2))
    prev = None
    for t in range(k):
        region = feasible_region(sensors, readings[t], radius, domain)
        if prev is not None and not region.is_empty:
            both = region.intersection(prev.buffer(max_step, quad_segs=8))
            if not both.is_empty and both.area > 1e-9:
                region = both
        if region.is_empty or region.area <= 1e-9:
            est = proximity_mmse(sensors, readings[t], radius, domain)
            if est is None:
                est = out[t - 1] if t else np.array([5.0, 5.0])
            prev = None
        else:
            c = region.centroid
            est = np.array([c.x, c.y])
            prev = region
        out[t] = est
    return out


def toa_track(sensors: np.ndarray, readings: np.ndarray, speed: float,
              emit_times: np.ndarray | None = None, prior_sigma: float = 2.0,
              toa_sigma: float = 0.01, domain=DOMAIN) -> tuple[np.ndarray, np.ndarray]:
    """Per-step ToA fit using history.

    With known emission times (``emit_times`` given) each reading is a range
    ``v (T - t_emit)`` and the step is solved by an EKF over ranges (absolute range noise
    ``v * toa_sigma``).  Otherwise each step fits ``(x, y, t0)`` by :func:`toa_fit`, with the
    previous position estimate as a prior of standard deviation ``prior_sigma`` km.

    Returns: positions (k, 2) and emission times (k,).
    """
    k = len(readings)
    if emit_times is not None:
        ranges = speed * (readings - np.asarray(emit_times)[:, None])
        pos = ekf_track("range", sensors, np.asarray(emit_times, float), ranges, q=1.0,
                        domain=domain, range_abs=speed * toa_sigma)
        return pos, np.asarray(emit_times, dtype=float)
    pos = np.empty((k, 2))
    t0s = np.empty(k)
    prev = None
    for t in range(k):
        n_ok = int(np.isfinite(readings[t]).sum())
        if prev is not None:
            prior = (prev, prior_sigma)
        elif n_ok < 3:  # no history yet: a vague prior centred on the domain
            prior = (np.full(2, 0.5 * (domain[0] + domain[1])), 10.0)
        else:
            prior = None
        fit = toa_fit(sensors, readings[t], speed, domain, prior=prior)
        if fit is None:  # no reading at all this step: hold position, extrapolate time
            pos[t] = prev if prev is not None else np.array([5.0, 5.0])
            t0s[t] = t0s[t - 1] + (t0s[t - 1] - t0s[t - 2]) if t >= 2 else (t0s[t - 1] if t else np.nan)
        else:
            pos[t], t0s[t] = fit
        prev = pos[t]
    return pos, t0s


def proximity_track_bayes(sensors: np.ndarray, readings: np.ndarray, radius: float,
                          step_sigma: float = 1.6, cells: int = 101, domain=DOMAIN) -> np.ndarray:
    """Grid Bayes filter (histogram filter) for proximity tracking.

    The belief over a ``cells`` x ``cells`` grid starts uniform; each step it is blurred by a
    Gaussian random-walk motion model of standard deviation ``step_sigma`` (plane units per
    step; scipy ``gaussian_filter``), multiplied by the indicator of positions consistent with
    the step's detections, and renormalised.  The estimate is the belief's mean (MMSE).  If the
    readings contradict the belief (all mass removed) the belief restarts from the readings alone.
    Returns (k, 2).
    """
    from scipy.ndimage import gaussian_filter
    g = np.linspace(domain[0], domain[1], cells)
    xx, yy = np.meshgrid(g, g)
    pts = np.column_stack([xx.ravel(), yy.ravel()])
    d = np.hypot(pts[:, None, 0] - sensors[None, :, 0], pts[:, None, 1] - sensors[None, :, 1])
    inside = d <= radius
    belief = np.full(len(pts), 1.0 / len(pts))
    sigma_cells = step_sigma / (g[1] - g[0])
    out = np.empty((len(readings), 2))
    for t, z in enumerate(readings):
        if t:
            belief = gaussian_filter(belief.reshape(cells, cells), sigma_cells, mode="constant").ravel()
        ok = np.isfinite(z)
        like = np.all(inside[:, ok] == (z[ok] >= 0.5), axis=1).astype(float)
        post = belief * like
        if post.sum() <= 0:
            post = like if like.sum() > 0 else belief
        belief = post / post.sum()
        out[t] = belief @ pts
    return out
