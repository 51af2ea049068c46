"""Smoothing over the steps seen so far under a Gaussian approximation of the generator's own
trajectory prior (issue 20, item 2: "smoothing over the steps seen so far").

The particle filters (:mod:`stsim.baselines.sensor_particle_tracking`,
:mod:`stsim.baselines.particle_tracking`) step a position forward with a one-step motion model;
the task asks for the current position given *all* readings so far, and the generator's
trajectories (STARK Appendix 7.3: 1-3 summed basis motions, min-max normalised per axis over all
steps, :func:`stsim.sim.motion.random_trajectory`) are smooth over the whole track.  This module
replaces the one-step model by the prior's second-order statistics over all steps:

* :func:`trajectory_moments`: the mean ``mean`` (2n,) and covariance ``cov`` (2n, 2n) of the
  positions ``(x_0, y_0, x_1, y_1, ...)`` (plane units, km for ToA) of ``size`` trajectories
  drawn from the prior (:func:`stsim.baselines.prior_motion.motion_library`), and the basis
  ``basis`` (2n, D) of its leading eigenvectors scaled by the square roots of their eigenvalues
  (principal components; Karhunen-Loeve expansion): a trajectory is ``mean + basis @ a`` with
  ``a ~ N(0, I_D)``.  The prior's covariance has about 20 eigenvalues above 1e-6 of the largest
  (it has about 20 parameters), so ``D`` is small whatever the number of steps; cached per prior.
* :func:`smooth_path`: at each step ``t`` the maximum a posteriori trajectory under that
  Gaussian prior and the readings of steps ``0..t`` (a batch nonlinear MAP smoother, i.e. a
  Gaussian-process smoother with the generator's empirical covariance, solved by Gauss-Newton
  from the previous step's fit and from the filter's path; Barfoot 2017, *State Estimation for
  Robotics*, section 4.3.1, batch MAP by Gauss-Newton; for a linear model it is the Kalman /
  Rauch-Tung-Striebel smoother's estimate, Rauch, Tung & Striebel 1965, AIAA J. 3(8)); the
  answer at step ``t`` is the smoothed position at ``t``.  The readings' bounded uniform noise
  (STARK Table 7, widened by half a unit of the printed 4th decimal) enters as a Gaussian of the
  same variance: each residual in units of its bound (as
  :class:`stsim.baselines.trajectory_refit.ReadingResiduals`) times ``weight = sqrt(3)``.
  The fit at ``t`` starts from the fit at ``t - 1`` (which already predicts step ``t``) and, on
  the first ``restart`` steps or when that fit leaves a reading more than ``accept`` bounds off,
  also from the filter's path (its modes: the filter handles the multimodality of the first
  steps), keeping the lower cost.

Failure modes (measured, docs/stark-tier1.md): the answer is the MAP under a Gaussian surrogate,
not the posterior mean; where the readings leave a broad, non-Gaussian posterior (bearings
only: the distance along each bearing line) it is worse than the filter's mean, so the bearing
tracker does not use it.  Proximity (binary detections) is not handled.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .geometry import wrap_pi
from .prior_motion import ROUNDING, motion_library

#: the residuals' weight: a reading uniform within its bound (residual in units of the bound)
#: has variance 1/3, so a Gaussian of the same variance has sd 1 / sqrt(3)
GAUSS_WEIGHT = float(np.sqrt(3.0))

#: per modality, :func:`smooth_path` settings of the trackers using it (issue 20; chosen on 20
#: range tasks of suite seed 11, trimmed RMSE first 10 / all 50 steps with the refit after it:
#: 0.074 / 0.040; from step 0: 0.072 / 0.041; 5 or 8 Gauss-Newton iterations, ``ftol`` 1e-5,
#: restarts on steps 1-4: within 0.001; ``accept`` 1: same errors at 2.4x the smoother's cost; LM only, no
#: Gauss-Newton: 0.071 / 0.040 at 2.2x the smoother's cost; docs/stark-tier1.md).  Range keeps
#: the filter's answer where the smoothed position's Laplace sd exceeds 0.2 units: 0.068 / 0.040
#: against 0.074 / 0.040 (0.15: 0.077 / 0.040, 0.3: 0.071 / 0.040; event, 20 tasks: 0.2 0.163 /
#: 0.132, 0.4 0.155 / 0.129 against 0.155 / 0.129 without).  Bearing is left out: measured
#: worse than the filter (module docstring).  Session 6 (the smoother about 2x cheaper: fits from
#: the filter's path by :func:`_gauss_newton`, 10 iterations, in place of scipy's
#: Levenberg-Marquardt with 10 evaluations, the same errors to 4 decimals on range, event and
#: x-y-t, seeds 11 and 13; the last iteration not evaluated when the model predicts a gain below
#: ``ftol``, same errors to 4 decimals on all five families; one warm iteration, ``warm`` 1:
#: worse, range seed 11 0.0708 -> 0.0752 over the first 10 steps): ``refit_from`` (the steps
#: before the refit, :data:`SMOOTH_BEFORE_REFIT` where not set) chosen per family on seeds 11 and
#: 13 among 6, 10, 14, 20 (range+bearing also 0, 1, 2, 4, and seed 17): range 6, 0.0708 / 0.0383
#: -> 0.0701 / 0.0382 (seed 11), 0.0796 / 0.0331 -> 0.0796 / 0.0330 (seed 13; 10: 0.0386 over
#: all steps on seed 11, 20: as 14 within 0.0001); x-y-t 20, 0.2600 / 0.1437 -> 0.2600 / 0.1414
#: and 0.2474 / 0.10309 -> 0.2474 / 0.10306; event and temporal keep 14 (event at 20: seed 11
#: better over all steps, 0.1454 -> 0.1432, seed 13 worse, 0.0958 -> 0.0962, at 6 and 10
#: worse; temporal at 6 and 10 worse over all steps, at 20 the same).  Range+bearing (joined
#: the default, stark_tier1.SMOOTHED_DEFAULTS) at 4 with restarts on step 0 only and ``ftol``
#: 0.01 (each of the two alone no worse on seeds 11, 13 and 17; the three together: the
#: default with the smoother 5.3-5.5x cheaper than Stone Soup's particle filter against
#: 5.2-5.3x, two runs each of ``perf/smoothed_cost.py``): 0.03990 / 0.03756 -> 0.03917 /
#: 0.03747 (seed 11), 0.03892 / 0.02957 -> 0.03890 / 0.02939 (seed 13), 0.03877 / 0.02093 ->
#: 0.03873 / 0.02095 (seed 17); at 0 or 1 (the smoother after the refit alone) worse over all
#: steps on seeds 13 and 17 (0.0307, 0.0213).  Session 7, with the refit's search at step 1 and on
#: loss: 4 kept (1: 0.0386 / 0.0354, 0.0373 / 0.0304, 0.0370 / 0.0205 on seeds 11 / 13 / 17,
#: worse on 13; 2: 0.0399 / 0.0359, 0.0363 / 0.0302, 0.0382 / 0.0206, within 0.0006 of 4 and
#: 5.0-5.7x against 6.3x in the same runs; 8: as 4).
SMOOTHER_SETTINGS: dict = {
    "range": {"from_step": 1, "max_sd": 0.2, "refit_from": 6},
    "range_bearing": {"from_step": 1, "restart": 1, "ftol": 0.01, "refit_from": 4},
    # with the refit: steps 0-13 and the later steps the refit leaves (``late``).  Until session
    # 28 steps 0-13 only: the late pass had left event's default 5.2-5.9x cheaper than Stone
    # Soup's particle filter (session 5, stark_tier1.SMOOTHED_DEFAULTS), when the refit left many
    # steps.  Session 28: suite seeds 11 / 13 / 17 / 19 / 23 / 29 / 31 / 37 (20 tasks, filter
    # draws 0 and 1), all steps, geometric mean 0.05857 -> 0.05604 (better on each seed), the
    # first 10 steps unchanged; seed 5's 50-step limit set 1.38x -> 1.32x (draws 0 and 1); +1 %
    # tracking time (in-process medians of 3 alternating rounds, 20 tasks of seed 7)
    "toa": {"from_step": 1},
    # emission times unknown (the shot schedule: first emission time fitted), x-y-t (the
    # position and time asked): x-y-t, seed 11, 20 tasks, with the
    # least-squares refit from step 8: 0.265 / 0.143 (0.317 / 0.121 without ``max_sd``); no late
    # pass (``late``, :func:`smooth_then_refit`): better over all steps (x-y-t 0.120 against
    # 0.144 on seed 11) but x-y-t's default then measured 4.8-5.4x cheaper than Stone Soup's
    # particle filter in three runs of ``perf/pf_cost.py`` (steps 0-13 only: 6.3x)
    # Session 28: with the later steps the refit leaves smoothed too (``late``; the refit now
    # leaves few): suite seeds 11 / 13 / 17 / 19 / 23 / 29 / 31 / 37 (20 tasks, draws 0 and 1),
    # all steps, geometric mean 0.0663 -> 0.0629 (measured first with the refit's by_readings at
    # the best of 200 draws per structure: 0.0659 -> 0.0624, better on each seed), the first 10
    # steps unchanged; seed 5's 50-step limit set the same (0.95x, draws 0 and 1); +1 % tracking
    # time (in-process medians of 4 alternating rounds, 20 tasks of seed 7)
    "toa_schedule": {"from_step": 1, "max_sd": 0.2, "refit_from": 20},
    # the same, temporal (the emission time asked): with the later steps the refit leaves
    # smoothed too (steps 0-13 only: worse over all steps on seeds 11 and 13, 0.0022 and 0.0026
    # against 0.0014 and 0.0019; stark_tier1.SMOOTHED_DEFAULTS)
    "toa_time": {"from_step": 1, "max_sd": 0.2},
}


#: :func:`smooth_then_refit`: with the refit after it, the smoother answers steps
#: ``0..SMOOTH_BEFORE_REFIT - 1`` (the refit's first searches, range at steps 3 and 8, ToA at 0,
#: and its fallback where it holds no mode use that path) unless :data:`SMOOTHER_SETTINGS` sets
#: ``refit_from``; chosen with the first least-squares refit (searches at steps 8 and 13) and
#: re-tuned per family in session 6 with the current refit (the comment of
#: :data:`SMOOTHER_SETTINGS`): event and temporal keep it
SMOOTH_BEFORE_REFIT = 14


def settings_for(task) -> dict | None:
    """The :data:`SMOOTHER_SETTINGS` entry of a tracking task: by modality, ToA split by whether
    the emission times are given (``"toa"``) or not, then by whether the task asks for the
    emission time (``"toa_time"``, temporal) or not (``"toa_schedule"``, x-y-t); None for a
    modality without one (bearing, proximity)."""
    m = task.inputs.get("modality")
    if m == "toa":
        m = ("toa" if task.inputs.get("times") is not None
             else "toa_time" if task.answer_format == "time" else "toa_schedule")
    return SMOOTHER_SETTINGS.get(m)


@dataclass(frozen=True)
class TrajectoryMoments:
    """First and second moments of the positions of a trajectory prior's draws.

    ``mean`` (2n,) and ``cov`` (2n, 2n): positions laid out ``(x_0, y_0, x_1, y_1, ...)``
    (plane units; units^2); ``basis`` (2n, D): eigenvectors of ``cov`` whose eigenvalues exceed
    ``tol`` times the largest, each scaled by the square root of its eigenvalue (``basis @
    basis.T`` is ``cov`` without its negligible directions); ``size`` draws."""
    mean: np.ndarray
    cov: np.ndarray
    basis: np.ndarray
    size: int

    @property
    def n_steps(self) -> int:
        return len(self.mean) // 2


@lru_cache(maxsize=8)
def trajectory_moments(n_steps: int, duration: float, max_components: int = 3,
                       motion_ranges: str = "stark_release", size: int = 20000, seed: int = 1,
                       tol: float = 1e-6) -> TrajectoryMoments:
    """:class:`TrajectoryMoments` of ``size`` trajectories of the generator's prior (STARK
    Appendix 7.3; drawn by :func:`~stsim.baselines.prior_motion.motion_library` with the same
    arguments, not kept in its cache), ``n_steps`` positions over ``duration`` seconds; the
    sample mean and covariance (``np.cov``, ``ddof=1``); cached per argument set.

    Raises ``ValueError`` for an unknown ``motion_ranges`` or ``n_steps < 4`` (from the library)
    and for ``size < 2``."""
    if size < 2:
        raise ValueError(f"trajectory_moments needs at least 2 draws, got size={size}")
    from threadpoolctl import threadpool_limits
    lib = motion_library.__wrapped__(n_steps, duration, max_components, motion_ranges, size=size, seed=seed)
    X = lib.pos.reshape(len(lib.pos), -1)
    # one BLAS thread: multithreaded LAPACK gives eigenvectors differing in the last bits with
    # the thread count (a --cluster worker runs one thread), and the answers must not
    with threadpool_limits(limits=1, user_api="blas"):
        mean = X.mean(axis=0)
        cov = np.cov(X, rowvar=False)
        lam, U = np.linalg.eigh(cov)
    keep = lam > tol * lam.max()
    return TrajectoryMoments(mean, cov, U[:, keep] * np.sqrt(lam[keep]), size)


class _Readings:
    """The readings of :class:`~stsim.baselines.trajectory_posterior.Readings` ``r`` (on the
    trajectory's step grid) as flat arrays per kind, with residuals in units of each reading's
    bound and their derivatives (module docstring).  ToA: ``t_rel`` (n,) the shots' times
    relative to the first (emission ``t0 + t_rel[k]``) or the known emission times (``t0`` 0)."""

    def __init__(self, r, t_rel: np.ndarray | None = None):
        z = r.z if r.z.ndim == 3 else r.z[:, :, None]
        self.r, self.parts = r, []
        kinds = {"range": [("range", 0)], "bearing": [("bearing", z.shape[2] - 1)],
                 "range_bearing": [("range", 0), ("bearing", z.shape[2] - 1)], "toa": [("toa", 0)]}
        if r.modality not in kinds:
            raise ValueError(f"the smoother handles range, bearing, range_bearing and toa readings, not {r.modality!r}")
        for kind, c in kinds[r.modality]:
            k, s = np.nonzero(np.isfinite(z[:, :, c]))
            val = z[k, s, c]
            if kind == "bearing":
                val = np.radians(val)
            if kind == "toa":
                val = val - np.asarray(t_rel, float)[k]
            self.parts.append((kind, k, s, val))
        #: (n,) number of readings of steps 0..t
        self.count = np.searchsorted(np.sort(np.concatenate([p[1] for p in self.parts])), np.arange(len(z)),
                                     side="right")
        if (len(self.parts) == 2 and np.array_equal(self.parts[0][1], self.parts[1][1])
                and np.array_equal(self.parts[0][2], self.parts[1][2])):
            # range and bearing from the same sensors at the same steps: one part, the
            # distances computed once (residuals: each reading's range, then its bearing)
            (_, k, s, vr), (_, _, _, vb) = self.parts
            self.parts = [("range_bearing", k, s, np.stack([vr, vb], axis=1))]
        self.parts = [(kind, k, r.sensors[s], val) for kind, k, s, val in self.parts]

    def upto(self, t: int) -> list:
        """The parts cut to the readings of steps ``0..t``."""
        return [(kind, k[k <= t], s[k <= t], v[k <= t]) for kind, k, s, v in self.parts]

    def evaluate(self, parts: list, P: np.ndarray, t0: float = 0.0):
        """Residuals (R,) in bound units of positions ``P`` (>= t+1, 2) (and first emission
        time ``t0``, s), their derivatives ``jx, jy`` (R,) by the reading's own step's position
        and ``jt`` (R,) by ``t0``, and each reading's step ``k`` (R,)."""
        out, JX, JY, JT, KK = [], [], [], [], []
        for kind, k, s, val in parts:
            res, jx, jy, jt = _terms(self.r, kind, P[k, 0] - s[:, 0], P[k, 1] - s[:, 1], val, t0)
            out.append(res)
            JX.append(jx)
            JY.append(jy)
            JT.append(np.zeros(len(res)) if jt is None else jt)
            KK.append(np.repeat(k, 2) if kind == "range_bearing" else k)
        return (np.concatenate(out), np.concatenate(JX), np.concatenate(JY), np.concatenate(JT),
                np.concatenate(KK))


def _terms(r, kind: str, dx: np.ndarray, dy: np.ndarray, val: np.ndarray, t0: float):
    """One part's residuals (R,) in bound units (:class:`_Readings`) from the offsets ``dx, dy``
    (c,) of the target from each reading's sensor (plane units), and their derivatives ``jx,
    jy`` (R,) by the target's position and ``jt`` (R,) by ``t0`` (None but for ToA); ``R = c``
    but for ``"range_bearing"`` (``val`` (c, 2): ``R = 2c``, each reading's range, then its
    bearing)."""
    d = _distance(dx, dy)
    res, aux = _residuals(r, kind, dx, dy, d, val, t0)
    jx, jy, jt = _derivatives(r, kind, dx, dy, d, aux)
    return res, jx.ravel(), jy.ravel(), jt


def _distance(dx: np.ndarray, dy: np.ndarray) -> np.ndarray:
    """The distances (c,) of offsets ``dx, dy`` (c,), at least 1e-12 (no division by 0)."""
    return np.maximum(np.hypot(dx, dy), 1e-12)


def _residuals(r, kind: str, dx: np.ndarray, dy: np.ndarray, d: np.ndarray, val: np.ndarray, t0: float):
    """:func:`_terms`' residuals (R,), given the distances ``d`` (c,) too, and what
    :func:`_derivatives` reuses (range: the bound and the error)."""
    if kind == "toa":
        return (val - t0 - d / r.speed) / (r.toa_half + ROUNDING), None
    if kind == "bearing":
        return wrap_pi(val - np.arctan2(dy, dx)) / (r.bearing_half + np.radians(ROUNDING)), None
    b = r.range_sigma * d + ROUNDING
    if kind == "range":
        e = val - d
        return e / b, (b, e)
    e = val[:, 0] - d
    out = np.empty((len(d), 2))                         # each reading's range, then its bearing
    np.divide(e, b, out=out[:, 0])
    np.divide(wrap_pi(val[:, 1] - np.arctan2(dy, dx)), r.bearing_half + np.radians(ROUNDING), out=out[:, 1])
    return out.ravel(), (b, e)


def _derivatives(r, kind: str, dx: np.ndarray, dy: np.ndarray, d: np.ndarray, aux):
    """:func:`_terms`' derivatives ``(jx, jy, jt)`` from the distances ``d`` (c,) and
    :func:`_residuals`' ``aux``: by the distance ``g`` times the unit vector ``(dx, dy) / d``
    (range, ToA), the bearing's ``(dy, -dx) / d^2``; ``jx, jy`` (c, 2) for ``"range_bearing"``
    (range, bearing per reading), else (c,)."""
    if kind == "toa":
        g = -1.0 / (r.speed * (r.toa_half + ROUNDING)) / d
        return g * dx, g * dy, np.full(len(dx), -1.0 / (r.toa_half + ROUNDING))
    if kind == "bearing":
        h = (1.0 / (r.bearing_half + np.radians(ROUNDING))) / (d * d)
        return dy * h, dx * -h, None
    b, e = aux
    g = (-b - e * r.range_sigma) / (b * b * d)          # d res / d d, over d
    if kind == "range":
        return g * dx, g * dy, None
    h = (1.0 / (r.bearing_half + np.radians(ROUNDING))) / (d * d)
    jx, jy = np.empty((len(d), 2)), np.empty((len(d), 2))
    np.multiply(g, dx, out=jx[:, 0])
    np.multiply(h, dy, out=jx[:, 1])
    np.multiply(g, dy, out=jy[:, 0])
    np.multiply(-h, dx, out=jy[:, 1])
    return jx, jy, None


class _Fit:
    """The weighted residuals (R,) of the readings of steps ``0..t`` (:class:`_Readings` ``R``)
    as a function of the prior's reduced coordinates ``x`` (Dx,) (``a``, and ``t0`` last when
    ``free_t0``): positions ``mean + basis @ a`` (module docstring), and their Jacobian (R, Dx).
    The basis rows of each reading's step are gathered once per smoother run (``rows``: per part
    of ``R.parts``, ``(Bx[k], By[k], count)``, range+bearing's rows twice, ``count`` (n,) the
    readings of steps 0..t); the
    distances and the Jacobian's factors are computed once per point, the Jacobian only when
    asked for (a rejected trial step needs none)."""

    def __init__(self, R: "_Readings", rows: list, t: int, moments: TrajectoryMoments, weight: float,
                 free_t0: bool):
        self.r, self.weight, self.free_t0 = R.r, weight, free_t0
        self.mean, self.basis = moments.mean[:2 * t + 2], moments.basis[:2 * t + 2]
        self.bx, self.by = self.basis[0::2], self.basis[1::2]
        self.D = self.basis.shape[1]
        self.parts = []
        for (kind, k, s, val), (bxk, byk, cut) in zip(R.parts, rows):
            c = cut[t]                                        # each part is sorted by step
            r2 = 2 * c if kind == "range_bearing" else c      # residual rows (range_bearing: 2 each)
            self.parts.append((kind, k[:c], s[:c], val[:c], bxk[:r2], byk[:r2]))
        self._key = None

    def res(self, x: np.ndarray) -> np.ndarray:
        """Weighted residuals (R,) at ``x`` (Dx,)."""
        key = x.tobytes()
        if key != self._key:
            P = (self.mean + self.basis @ x[:self.D]).reshape(-1, 2)
            t0 = x[self.D] if self.free_t0 else 0.0
            self._at, out = [], []
            for kind, k, s, val, _, _ in self.parts:
                o = P[k] - s
                dx, dy = o[:, 0], o[:, 1]
                d = _distance(dx, dy)
                res, aux = _residuals(self.r, kind, dx, dy, d, val, t0)
                self._at.append((dx, dy, d, aux))
                out.append(res)
            self._f = self.weight * (out[0] if len(out) == 1 else np.concatenate(out))
            self._key, self._J = key, None
        return self._f

    def jac(self, x: np.ndarray) -> np.ndarray:
        """The Jacobian (R, Dx) of :meth:`res` at ``x``."""
        self.res(x)
        if self._J is None:
            w = self.weight
            Js = []
            for (kind, _, _, _, bxk, byk), (dx, dy, d, aux) in zip(self.parts, self._at):
                jx, jy, jt = _derivatives(self.r, kind, dx, dy, d, aux)
                J = (w * jx.ravel())[:, None] * bxk + (w * jy.ravel())[:, None] * byk
                if self.free_t0:
                    J = np.hstack([J, w * jt[:, None]])
                Js.append(J)
            self._J = Js[0] if len(Js) == 1 else np.vstack(Js)
        return self._J


def smooth_path(r, path: np.ndarray, moments: TrajectoryMoments, *, t_rel: np.ndarray | None = None,
                emit: np.ndarray | None = None, t_start: np.ndarray | None = None,
                weight: float = GAUSS_WEIGHT, from_step: int = 1, iters: int = 10, warm: int = 3,
                ftol: float = 1e-3, restart: int = 3, accept: float = 2.0,
                path_sd: float = 0.1, max_sd: float | None = None,
                steps: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """A filter's answers ``path`` (n, 2) (plane units; step ``k``'s from the readings of
    steps ``0..k``) replaced from step ``from_step`` on by the MAP smoother's (module
    docstring).

    Args:
        r: :class:`~stsim.baselines.trajectory_posterior.Readings` on the trajectory's step
            grid (``r.z`` (n, m, c), NaN = no reading); range, bearing, range+bearing or ToA.
        moments: the prior's :class:`TrajectoryMoments` over at least ``n`` steps (the
            marginal of steps ``0..t`` of a Gaussian is its leading rows).
        t_rel (n,): ToA with the shot schedule: the shots' times relative to the first (s); the
            first emission time ``t0`` is then a parameter of the fit (flat prior).
        emit (n,): ToA with known emission times (s) instead.
        t_start (n,): ToA with ``t_rel``: the filter's first emission time per step (s; its
            start for ``t0``), or None (then the least-squares value given the start path).
        weight: residuals (bound units) are multiplied by it (:data:`GAUSS_WEIGHT`).
        from_step: steps before it keep the filter's answer (step 0: the filter's grid
            posterior under the prior's exact law of the first position).
        iters: Gauss-Newton iterations (:func:`_gauss_newton`) of a fit from the filter's
            path; warm: of a fit from the previous step's; ftol: both stop when an iteration
            gains (or the linearised model predicts) less than this fraction of the cost.
        restart, accept: also start from the filter's path on steps ``< restart`` and when the
            warm start leaves a reading more than ``accept`` bounds off.
        path_sd: the filter's path enters a start as observations of sd ``path_sd`` (plane
            units) of the prior's reduced coordinates (a ridge projection).
        max_sd: a step whose smoothed position has a Laplace standard deviation (the root of
            the trace of its 2 x 2 block of ``(J^T J)^-1`` at the fit, plane units) above
            ``max_sd`` keeps the filter's answer (the readings leave it loose, e.g. one range:
            the Gaussian prior then pulls it toward the prior's mean, while every trajectory
            of the generator touches the domain's edges); None: never.
        steps (n,) bool: the steps to answer (None: all); the others keep the filter's answer
            and are not fitted (the next answered step starts from the last fit).
    Returns: ``(pos (n, 2), t0 (n,) or None)``: the answers, and for ToA with ``t_rel`` each
        step's first emission time (s) where the smoother answered, NaN where the filter's
        answer stays.
    Raises ``ValueError`` for proximity readings, ``moments`` over fewer than ``n`` steps, or
    ToA readings with neither ``t_rel`` nor ``emit``."""
    path = np.asarray(path, float)
    n = len(path)
    if moments.n_steps < n:
        raise ValueError(f"the prior's moments cover {moments.n_steps} steps, the path has {n}")
    toa = r.modality == "toa"
    free_t0 = toa and emit is None
    if toa and emit is None and t_rel is None:
        raise ValueError("ToA readings need t_rel (the shot schedule) or emit (known emission times)")
    R = _Readings(r, emit if (toa and emit is not None) else t_rel if toa else None)
    M = moments.mean.reshape(-1, 2)
    Bx, By = moments.basis[0::2], moments.basis[1::2]           # (n_prior, D)
    D = Bx.shape[1]
    out = path.copy()
    t0_out = None
    if free_t0:
        t0_out = np.full(n, np.nan)
    Dx = D + 1 if free_t0 else D                                 # unknowns: a (and t0)
    pd = np.ones(Dx)                                             # the prior's rows: a, not t0
    if free_t0:
        pd[D] = 0.0
    P = np.diag(pd)
    eye = np.eye(D)
    a = None
    t0 = 0.0
    H = None
    fitted = -1                                                  # readings count of the last fit
    want = np.ones(n, bool) if steps is None else np.asarray(steps, bool)
    # per part: each residual's step's basis rows (range+bearing: each twice), and the number
    # of readings of steps 0..t
    rows = [(np.repeat(Bx[k], 2, 0), np.repeat(By[k], 2, 0)) if kind == "range_bearing" else (Bx[k], By[k])
            for kind, k, _, _ in R.parts]
    rows = [(*b, np.searchsorted(p[1], np.arange(n), side="right")) for b, p in zip(rows, R.parts)]
    for t in range(n):
        if R.count[t] == 0 or not want[t]:
            continue
        if R.count[t] == fitted:                                 # no new reading: same fit, and
            pass                                                 # its prediction is the MAP at t
        else:
            fitted = R.count[t]
            fit = _Fit(R, rows, t, moments, weight, free_t0)
            bx, by = fit.bx, fit.by
            cold = a is None or t < restart
            best = None
            if a is not None:                                    # warm: from the previous fit
                x = np.append(a, t0) if free_t0 else a
                best = _gauss_newton(fit, x, pd, P, warm, ftol)
                cold = cold or np.abs(best[2]).max() > accept * weight
            if cold:                                             # from the filter's path
                m = M[:t + 1]
                bt = np.vstack([bx, by])
                y = np.concatenate([path[:t + 1, 0] - m[:, 0], path[:t + 1, 1] - m[:, 1]])
                s2 = path_sd * path_sd
                x0 = np.linalg.solve(bt.T @ bt / s2 + eye, bt.T @ y / s2)
                if free_t0:
                    if t_start is not None and np.isfinite(t_start[t]):
                        tt = float(t_start[t])
                    else:                                        # least squares given the path
                        res = R.evaluate(R.upto(t), m + np.stack([bx @ x0, by @ x0], axis=1), 0.0)[0]
                        tt = float(res.mean() * (r.toa_half + ROUNDING))
                    x0 = np.append(x0, tt)
                sol = _gauss_newton(fit, x0, pd, P, iters, ftol)
                if best is None or sol[1] < best[1]:
                    best = sol
            a, t0 = best[0][:D], (best[0][D] if free_t0 else 0.0)
            H = None
            if max_sd is not None:                               # Gauss-Newton Hessian at the fit
                J = fit.jac(best[0])
                H = J.T @ J + P
        if t < from_step:
            continue
        if H is not None:                                        # the Laplace sd of the position
            Bt = np.zeros((2, Dx))
            Bt[0, :D], Bt[1, :D] = Bx[t], By[t]
            if np.sqrt(np.trace(Bt @ np.linalg.solve(H, Bt.T))) > max_sd:
                continue
        out[t] = M[t] + np.array([Bx[t] @ a, By[t] @ a])
        if free_t0:
            t0_out[t] = t0
    return out, t0_out


def _gauss_newton(fit: _Fit, x: np.ndarray, pd: np.ndarray, P: np.ndarray, iters: int, ftol: float
                  ) -> tuple[np.ndarray, float, np.ndarray]:
    """Gauss-Newton on ``0.5 (|pd * x|^2 + |f(x)|^2)`` from ``x`` (Dx,) with step halving (at
    most 4 halvings; Nocedal & Wright 2006, Numerical Optimization, sections 10.3 and 3.1):
    ``fit.res(x)`` gives the residuals ``f`` (R,) and ``fit.jac(x)`` their Jacobian (R, Dx)
    (:class:`_Fit`); ``pd`` (Dx,) is 1 on the prior's standard-normal coordinates and 0 on flat
    ones, ``P`` (Dx, Dx) ``diag(pd)``.  At most ``iters`` iterations, stopping when an accepted
    step gains less than ``ftol`` of the cost, none is found, or the linearised model predicts a
    gain below ``ftol`` of the cost (that last step is then taken without evaluating the
    residuals there: ``f + J d`` and the model's cost stand for them; Nocedal & Wright, section
    10.3, the model's predicted reduction).  The normal equations ``(J^T J + diag(pd)) d = -(J^T
    f + pd x)`` are solved by LAPACK's Cholesky ``dposv`` (:func:`scipy.linalg.lapack.dposv`; a
    third of :func:`numpy.linalg.solve`'s per-call cost on these 21 x 21 systems,
    :func:`scipy.linalg.cho_solve`'s wrapper 15x as much).  Returns ``(x, cost, f)``.

    Used for every fit, from the previous step's fit and from the filter's path: in place of
    :func:`scipy.optimize.least_squares` (Levenberg-Marquardt) from the filter's path, the same
    errors at a fraction of its per-call overhead (docs/stark-tier1.md)."""
    from scipy.linalg.lapack import dposv

    def cost_of(x_, f_):
        return 0.5 * (float((pd * x_) @ x_) + float(f_ @ f_))

    f = fit.res(x)
    cost = cost_of(x, f)
    for _ in range(iters):
        J = fit.jac(x)
        g = J.T @ f + pd * x
        sol, info = dposv(J.T @ J + P, g)[1:]
        if info != 0:                                        # not positive definite
            break
        step = -sol
        pred = 0.5 * float(g @ sol)                          # the linearised model's gain
        if pred < ftol * cost:                               # converged: the step, not evaluated
            return x + step, cost - pred, f + J @ step
        for _ in range(5):
            xn = x + step
            fn = fit.res(xn)
            cn = cost_of(xn, fn)
            if cn < cost:
                break
            step *= 0.5
        else:
            break
        gain = (cost - cn) / max(cost, 1e-300)
        x, f, cost = xn, fn, cn
        if gain < ftol:
            break
    return x, cost, f


def smooth_task(task, readings, path: np.ndarray, *, t_rel: np.ndarray | None = None,
                emit: np.ndarray | None = None, t_start: np.ndarray | None = None,
                **kw) -> tuple[np.ndarray, np.ndarray | None]:
    """:func:`smooth_path` on a tracking task: ``readings`` and a filter's answers ``path``
    (n, 2) on the trajectory's step grid (:func:`~stsim.baselines.prior_motion.on_step_grid`),
    the moments of the task's prior (:func:`~stsim.baselines.prior_motion.task_schedule`, over
    ``max(n_steps, n)`` steps); ``t_rel`` / ``emit`` / ``t_start`` for ToA and ``kw`` as
    :func:`smooth_path`.  Returns its ``(pos (n, 2), t0 (n,) or None)``; raises its
    ``ValueError``s."""
    from .prior_motion import step_grid, task_schedule
    n_steps, duration, kmax, table = task_schedule(task)
    moments = trajectory_moments(*step_grid(n_steps, duration, len(path)), kmax, table)
    return smooth_path(readings, path, moments, t_rel=t_rel, emit=emit, t_start=t_start, **kw)


def smooth_then_refit(task, readings, path: np.ndarray, smooth: dict | None, refit: dict | None, *,
                      t_rel: np.ndarray | None = None, emit: np.ndarray | None = None,
                      t_start: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """A filter's answers ``path`` (n, 2) (on the step grid) through the smoother
    (:func:`smooth_task`, settings ``smooth``, None: skipped) and then the parametric refit
    (:func:`stsim.baselines.trajectory_refit.refit_task`, settings ``refit``, None: skipped).

    With both, the smoother answers the steps before ``smooth["refit_from"]`` (default
    :data:`SMOOTH_BEFORE_REFIT`; range, range+bearing and x-y-t set their own) and, after
    the refit, only the later steps the refit did not answer (it replaces the others: smoothing
    them would be wasted; ``smooth["late"]`` False: none, they keep the filter's answers).
    That late pass reads the answers so far as its path (its cold starts' observations): the
    refit's where it answered, not the filter's, which can be units off there (session 35:
    range+bearing task 13 of suite seed 5, filter draw 2, the filter 1-6 units off at steps
    6-24; the late pass from it answered steps 7-9 1-2 units off, from the answers 0.01-0.02).  The
    refit ranks its search starts by the smoothed path (searches at the steps of
    :data:`~stsim.baselines.trajectory_refit.REFIT_SETTINGS`, and every 5 steps while it holds
    no mode) and falls back to it where it holds none.  ``t_rel`` / ``emit`` / ``t_start`` as
    :func:`smooth_path` (ToA; ``emit`` also goes to the refit).

    Returns ``(pos (n, 2), t0 (n,) or None, used (n,) bool)``: the answers, the first emission
    time per step (ToA with ``t_rel``: the smoother's or the refit's where they answered, NaN
    where the filter's answer stays), and the steps the refit answered."""
    n = len(path)
    pos = np.array(path, float, copy=True)
    t0 = np.full(n, np.nan) if (t_rel is not None and emit is None) else None
    used = np.zeros(n, bool)
    toa = {"t_rel": t_rel, "emit": emit, "t_start": t_start}
    if smooth is not None:
        smooth = dict(smooth)
        cut = int(smooth.pop("refit_from", SMOOTH_BEFORE_REFIT))   # popped either way: not a smoother setting
        first = np.arange(n) < cut if refit is not None else None
        late_pass = bool(smooth.pop("late", True))
        pos, t_s = smooth_task(task, readings, path, steps=first, **toa, **smooth)
        if t_s is not None and t0 is not None:
            t0 = t_s
    if refit is not None:
        from .trajectory_refit import refit_task
        pos_r, used, t_r = refit_task(task, readings, pos, emit=emit, **refit)
        if smooth is not None and first is not None and late_pass:
            late = ~used & ~first
            if late.any():                                   # the later steps the refit left
                pos_s, t_s = smooth_task(task, readings, pos_r, steps=late, **toa, **smooth)
                pos_r[late] = pos_s[late]
                if t_s is not None and t0 is not None:
                    t0[late] = t_s[late]
        pos = pos_r
        if t_r is not None and t0 is not None:
            t0 = np.where(used, t_r, t0)                   # t_r: NaN where the refit left a step
    return pos, t0, used
