"""Particle filter for range, bearing and range+bearing tracking (issue 20): the default
trackers of ``stark.tracking.range``, ``stark.tracking.bearing`` and
``stark.tracking.range_bearing`` (the EKF bank stays as ``baseline:ekf``).

Model: the prior-motion particle filter of :mod:`stsim.baselines.particle_tracking`
(constant acceleration whose jerks are the generator's prior trajectories' own, step-0
posterior under the prior's law of the first position, adaptive tolerance, regularised resampling) with the readings' own model,
:class:`_SensorModel` (STARK Table 7's bounded uniform noise and the 4-decimal print rounding).
:func:`sensor_track` is that filter written for these readings: the state as (6, N) rows, each
step's bounds checked in one compiled pass (:func:`reading_violations`), and a lost track (a step whose readings
no particle meets without widening the bounds more than ``lost`` times) redrawn from that
step's readings alone.  :func:`track_sensor_task` runs it on a task with the settings of
:data:`SENSOR_SETTINGS`.

Cost (``perf/vs_stonesoup.py``): a few dozen numpy calls per step on (6, N) rows; the count
barely matters below a few thousand particles, the per-step overhead does.  The readings' check
compiled (session 35; a dozen array passes before) made the default range tracker 3-4 % cheaper
and range+bearing's 1-2 % (20 tasks of suite seed 7, whole tracker, alternating rounds; the
same answers on range and bearing, bit for bit); bearing's not measurably: its time is the
``atan2`` of each particle and reading, numpy's vectorised one or the C library's.

Limits (``perf/bayes_floor.py``, docs/stark-tier1.md): the constant-acceleration motion with
independent jerks is looser than the generator's prior (sums of smooth basis motions): where a
step's readings leave a direction free (one or two ranges) the posterior under the true prior
is much tighter than the filter's; 10x the particles barely helps (model, not sampling).
"""
from __future__ import annotations

import numba
import numpy as np

from .geometry import DOMAIN
from .first_position import first_position_law_of, start_posterior
from .prior_motion import (ROUNDING, adaptive_tolerance, grid_draw, in_domain, library_cache, on_step_grid,
                           propagate_rows, start_graph, start_grid)
from .resampling import bank_normals, systematic_resample


class _SensorModel:
    """Range, bearing or range+bearing readings under STARK Table 7's bounded uniform noise.

    ``z`` (n, m, c): per step and sensor the reading(s), NaN = dropped; ``c`` = 1 (range in
    plane units, or bearing in degrees counter-clockwise from +x) or 2 (range, bearing).
    Range: ``z = d (1 + U(-sigma, sigma))`` with ``d`` the true sensor distance, so the reading
    is consistent with a particle at distance ``d`` when ``|z - d| <= sigma d + ROUNDING`` and
    its density there is ``1 / (2 (sigma d + ROUNDING))``.  Bearing: ``z = atan2(dy, dx) +
    U(-h, h)`` (``h`` in radians), consistent when ``|wrap(z - atan2)| <= h + radians(ROUNDING)``,
    density constant.  ``ROUNDING`` is half a unit of the printed 4th decimal.  The violation of
    a particle is the largest ``|residual| / half - 1`` over the step's readings (clipped at 0),
    the same units as :func:`stsim.baselines.trajectory_posterior.violations`."""

    def __init__(self, kind: str, sensors: np.ndarray, z: np.ndarray, *, range_sigma: float = 0.01,
                 bearing_half: float = 2 * np.pi * 0.01):
        if kind not in ("range", "bearing", "range_bearing"):
            raise ValueError(f"_SensorModel handles range, bearing and range_bearing, not {kind!r}")
        z = np.asarray(z, float)
        self.kind, self.s, self.z = kind, np.asarray(sensors, float), z if z.ndim == 3 else z[:, :, None]
        self.range_sigma, self.bearing_half = float(range_sigma), float(bearing_half)
        self._rows_cache: dict = {}

    def residuals(self, k: int, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Step ``k`` at positions ``p`` (N, 2): ``(viol (N,), logdens (N,))``, ``viol`` the
        largest ``|residual| / half - 1`` over the step's readings clipped at 0 (0: every
        reading consistent), ``logdens`` the summed log density of the range readings under
        their bounds (``-log(2 half)``, 0 for bearings and for a step without readings)."""
        from .geometry import wrap_pi
        N = len(p)
        viol, ld = np.zeros(N), np.zeros(N)
        dx = p[:, None, 0] - self.s[None, :, 0]
        dy = p[:, None, 1] - self.s[None, :, 1]
        if self.kind in ("range", "range_bearing"):
            zr = self.z[k, :, 0]
            ok = np.isfinite(zr)
            if ok.any():
                d = np.hypot(dx[:, ok], dy[:, ok])
                half = self.range_sigma * d + ROUNDING
                viol = np.maximum(viol, (np.abs(zr[ok] - d) / half - 1.0).max(axis=1))
                ld -= np.log(2 * half).sum(axis=1)
        if self.kind in ("bearing", "range_bearing"):
            zb = self.z[k, :, -1]
            ok = np.isfinite(zb)
            if ok.any():
                ang = np.arctan2(dy[:, ok], dx[:, ok])
                half = self.bearing_half + np.radians(ROUNDING)
                viol = np.maximum(viol, (np.abs(wrap_pi(np.radians(zb[ok]) - ang)) / half - 1.0).max(axis=1))
        return viol, ld

    def step(self, k: int, p: np.ndarray, L, U):
        """As :meth:`stsim.baselines.particle_tracking._Model.step`: ``(viol (N,), factor(eps)
        -> (N,), interval(eps) -> (L, U))``; ``factor(eps)`` is the likelihood of the step's readings
        with every bound widened by the factor ``1 + eps`` (0 where ``viol > eps``), up to a
        constant."""
        viol, ld = self.residuals(k, p)
        dens = np.exp(ld - ld.max()) if len(ld) else ld
        return viol, (lambda eps: (viol <= eps) * dens), (lambda eps: (L, U))

    def _rows(self, k: int):
        """Step ``k``'s readings prepared for :meth:`fast`: ``((range sensors (2, S), range
        readings (S,)), (bearing sensors (2, B), reading unit vectors (2, B)))``, ``None`` for a
        kind without readings at the step; cached per step."""
        cache = self._rows_cache
        if k not in cache:
            ranges = bearings = None
            if self.kind in ("range", "range_bearing"):
                zr = self.z[k, :, 0]
                ok = np.isfinite(zr)
                if ok.any():
                    ranges = (np.ascontiguousarray(self.s[ok].T), np.ascontiguousarray(zr[ok]))
            if self.kind in ("bearing", "range_bearing"):
                zb = self.z[k, :, -1]
                ok = np.isfinite(zb)
                if ok.any():
                    a = np.radians(zb[ok])
                    bearings = (np.ascontiguousarray(self.s[ok].T), np.stack([np.cos(a), np.sin(a)]))
            cache[k] = (ranges, bearings)
        return cache[k]

    def fast(self, k: int, P: np.ndarray, relative: bool = True) -> tuple[np.ndarray | None, np.ndarray | None]:
        """:meth:`residuals` for positions given as rows ``P`` (2, N) (the filter's layout), in
        one compiled pass (:func:`reading_violations`): ``(viol (N,), dens (N,))``, ``dens``
        the range readings' density relative to its largest value over ``P``
        (``relative=False``: ``1 / prod(half)``, the density times ``2^S`` for ``S`` range
        readings, comparable across calls; None for no range readings); ``(None, None)`` for
        a step without readings.  The bearing residual is ``atan2(sin(z - a), cos(z - a))``
        from the reading's unit vector and the particle's direction (no wrap needed)."""
        ranges, bearings = self._rows(k)
        if ranges is None and bearings is None:
            return None, None
        rs, rz = ranges if ranges is not None else (_NO_SENSORS, _NO_READINGS)
        bs, bu = bearings if bearings is not None else (_NO_SENSORS, _NO_SENSORS)
        viol, dens = reading_violations(np.ascontiguousarray(P, float), rs, rz, self.range_sigma, ROUNDING, bs, bu,
                                        1.0 / (self.bearing_half + np.radians(ROUNDING)), relative)
        return viol, (dens if ranges is not None else None)


_NO_SENSORS, _NO_READINGS = np.zeros((2, 0)), np.zeros(0)


@numba.njit(cache=True)
def reading_violations(P, rs, rz, sigma, rounding, bs, bu, inv_half, relative):
    """Each of N positions' violation of one step's readings and its range readings' density,
    compiled (the filter's inner loop: as whole-array numpy code, a dozen array passes per
    step).

    Args: P (2, N) positions (plane units); rs (2, S) the range readings' sensors, rz (S,)
        their readings (plane units); sigma the relative range noise, rounding the readings'
        print rounding (``|z - d| <= sigma d + rounding``, STARK Table 7); bs (2, B) the
        bearing readings' sensors, bu (2, B) the readings' unit vectors ``(cos z, sin z)``;
        inv_half ``1 / (h + radians(rounding))`` for a bearing bound ``h`` (radians);
        relative: the density divided by its largest value over ``P`` (else ``1 / prod(half)``).
    Returns: ``(viol (N,), dens (N,))``: ``viol`` the largest ``|residual| / half - 1`` over
        the readings, clipped at 0; ``dens`` ``1 / prod(half)`` over the range readings (all
        ones without them).  The same floating-point operations in the same order as the numpy
        version it replaced, so range answers are the same bit for bit; a bearing's ``atan2``
        is the C library's, which differs from numpy's ``arctan2`` in the last bit for some
        arguments."""
    N, S, B = P.shape[1], rz.shape[0], bs.shape[1]
    viol = np.zeros(N)
    dens = np.ones(N)
    for i in range(N):
        x, y = P[0, i], P[1, i]
        v = -np.inf
        prod = 1.0
        for j in range(S):
            dx = x - rs[0, j]
            dy = y - rs[1, j]
            d = np.sqrt(dx * dx + dy * dy)
            half = d * sigma + rounding
            r = abs(d - rz[j]) / half
            if r > v:
                v = r
            prod = half if j == 0 else prod * half
        for j in range(B):
            dx = x - bs[0, j]
            dy = y - bs[1, j]
            r = abs(np.arctan2(bu[1, j] * dx - bu[0, j] * dy, bu[0, j] * dx + bu[1, j] * dy)) * inv_half
            if r > v:
                v = r
        v -= 1.0
        viol[i] = v if v > 0.0 else 0.0
        if S:
            dens[i] = prod
    if S:
        top = dens.min() if relative else 1.0
        for i in range(N):
            dens[i] = top / dens[i]
    return viol, dens


#: a step whose readings need the bounds widened this many times over (for ``min_ess``
#: particles to meet them) means the particles have lost the track (a turn the constant-
#: acceleration motion with prior jerks cannot follow): the particles are redrawn from that
#: step's readings (:func:`sensor_track`'s ``lost``; on 12 range tasks of suite seed 7 the
#: largest widening was 12.6 on tracks kept and 238 on the one lost)
LOST_TRACK = 20.0
#: per modality, :func:`sensor_track` settings (issue 20).  Trimmed RMSE over the first 10 /
#: all 50 steps, 30 tasks of suite seed 7, mean over filter seeds 0, 1, 2 (and STARK trim on
#: the 50 released tasks, ``stsim run stark-published``, filter seeds 0-2):
#: range jerks x 4, redrawn at 20x, 201 cells: 0.146 / 0.101 (released 0.250 / 0.254 / 0.261;
#: at 10x: 0.138 / 0.098, released 0.263-0.272; 121 cells: released 0.273-0.294; jerks x 3:
#: 0.172 / 0.101, x 5: 0.138 / 0.104; 1500 particles: 0.141 / 0.103).
#: bearing before brg3, jerks x 2.5, 121 cells: 0.314 / 0.309 (x 4: 0.332 / 0.308, x 3: 0.318 / 0.297, x 2:
#: 0.309 / 0.308; 201 cells: released 0.372 against 0.360).
#: bearing, the default since brg3 (chosen on 30 tasks of suite seed 11, filter seeds 0-2; better
#: than the settings above on both horizons of seeds 11 and 7 and on STARK's released tasks;
#: over 50 steps of seed 7 level with Stone Soup's tuned particle filter, not ahead):
#: acceleration decay 0.7, jerks x 4 with per-particle scales x/÷ 3, redrawn at 3x: seed 11 0.270 /
#: 0.276 against 0.288 / 0.315 before (redrawn at 3x alone: 0.279 / 0.300; with scales x/÷ 2:
#: 0.279 / 0.295; decay 0.7 without scales: 0.268 / 0.288; decay 0.5: 0.275 / 0.307; a Gaussian
#: likelihood of the bounds' variance instead of the bounds: 0.296 / 0.312; 3000 particles:
#: 0.268 / 0.275); seed 7: 0.292 / 0.281 against 0.314 / 0.309 before.
#: range+bearing redrawn at 3x, per-particle jerk scales x/÷ 4, 201 cells: 0.059 / 0.058
#: (released 0.061; at 10x without the mix: 0.073 / 0.062, never redrawn: 0.093 / 0.116).
SENSOR_SETTINGS: dict = {
    "range": {"jerk_scale": 4.0, "lost": LOST_TRACK, "cells": 201},
    "bearing": {"jerk_scale": 4.0, "decay": 0.7, "scale_mix": 3.0, "lost": 3.0, "cells": 121},
    "range_bearing": {"jerk_scale": 4.0, "lost": 3.0, "scale_mix": 4.0, "cells": 201},
}


def track_sensor_task(task, seed: int = 0, **kw) -> np.ndarray:
    """:func:`sensor_track` on a range, bearing or range+bearing tracking task
    (``task.inputs``: sensors (m, 2), readings, sensor_model with uniform noise; the prior's
    schedule from :func:`~stsim.baselines.prior_motion.task_schedule`, the readings placed on
    its step grid, unobserved steps predicted only); ``kw`` are :func:`sensor_track` settings
    (defaults :data:`SENSOR_SETTINGS` of the modality), ``smooth``: None, or the settings of
    :func:`stsim.baselines.trajectory_smoother.smooth_task` (the filter's answers replaced by
    the MAP smoother's under the prior's Gaussian approximation, before the refit), and ``refit``: None, or the settings
    of :func:`stsim.baselines.trajectory_refit.refit_task`, which replaces the filter's answers
    by the generator's parametric trajectory fitted to the readings so far where that fit holds.  Returns positions (k, 2), one per
    task step.

    Raises ``ValueError`` for another modality or Gaussian noise (bounded noise only)."""
    from .trajectory_posterior import task_readings
    m = task.inputs["modality"]
    if m not in SENSOR_SETTINGS:
        raise ValueError(f"{task.id}: track_sensor_task handles range, bearing and range_bearing, not {m!r}")
    r = task_readings(task)
    index, full, lib = on_step_grid(task, r.z)
    model = _SensorModel(m, r.sensors, full, range_sigma=r.range_sigma, bearing_half=r.bearing_half)
    kw = {**SENSOR_SETTINGS[m], **kw}
    refit = kw.pop("refit", None)
    smooth = kw.pop("smooth", None)
    path = sensor_track(model, lib, len(full), seed=seed, **kw)
    if smooth is not None or refit is not None:
        from dataclasses import replace

        from .trajectory_smoother import smooth_then_refit
        path = smooth_then_refit(task, replace(r, z=full), path, smooth, refit)[0]
    return in_domain(task, path[index])


def sensor_track(model: _SensorModel, lib, n_steps: int, *, n_particles: int = 2000,
                 min_ess: float = 20.0, jerk_scale: float = 4.0, scale_mix: float = 1.0,
                 jitter: float = 0.3, cells: int = 121, knn: int = 16, start_prior: float = 4.0,
                 lost: float | None = LOST_TRACK, decay: float = 1.0, seed: int = 0, domain=DOMAIN,
                 _eps_log: list | None = None) -> np.ndarray:
    """The prior-motion particle filter of :mod:`stsim.baselines.particle_tracking` (its
    :func:`~stsim.baselines.particle_tracking.particle_track`, same model and sampling) written
    for range / bearing readings: the state as (6, N) rows, each step's readings checked in one
    pass per kind (:meth:`_SensorModel.fast`), the regularisation noise sliced from a fixed
    bank (:func:`~stsim.baselines.resampling.bank_normals`), and a lost track redrawn from the
    readings.

    Args:
        model: the readings (:class:`_SensorModel`) on the trajectory's step grid.
        lib: prior trajectories (:func:`~stsim.baselines.prior_motion.motion_library`)
            of at least ``n_steps`` steps.
        n_particles: particles ``N``; min_ess: effective sample size kept by widening a step's
            bounds (adaptive tolerance, :func:`~stsim.baselines.prior_motion.adaptive_tolerance`).
        jerk_scale: the motion is constant acceleration per step (``a += j, v += a, p += v``,
            plane units per step^k) whose jerk ``j`` is a library trajectory's third
            difference at that step times ``jerk_scale``; with ``scale_mix`` > 1 each particle
            carries its own extra factor, log-uniform in ``[1 / scale_mix, scale_mix]``, kept
            through resampling (a particle that follows a fast turn keeps its large jerks).
        decay: the acceleration is multiplied by ``decay`` before each step's jerk is added
            (``a = decay a + j``: acceleration as a first-order Markov process, Singer 1970,
            IEEE Trans. AES-6(4), instead of a random walk when ``decay`` < 1; its spread stays
            bounded over long tracks); 1: the random walk.
        jitter: bandwidth of the regularisation after resampling (fraction of the weighted
            spread per state component; Liu & West 2001 shrinkage).
        cells: cells per axis of the law of the first position's grid (its densities smoothed by
            ``start_prior`` of them; 0: a uniform prior on the grid) and of the grid a redraw, or a
            step 0 no position meets, is drawn on; the step-0 posterior itself is
            :func:`~stsim.baselines.first_position.start_posterior` (101 x 101 cells, refined); the first velocity and acceleration are those of a library
            trajectory starting near the particle (one of the ``knn`` nearest).
        lost: when a step needs its bounds widened more than ``lost`` times, the particles have
            lost the track: they are redrawn as at step 0 from that step's readings alone (the
            grid posterior), with the prior's velocities near each position; ``None``: never.
        seed: the filter's random stream; domain: ``(lo, hi)`` of both axes.
        _eps_log: optional list receiving each step's widening.
    Returns: positions (n_steps, 2), the weighted particle mean after each step's update
        (the filtering posterior mean under the model)."""
    rng = np.random.default_rng(seed)
    lo, hi = float(domain[0]), float(domain[1])          # floats once: the compiled step's types
    N = n_particles
    g, grid = start_grid(lo, hi, cells)
    gridT = _grid_rows(lo, hi, cells)
    cell = g[1] - g[0]
    cache = library_cache(lib)
    law = first_position_law_of(lib, domain, cells, start_prior) if start_prior else None
    M = len(lib.pos)
    jerkT, vel0, acc0 = cache["jerk"], cache["vel"][0], cache["acc0"]
    n_jerk = jerkT.shape[0]

    def lik0(P):
        viol, dens = model.fast(0, P, relative=False)
        if viol is None:
            return np.ones(P.shape[1]), np.zeros(P.shape[1])
        return (viol <= 0) * (1.0 if dens is None else dens), viol

    def draw(k):
        """(6, N) particles from step ``k``'s readings alone (at step 0 under the prior's law
        of the first position, :func:`~stsim.baselines.first_position.start_posterior`; else,
        or when no position meets the readings, on the grid), their proposal weights (the
        likelihood at the cell or point drawn) and the widening used."""
        start = start_posterior(lik0, law, N, rng) if (k == 0 and law is not None) else None
        if start is not None:
            p, q, _ = start
            eps = 0.0
        else:
            viol, dens = model.fast(k, gridT)
            if viol is None:
                viol, dens = np.zeros(len(grid)), None
            p, q, eps = grid_draw(viol, lambda e: (viol <= e) * (1.0 if dens is None else dens),
                                  grid, cell, N, rng, lo, hi)
        _, near = cache["start_tree"].query(p, k=1)
        pick = start_graph(lib, knn)[near, rng.integers(0, knn, size=N)]
        X = np.empty((6, N))
        X[0:2] = p.T
        X[2:4] = vel0[:, pick]
        X[4:6] = acc0[:, pick]
        return X, q, eps

    X, q, _ = draw(0)
    scale = np.full(N, float(jerk_scale))
    if scale_mix > 1:
        scale *= np.exp(rng.uniform(-np.log(scale_mix), np.log(scale_mix), size=N))
    logw = np.zeros(N)
    uniform = True                                         # logw constant (start, resampled)
    out = np.empty((n_steps, 2))
    shrink = np.sqrt(1.0 - jitter ** 2)
    decay = float(decay)
    for k in range(n_steps):
        if k:
            propagate_rows(X, jerkT[min(k - 1, n_jerk - 1)], rng.integers(0, M, size=N), scale, decay, lo, hi)
        viol, dens = model.fast(k, X[0:2])
        eps = 0.0
        if viol is not None:
            eps = adaptive_tolerance(viol, logw, min_ess, uniform)
            if k and lost is not None and eps > lost:     # lost: redraw from this step's readings
                X, q, eps = draw(k)
                logw = np.zeros(N)
                viol, dens = model.fast(k, X[0:2])
                eps = max(eps, adaptive_tolerance(viol, logw, min_ess, True))
            w_step = viol <= eps
            if dens is not None:
                w_step = w_step * dens
            if q is not None:                              # drawn from the readings: divide out
                w_step = w_step / q
                q = None
            with np.errstate(divide="ignore"):
                logw += np.log(w_step)
            uniform = False
        if _eps_log is not None:
            _eps_log.append(eps)
        w = np.exp(logw - logw.max())
        w /= w.sum()
        out[k] = X[0:2] @ w
        if 1.0 / (w @ w) < 0.5 * N:
            if jitter > 0:                                 # the weighted mean and spread
                mu = X @ w
                sd = np.sqrt(np.maximum((X * X) @ w - mu * mu, 0.0))
            idx = systematic_resample(w, rng)
            X = X.take(idx, axis=1)
            if scale_mix > 1:
                scale = scale.take(idx)
            logw = np.zeros(N)
            uniform = True
            if jitter > 0:  # regularised PF: shrink to the mean, add kernel noise (Liu & West 2001)
                X *= shrink
                X += ((1 - shrink) * mu)[:, None]
                X += bank_normals(rng, 6, N) * (jitter * sd)[:, None]
                # positions pushed out of the domain come back at the next step's reflection
    return out


_ROWS: dict = {}


def _grid_rows(lo: float, hi: float, cells: int) -> np.ndarray:
    """The redraw grid's points as rows (2, cells^2) (x fastest, as :func:`~stsim.baselines.prior_motion.start_grid`); cached."""
    key = (float(lo), float(hi), int(cells))
    if key not in _ROWS:
        _ROWS[key] = np.ascontiguousarray(start_grid(lo, hi, cells)[1].T)
    return _ROWS[key]
