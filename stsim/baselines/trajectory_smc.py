"""Resample-move sequential Monte Carlo over the generator's trajectory parameters, from a step on
(issue 20, item 4: proximity tracking at the posterior of its detections under the trajectory
prior).

A proximity detection is exact (STARK Table 7: the closed disk of radius ``r``), so the
likelihood of a trajectory is an indicator and the posterior is the prior restricted to the
parameters whose trajectory meets every detection so far.  The particle filter
(:mod:`stsim.baselines.particle_tracking`, motion through a library of prior trajectories)
carries only the current state: from step 10 on its per-step error was 1.2-2.4 times the
limit's (docs/stark-tier1.md), the trajectory's shape (its parameters, pinned by the first
detections) forgotten.  Here, from step ``first`` on, a population of parameter vectors ``u``
(each with its structure, the set of active basis motions; the parametrisation of
:class:`~stsim.baselines.trajectory_posterior.PriorLayout`) stands for the posterior:

* **start** (Laplace importance sampling): the refit's search
  (:func:`~stsim.baselines.trajectory_refit._search_starts`: prior draws nearest the filter's
  answers, Levenberg-Marquardt on the detections as distance intervals,
  :func:`~stsim.baselines.trajectory_refit.proximity_intervals`), then a feasibility phase on
  the residuals beyond a margin only (:class:`BeyondMargin`: least squares pulls each distance
  to its interval's centre and stops just outside some interval); every fit within ``accept``
  bounds gives Gaussian components (its Laplace covariance ``(3 J^T J + 12 I)^-1``, as
  :func:`~stsim.baselines.trajectory_refit.mode_log_evidence`, times each factor of ``inflate``
  squared) of a mixture proposal; the draws are weighted by prior (structure probability,
  STARK Appendix 7.3, times the uniform density on ``[0, 1]``) times the indicator over the
  mixture's density (self-normalised importance sampling; Geweke 1989) and resampled;
* **each later step** (resample-move; Gilks & Berzuini 2001): the particles that miss the
  step's detections are dropped, the rest resampled (systematic), then ``sweeps`` random-walk
  Metropolis sweeps per structure with the structure's population covariance times
  ``(2.38^2 / d)`` (Roberts, Gelman & Gilks 1997), a move accepted when it stays in the prior's
  box and meets every detection so far (uniform prior times indicator, symmetric proposal);
* **the answer**: the population's mean position at the step.

When every particle fails (or no start holds) the filter's answer stays and the population is
started again (every ``retry_every`` steps, at most ``max_tries`` starts).  Structure weights
are those of the start's importance weights and are never moved between: a structure no fit
of the start reached is missing (the limit, :func:`~stsim.baselines.trajectory_posterior.
smc_posterior`, runs every structure from the prior, at about 100 times the cost).
"""
from __future__ import annotations

import numpy as np

from .resampling import systematic_resample
from .trajectory_posterior import Readings, _log_struct_prior
from .trajectory_refit import (ReadingResiduals, _search_starts, active_columns, compiled_positions, free_columns,
                               laplace_hessian, levenberg_marquardt, prior_draws, task_prior)
from .prior_motion import step_grid

#: :func:`track_late` settings of the proximity default (issue 20, session 23; docs/stark-tier1.md,
#: "Proximity's later steps").  Against the limits over all 20 steps, four draws
#: (``perf/pf_vs_limit.py --seeds 4``): suite seed 7 (20 tasks) 1.24x -> 1.10x, seed 5 (10 tasks)
#: 1.31x -> 1.11x; first 10 steps 1.10x -> 1.06x and 1.06x -> 1.00x; Stone Soup's particle filter
#: 6.8x slower (5.3-7.5; 17.9x before; ``perf/pf_cost.py --n 20 --rounds 3``).  Chosen over three
#: draws per setting, all steps on seeds 5 / 7: one proposal scale (3) 1.15x / 1.12x; the second
#: (0.5) with 128 particles and 8 sweeps 1.10x / 1.09x, but 4.4x below Stone Soup's particle
#: filter; with 96 and 6 1.09x / 1.10x (1.12x / 1.09x once each sweep's moves were one matrix
#: product, other random draws); from step 8 rather than 10 (two draws from step 10: 1.11x /
#: 1.17x with one scale; the first 10 steps 1.06x / 1.10x -> 1.04x / 1.04x), with 12 starts and 4 LM
#: iterations rather than 16 and 8 (1.14x / 1.12x, about 8 % dearer); not kept: 5 sweeps after a
#: start's 8 (1.11x / 1.12x), 12 after a start and 6 later (1.10x / 1.11x), 64 draws per component (1.11x / 1.10x), a heavier-tailed
#: proposal (multivariate t, 4 degrees of freedom: 1.21x / 1.11x), flattened importance weights
#: (1.16x / 1.13x), a wider search pool (10 per structure cut to 80: 1.18x / 1.18x), inflation
#: 5 or 2, 256 draws, a start from step 6 (within the draws' spread, 1.06x-1.21x on seed 5).
#: Session 27: 128 particles and 8 sweeps (the setting measured above at 4.4x, before each sweep's
#: moves were one matrix product): all steps, four draws (``perf/pf_vs_limit.py``), seed 5 (10
#: tasks) 1.11x -> 1.09x, seed 7 (20 tasks) 1.10x -> 1.09x; the first 10 steps 1.00x -> 1.00x and
#: 1.06x -> 1.05x; +18 % tracking time (in-process medians of 4 alternating rounds, 20 tasks of
#: seed 7); Stone Soup's particle filter 6.3-6.4x -> 5.3x slower (5.0-5.5; ``perf/pf_cost.py --n
#: 20 --rounds 3``).
SMC_SETTINGS = {"first": 8, "n_particles": 128, "sweeps": 8, "draws": 128, "inflate": (3.0, 0.5),
                "accept": 1.2, "pool_per_structure": 5, "pool_keep": 40, "n_starts": 12,
                "iters": 4, "feasible_iters": 8, "margin": 0.8, "feasible_prior": 0.2,
                "retry_every": 2, "max_tries": 4}


class BeyondMargin:
    """Residuals of a :class:`~stsim.baselines.trajectory_refit.ReadingResiduals` counted only
    beyond ``margin`` bounds: ``sign(r) max(|r| - margin, 0)`` (their Jacobian zero inside), a
    feasibility objective for :func:`~stsim.baselines.trajectory_refit.levenberg_marquardt`
    (which reads ``upto``, ``size``, ``r``, ``__call__`` and ``jacobian``): its minimum 0 is
    reached by any fit whose readings are all within ``margin`` bounds."""

    def __init__(self, res: ReadingResiduals, margin: float):
        self.res, self.margin = res, float(margin)
        self.upto, self.size, self.r = res.upto, res.size, res.r

    def _beyond(self, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        x = r[:, :self.size]
        over = np.abs(x) - self.margin
        on = over > 0
        r[:, :self.size] = np.where(on, np.copysign(over, x), 0.0)
        return r, on

    def __call__(self, pos: np.ndarray, t_start: np.ndarray | None = None, extra: int = 0) -> np.ndarray:
        """(N, R + extra) as ``res(pos, t_start, extra)``, counted beyond the margin."""
        return self._beyond(self.res(pos, t_start, extra))[0]

    def jacobian(self, pos, D, t_start=None, emit_col=None, emit_scale=0.0, extra=0):
        """``(r, J)`` as ``res.jacobian``, counted beyond the margin (J zero inside it)."""
        r, J = self.res.jacobian(pos, D, t_start, emit_col, emit_scale, extra)
        r, on = self._beyond(r)
        J[:, :, :self.size] *= on[:, None, :]
        return r, J


def _meets(res: ReadingResiduals, pos: np.ndarray) -> np.ndarray:
    """(N,) bool: trajectories ``pos`` (N, n, 2) meet every reading of ``res`` (each residual
    within one bound)."""
    if res.size == 0:
        return np.ones(len(pos), bool)
    return np.abs(res(pos)).max(axis=1) <= 1.0


def laplace_importance(res: ReadingResiduals, lay, draws, path: np.ndarray, t: int, t_rel: np.ndarray,
                       rng: np.random.Generator, *, draws_per_fit: int = 128,
                       inflate: float | tuple = (3.0, 0.5), accept: float = 1.2,
                       pool_per_structure: int = 5, pool_keep: int = 40, n_starts: int = 12, iters: int = 4,
                       feasible_iters: int = 8, margin: float = 0.8, feasible_prior: float = 0.2
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Importance draws of the posterior of trajectory parameters given the readings ``res`` of
    steps ``0..t`` (module docstring, "start").

    Args: lay the prior's layout and ``draws`` its prior draws
        (:func:`~stsim.baselines.trajectory_refit.prior_draws`); path (>= t+1, 2) a filter's
        answers (plane units), which rank the prior draws; t_rel (n,) the steps' times;
        inflate: one Gaussian component per fit and factor, its Laplace covariance times the
        factor squared (the default's 3 reaches across a fit's region, 0.5 stays inside it
        where the region is thin: with 3 alone 38 of 52 starts on 20 seed-7 tasks drew nothing
        inside it, and 7 tasks never started); ``draws_per_fit`` draws per component.
    Returns: ``(u (M, dim), mask (M, kinds), w (M,))`` the draws that meet every reading and
        their normalised weights, or None when no fit is within ``accept`` bounds or no draw
        meets the readings."""
    free, periodic = free_columns(lay)
    us, ms, ls = _search_starts(res, lay, draws, path, t, t_rel, pool_per_structure=pool_per_structure,
                                n_starts=n_starts, iters_pool=3, prior=2.0, pool_keep=pool_keep)
    u, _, _, lam = levenberg_marquardt(res, lay, us, ms, t_rel, iters, lam_per_start=ls, prior=2.0)
    if feasible_iters:
        u = levenberg_marquardt(BeyondMargin(res, margin), lay, u, ms, t_rel, feasible_iters, lam_per_start=lam,
                                prior=feasible_prior)[0]
    _, _, worst, _, info = levenberg_marquardt(res, lay, u, ms, t_rel, 0, prior=2.0, info=True)
    JtJ, cols, valid = info[:3]
    H = laplace_hessian(lay, cols, valid, JtJ, 2.0)          # the Gaussian surrogate's, as the refit's
    comps = []
    for i in np.flatnonzero(worst <= accept):
        c = cols[i][valid[i]]
        try:
            L = np.linalg.cholesky(np.linalg.inv(H[i][np.ix_(valid[i], valid[i])]))
        except np.linalg.LinAlgError:
            continue
        comps += [(u[i], ms[i], c, L * f) for f in np.atleast_1d(inflate)]
    if not comps:
        return None
    M = int(draws_per_fit)
    U = np.repeat(np.array([cp[0] for cp in comps]), M, axis=0)
    Mk = np.repeat(np.array([cp[1] for cp in comps]), M, axis=0)
    for j, (_, _, c, L) in enumerate(comps):
        U[j * M:(j + 1) * M, c] += rng.standard_normal((M, len(c))) @ L.T
    box = free & ~periodic
    inside = ((U[:, box] >= 0.0) & (U[:, box] <= 1.0)).all(axis=1)
    U[:, periodic] %= 1.0
    log_q = np.full((len(U), len(comps)), -np.inf)           # each draw under each component
    bits = 1 << np.arange(Mk.shape[1])
    code = Mk.astype(np.int64) @ bits                        # one integer per structure
    for j, (uj, mj, c, L) in enumerate(comps):
        same = code == int(mj.astype(np.int64) @ bits)
        d = U[same][:, c] - uj[c]
        per = periodic[c]
        d[:, per] = (d[:, per] + 0.5) % 1.0 - 0.5
        y = np.linalg.solve(L, d.T).T
        log_q[same, j] = -0.5 * (y * y).sum(axis=1) - np.log(np.diag(L)).sum() - 0.5 * len(c) * np.log(2 * np.pi)
    log_q = np.logaddexp.reduce(log_q, axis=1) - np.log(len(comps))
    ok = inside.copy()
    ok[inside] = _meets(res, compiled_positions(lay, U[inside], Mk[inside], t_rel))
    if not ok.any():
        return None
    log_w = _log_struct_prior(Mk[ok], draws.max_components, len(lay.kinds)) - log_q[ok]
    w = np.exp(log_w - log_w.max())
    return U[ok], Mk[ok], w / w.sum()


def move(res: ReadingResiduals, lay, u: np.ndarray, mask: np.ndarray, t_rel: np.ndarray,
         rng: np.random.Generator, sweeps: int) -> tuple[np.ndarray, float]:
    """``sweeps`` random-walk Metropolis sweeps of the population ``u`` (N, dim) (structures
    ``mask`` (N, kinds)) targeting the uniform prior restricted to the parameters that meet
    every reading of ``res`` (module docstring): per structure the proposal covariance is its
    particles' covariance over its active columns (plus ``1e-6``) times ``2.38^2 / d`` (a
    structure with at most ``d + 2`` distinct particles, copies after a resampling: 0.01^2 per
    column).  Returns the moved population (a new array)
    and the mean acceptance rate."""
    free, periodic = free_columns(lay)
    box = free & ~periodic
    u = u.copy()
    N = len(u)
    code = mask.astype(np.int64) @ (1 << np.arange(mask.shape[1]))   # one integer per structure
    # per particle its structure's scaled Cholesky factor, padded to the widest structure, and
    # the (row, column) of u each of its entries moves: one matrix product per sweep
    active = active_columns(lay, mask)
    width = int(active.sum(axis=1).max())
    Lp = np.zeros((N, width, width))
    rows, cols = np.nonzero(active)
    slots = (np.cumsum(active, axis=1) - 1)[rows, cols]         # each column's place in its row
    for g in np.unique(code):
        idx = np.flatnonzero(code == g)
        c = np.flatnonzero(active[idx[0]])
        X = u[np.ix_(idx, c)]
        # distinct particles (copies after a resampling share one projection)
        distinct = len(np.unique(X @ np.linspace(1.0, 2.0, len(c))))
        if distinct > len(c) + 2:
            C = np.cov(X.T) + 1e-6 * np.eye(len(c))
            try:
                L = np.linalg.cholesky(C)
            except np.linalg.LinAlgError:
                L = np.diag(np.sqrt(np.diag(C)))
        else:
            L = 0.01 * np.eye(len(c))
        Lp[idx[:, None], :len(c), :len(c)] = L * (2.38 / np.sqrt(max(len(c), 1)))
    rate = 0.0
    for _ in range(int(sweeps)):
        step = np.einsum("nij,nj->ni", Lp, rng.standard_normal((N, width)))
        prop = u.copy()
        prop[rows, cols] += step[rows, slots]
        ok = ((prop[:, box] >= 0.0) & (prop[:, box] <= 1.0)).all(axis=1)
        prop[:, periodic] %= 1.0
        ok[ok] = _meets(res, compiled_positions(lay, prop[ok], mask[ok], t_rel))
        u[ok] = prop[ok]
        rate += ok.mean()
    return u, rate / max(int(sweeps), 1)


def track_late(task, readings: Readings, path: np.ndarray, seed: int = 0, *, first: int = 8,
               n_particles: int = 96, sweeps: int = 6, start_sweeps: int | None = None, draws: int = 128,
               inflate: float | tuple = (3.0, 0.5), accept: float = 1.2, pool_per_structure: int = 5,
               pool_keep: int = 40, n_starts: int = 12, iters: int = 4, feasible_iters: int = 8,
               margin: float = 0.8, feasible_prior: float = 0.2,
               retry_every: int = 2, max_tries: int = 4, _log: list | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A filter's answers ``path`` (n, 2) (plane units, on the trajectory's step grid,
    :func:`~stsim.baselines.prior_motion.on_step_grid`) replaced from step ``first`` on by the
    mean of the resample-move population (module docstring) wherever one is held.

    ``readings``: the task's :class:`~stsim.baselines.trajectory_posterior.Readings` on the
    same grid (NaN rows for steps without readings); the prior is the task's
    (:func:`~stsim.baselines.trajectory_refit.task_prior`; readings with positions only: no
    emission-time parameter).  ``seed``: the
    sampler's random draws.  ``start_sweeps``: the sweeps right after a start (None:
    ``sweeps``).  The start's settings (``draws`` per fit, ``inflate``, ``accept``, the search's
    pool and starts, ``iters`` LM iterations, ``feasible_iters`` beyond ``margin`` with prior
    weight ``feasible_prior``) are
    :func:`laplace_importance`'s.  ``_log`` collects ``(step, event, value)``: ``("start",
    effective sample size)``, ``("lost", 0)``.

    Returns ``(pos (n, 2), used (n,) bool: the step's answer is the population's)``.
    Raises ``ValueError`` for readings the refit cannot read
    (:class:`~stsim.baselines.trajectory_refit.ReadingResiduals`)."""
    rng = np.random.default_rng(seed)
    n_steps, duration, kmax, table, _ = task_prior(task)
    n = len(path)
    n_lib, span = step_grid(n_steps, duration, n)
    prior = prior_draws(n_lib, span, kmax, table, None, 120)
    lay = prior.layout
    t_rel = np.linspace(0.0, span, n_lib)
    every = ReadingResiduals(readings, n - 1, t_rel)
    out = np.array(path, float, copy=True)
    used = np.zeros(n, bool)
    u = mask = None
    last_try, tries = -10 ** 9, 0
    start_kw = {"draws_per_fit": draws, "inflate": inflate, "accept": accept,
                "pool_per_structure": pool_per_structure, "pool_keep": pool_keep, "n_starts": n_starts,
                "iters": iters, "feasible_iters": feasible_iters, "margin": margin,
                "feasible_prior": feasible_prior}
    for t in range(first, n):
        res = every.prefix(t)
        if u is not None:
            alive = _meets(res, compiled_positions(lay, u, mask, t_rel))
            if alive.any():
                keep = systematic_resample(alive.astype(float), rng, n_particles)
                u, mask = u[keep], mask[keep]
            else:
                u = mask = None
                if _log is not None:
                    _log.append((t, "lost", 0.0))
        started = False
        if u is None and t - last_try >= retry_every and tries < max_tries:
            last_try, tries = t, tries + 1
            got = laplace_importance(res, lay, prior, out, t, t_rel, rng, **start_kw)
            if got is not None:
                keep = systematic_resample(got[2], rng, n_particles)
                u, mask = got[0][keep], got[1][keep]
                started = True
                if _log is not None:
                    _log.append((t, "start", float(1.0 / (got[2] ** 2).sum())))
        if u is None:
            continue
        u = move(res, lay, u, mask, t_rel, rng, sweeps if start_sweeps is None or not started else start_sweeps)[0]
        out[t] = compiled_positions(lay, u, mask, t_rel)[:, t].mean(axis=0)
        used[t] = True
    return out, used
