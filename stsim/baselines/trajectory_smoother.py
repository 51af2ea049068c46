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
  from the previous step's fit and Levenberg-Marquardt, :func:`scipy.optimize.least_squares`,
  from the filter's path; Barfoot 2017, *State Estimation for
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
#: worse than the filter (module docstring).
SMOOTHER_SETTINGS: dict = {
    "range": {"from_step": 1, "max_sd": 0.2},
    "range_bearing": {"from_step": 1},
    # with the refit: steps 0-13 only (``late``): smoothing the later steps the refit leaves too
    # left event's default 5.2-5.9x cheaper than Stone Soup's particle filter (stark_tier1.
    # SMOOTHED_DEFAULTS)
    "toa": {"from_step": 1, "late": False},
    # emission times unknown (the shot schedule: first emission time fitted; temporal and x-y-t,
    # in x-y-t's default: stark_tier1.SMOOTHED_DEFAULTS): x-y-t, seed 11, 20 tasks, with the
    # least-squares refit from step 8: 0.265 / 0.143 (0.317 / 0.121 without ``max_sd``); no late
    # pass (``late``, :func:`smooth_then_refit`): better over all steps (x-y-t 0.120 against
    # 0.144 on seed 11) but x-y-t's default then measured 4.8-5.4x cheaper than Stone Soup's
    # particle filter in three runs of ``perf/pf_cost.py`` (steps 0-13 only: 6.3x)
    "toa_schedule": {"from_step": 1, "max_sd": 0.2, "late": False},
}


#: :func:`smooth_then_refit`: with the refit after it, the smoother answers steps
#: ``0..SMOOTH_BEFORE_REFIT - 1`` (the refit's first searches, range at steps 3 and 8, ToA at 0,
#: and its fallback where it holds no mode use that path); kept from the first least-squares
#: refit, chosen when its searches were at steps 8 and 13, and not re-tuned since (the defaults' figures
#: in docs/stark-tier1.md are measured with it)
SMOOTH_BEFORE_REFIT = 14


def settings_for(task) -> dict | None:
    """The :data:`SMOOTHER_SETTINGS` entry of a tracking task: by modality, ToA split by whether
    the emission times are given (``"toa"``) or not (``"toa_schedule"``); None for a modality
    without one (bearing, proximity)."""
    m = task.inputs.get("modality")
    if m == "toa":
        m = "toa" if task.inputs.get("times") is not None else "toa_schedule"
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
            self.parts.append((kind, k, r.sensors[s], val))
        #: (n,) number of readings of steps 0..t
        self.count = np.searchsorted(np.sort(np.concatenate([p[1] for p in self.parts])), np.arange(len(z)),
                                     side="right")

    def upto(self, t: int) -> list:
        """The parts cut to the readings of steps ``0..t``."""
        return [(kind, k[k <= t], s[k <= t], v[k <= t]) for kind, k, s, v in self.parts]

    def evaluate(self, parts: list, P: np.ndarray, t0: float = 0.0):
        """Residuals (R,) in bound units of positions ``P`` (>= t+1, 2) (and first emission
        time ``t0``, s), their derivatives ``jx, jy`` (R,) by the reading's own step's position
        and ``jt`` (R,) by ``t0``, and each reading's step ``k`` (R,)."""
        r = self.r
        out, JX, JY, JT, KK = [], [], [], [], []
        for kind, k, s, val in parts:
            dx, dy = P[k, 0] - s[:, 0], P[k, 1] - s[:, 1]
            d2 = dx * dx + dy * dy
            d = np.sqrt(np.maximum(d2, 1e-24))
            jt = np.zeros(len(k))
            if kind == "range":
                b = r.range_sigma * d + ROUNDING
                res = (val - d) / b
                g = (-b - (val - d) * r.range_sigma) / (b * b)      # d res / d d
                jx, jy = g * dx / d, g * dy / d
            elif kind == "bearing":
                b = r.bearing_half + np.radians(ROUNDING)
                res = wrap_pi(val - np.arctan2(dy, dx)) / b
                jx, jy = dy / (d * d * b), -dx / (d * d * b)
            else:
                b = r.toa_half + ROUNDING
                res = (val - t0 - d / r.speed) / b
                jx, jy = -dx / (d * r.speed * b), -dy / (d * r.speed * b)
                jt = np.full(len(k), -1.0 / b)
            out.append(res)
            JX.append(jx)
            JY.append(jy)
            JT.append(jt)
            KK.append(k)
        return (np.concatenate(out), np.concatenate(JX), np.concatenate(JY), np.concatenate(JT),
                np.concatenate(KK))


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
        iters: Levenberg-Marquardt function evaluations (``max_nfev``) of a fit from the filter's
            path; warm: Gauss-Newton iterations of a fit from the previous step's
            (:func:`_gauss_newton`); ftol: both stop when an iteration gains less than this
            fraction of the cost.
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
    from scipy.optimize import least_squares
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
    top = np.eye(Dx)[:D]
    eye = np.eye(D)
    a = None
    t0 = 0.0
    H = None
    fitted = -1                                                  # readings count of the last fit
    want = np.ones(n, bool) if steps is None else np.asarray(steps, bool)
    for t in range(n):
        if R.count[t] == 0 or not want[t]:
            continue
        if R.count[t] == fitted:                                 # no new reading: same fit, and
            pass                                                 # its prediction is the MAP at t
        else:
            fitted = R.count[t]
            parts = R.upto(t)
            bx, by = Bx[:t + 1], By[:t + 1]
            m = M[:t + 1]
            memo: dict = {}

            def rj(x):
                """Weighted reading residuals (R,) at ``x`` and their Jacobian (R, Dx)."""
                key = x.tobytes()
                if key not in memo:
                    memo.clear()
                    P = m + np.stack([bx @ x[:D], by @ x[:D]], axis=1)
                    res, jx, jy, jt, k = R.evaluate(parts, P, x[D] if free_t0 else 0.0)
                    J = jx[:, None] * bx[k] + jy[:, None] * by[k]
                    if free_t0:
                        J = np.hstack([J, jt[:, None]])
                    memo[key] = (weight * res, weight * J)
                return memo[key]

            def fun(x):
                return np.concatenate([x[:D], rj(x)[0]])

            def jac(x):
                return np.vstack([top, rj(x)[1]])

            cold = a is None or t < restart
            best = None
            if a is not None:                                    # warm: from the previous fit
                x = np.append(a, t0) if free_t0 else a
                best = _gauss_newton(rj, x, pd, warm, ftol)
                cold = cold or np.abs(rj(best[0])[0]).max() > accept * weight
            if cold:                                             # from the filter's path
                bt = np.vstack([bx, by])
                y = np.concatenate([path[:t + 1, 0] - m[:, 0], path[:t + 1, 1] - m[:, 1]])
                s2 = path_sd * path_sd
                x0 = np.linalg.solve(bt.T @ bt / s2 + eye, bt.T @ y / s2)
                if free_t0:
                    if t_start is not None and np.isfinite(t_start[t]):
                        tt = float(t_start[t])
                    else:                                        # least squares given the path
                        res = R.evaluate(parts, m + np.stack([bx @ x0, by @ x0], axis=1), 0.0)[0]
                        tt = float(res.mean() * (r.toa_half + ROUNDING))
                    x0 = np.append(x0, tt)
                sol = least_squares(fun, x0, jac=jac, method="lm", max_nfev=iters, ftol=ftol, xtol=ftol)
                if best is None or sol.cost < best[1]:
                    best = (sol.x, sol.cost)
            a, t0 = best[0][:D], (best[0][D] if free_t0 else 0.0)
            H = None
            if max_sd is not None:                               # Gauss-Newton Hessian at the fit
                J = rj(best[0])[1]
                H = J.T @ J + np.diag(pd)
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


def _gauss_newton(rj, x: np.ndarray, pd: np.ndarray, iters: int, ftol: float) -> tuple[np.ndarray, float]:
    """Gauss-Newton on ``0.5 (|pd * x|^2 + |f(x)|^2)`` from ``x`` (Dx,) with step halving (at
    most 4 halvings; Nocedal & Wright 2006, Numerical Optimization, sections 10.3 and 3.1):
    ``rj(x)`` gives the residuals ``f`` (R,) and their Jacobian (R, Dx); ``pd`` (Dx,) is 1 on
    the prior's standard-normal coordinates and 0 on flat ones.  At most ``iters`` iterations,
    stopping when an accepted step gains less than ``ftol`` of the cost or none is found.  The
    normal equations ``(J^T J + diag(pd)) d = -(J^T f + pd x)`` are solved by LAPACK
    (:func:`numpy.linalg.solve`; :func:`scipy.linalg.cho_solve`'s wrapper cost 15x as much per
    call on these 20 x 20 systems).  Returns ``(x, cost)``.

    Used for the warm start of each step (the previous step's fit, already near the optimum):
    the same answer as :func:`scipy.optimize.least_squares` at a fraction of its per-call
    overhead (docs/stark-tier1.md)."""
    P = np.diag(pd)

    def cost_of(x_, f_):
        return 0.5 * (float((pd * x_) @ x_) + float(f_ @ f_))

    f, J = rj(x)
    cost = cost_of(x, f)
    for _ in range(iters):
        try:
            step = -np.linalg.solve(J.T @ J + P, J.T @ f + pd * x)
        except np.linalg.LinAlgError:
            break
        for _ in range(5):
            xn = x + step
            fn, Jn = rj(xn)
            cn = cost_of(xn, fn)
            if cn < cost:
                break
            step *= 0.5
        else:
            break
        gain = (cost - cn) / max(cost, 1e-300)
        x, f, J, cost = xn, fn, Jn, cn
        if gain < ftol:
            break
    return x, cost


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
    :data:`SMOOTH_BEFORE_REFIT`; no entry of :data:`SMOOTHER_SETTINGS` overrides it) and, after
    the refit, only the later steps the refit did not answer (it replaces the others: smoothing
    them would be wasted; ``smooth["late"]`` False: none, they keep the filter's answers).  The
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
        first = np.arange(n) < int(smooth.pop("refit_from", SMOOTH_BEFORE_REFIT)) if refit is not None else None
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
                pos_s, t_s = smooth_task(task, readings, path, steps=late, **toa, **smooth)
                pos_r[late] = pos_s[late]
                if t_s is not None and t0 is not None:
                    t0[late] = t_s[late]
        pos = pos_r
        if t_r is not None and t0 is not None:
            t0 = np.where(used, t_r, t0)                   # t_r: NaN where the refit left a step
    return pos, t0, used
