"""The posterior mean of a tracking task under the generator's own trajectory prior and noise
model, by sequential Monte Carlo over the prior's parameters (a reference, not a user baseline).

Prior (STARK Appendix 7.3, :func:`stsim.sim.motion.random_trajectory`): ``k`` uniform in
``1..max_components`` basis motions, a uniform ``k``-subset of the five kinds, each kind's
parameters uniform in its range (:data:`~stsim.sim.motion.STARK_RELEASE_RANGES`; circular and
spiral angular rates with a random sign), summed at ``linspace(0, duration, n_steps)`` and
min-max normalised per axis into the domain over *all* steps.  Event families add the first
emission time, uniform in ``emit_time_range`` (the ``k``-th shot is fired at
``t_start + t_rel[k]``).  Noise: STARK Table 7 bounded uniform noise (range relative, bearing
and ToA absolute) followed by the print rounding to 4 decimals, exactly
(:func:`reading_terms`); proximity: exact disk detections.  Under this prior and noise model the posterior mean of the step-``t``
answer given the readings of steps ``0..t`` minimises the expected squared error: no estimator
can do better on average over the generator.

Algorithm (an SMC sampler over a growing data set, Chopin 2002 "IBIS", with the bounded
likelihood of each new step reached through a decreasing tolerance as in adaptive ABC-SMC,
Del Moral, Doucet & Jasra 2012):

* the prior's 25 structures (sets of 1..3 active kinds) each get their own population, run
  side by side in one array; the posterior is their mixture weighted by prior times evidence
  (the structure's marginal likelihood, the product of its mean incremental weights: Del
  Moral, Doucet & Jasra 2006, "Sequential Monte Carlo samplers", eq. 14), so no kind
  birth/death move is needed and no structure is lost to an early unlucky resampling;
* a particle is a vector ``u`` of every kind's parameters mapped to ``[0, 1]``; the offsets
  (``x0, y0, cx, cy``) are not sampled: the per-axis min-max normalisation cancels them
  exactly;
* step ``t`` enters with tolerance ``eps``: a reading is accepted when its violation of the
  noise bound, in units of that bound, is at most ``eps``; each structure's ``eps`` falls
  adaptively (each level keeps a share of its effective sample size; when that barely moves
  ``eps``, only the particles nearest the readings are kept) to 0, the exact posterior;
* after each level the particles are resampled (systematic, within the structure) and moved
  by Metropolis-Hastings: a joint random walk with the structure's weighted particle
  covariance (adaptive Metropolis within the population) and one random-walk block per kind,
  repeated until most particles have accepted several moves; phases and headings (a full
  turn) walk on the circle;
* a structure whose tolerance stalls (its particles sit in a mode the new readings rule out)
  is restarted from the prior and run over all readings so far at once (ABC-SMC from the
  prior, re-estimating its evidence); if it stalls again it is abandoned;
* after each step the particles are shared out in proportion to the structures' posterior
  weights (a floor each); with ``broad_sd`` the total grows with the posterior's spread
  (step 0: ``broad_max`` times; later steps: the previous step's posterior sd over
  ``broad_sd``, at most ``broad_max`` times), since a posterior mean's Monte-Carlo error
  is about its posterior sd over the square root of the *effective* number of independent
  particles, several times below the reported ESS after many tolerance levels;
* structures whose posterior weight is negligible (their evidence at the current tolerance,
  an upper bound, is ``prune_nats`` below the best converged one) are dropped and their
  particles given to the others, once they have converged or been restarted from the prior
  (the evidence estimate of a population in a wrong mode is far too low);
* with ``revive``, when every structure left was abandoned or none reached tolerance 0, the
  pruned and abandoned ones are restarted (from their last saved posterior, then from the
  prior): a true structure pruned on an evidence estimate tens of nats too low comes back;
* with ``gn_moves`` (:func:`task_posterior`'s default for range+bearing only): a random
  walk with the Gauss-Newton covariance of the readings at a few population members, long
  along the thin tube of parameters that the readings allow and short across it.

Why two runs disagree (measured on the worst tasks of suite seed 7, range and
range+bearing): the posterior of the first steps is often broad and multimodal (mirror
positions of range-only readings; step 0 of range task 3 has posterior sd 2.9 units), so
its mean carries a Monte-Carlo error of sd / sqrt(effective particles): 0.32 units between
six runs at 1000 particles, 0.13 at 8000.  Across structures the weights come from
evidence estimates (products over 30-60 tolerance levels, restarts included, of
populations of about 40 particles) with errors of several nats, so runs put the weight on
different structures whose means lie in different modes (range task 2, steps 1-4).

Failure modes: too few particles or moves leave the population degenerate (report the
effective sample size and compare independent runs); a mode no particle reaches makes the
reported posterior too narrow for its errors (over many tasks the mean squared error of the
exact posterior mean equals the mean posterior variance: compare them); a narrow mode the
restart from the prior also misses is abandoned with its structure
(:attr:`SMCResult.abandoned_eps`); a structure still above tolerance 0 after the level budget
is dropped with an upper bound of its weight (:attr:`SMCResult.dropped`); a run where no
structure converges raises :class:`NotConverged`.  Gaussian noise is not supported (the tolerance
scheme needs bounded noise).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from itertools import combinations
from math import comb

import numpy as np

from ..sim.motion import BASIS_MOTIONS, STARK_RELEASE_RANGES
from .geometry import wrap_pi
from .resampling import systematic_resample

#: half a unit of the 4th printed decimal (readings are printed with 4 decimals).
ROUNDING = 5e-5
#: print each level's tolerance and move statistics (diagnostics of a slow or lost run).
_DEBUG = bool(os.environ.get("STSIM_SMC_DEBUG"))
_SIGNED = {"circular": "omega", "spiral": "omega"}


@dataclass
class PriorLayout:
    """Where each basis motion's parameters sit in a particle's ``u`` vector.

    ``slices[kind]`` indexes ``u`` (values in [0, 1]); ``lo``/``hi`` map ``u`` to physical
    values (``lo + u (hi - lo)``; a signed rate maps ``s = 2u - 1`` to
    ``sign(s) (lo + |s| (hi - lo))``).  The last column is the first emission time when
    ``emit`` is set.
    """
    ranges: dict
    kinds: tuple = BASIS_MOTIONS
    names: dict = field(default_factory=dict)
    slices: dict = field(default_factory=dict)
    lo: np.ndarray = None
    hi: np.ndarray = None
    signed: np.ndarray = None
    emit: tuple[float, float] | None = None
    dim: int = 0

    def __post_init__(self):
        lo, hi, sg, i = [], [], [], 0
        for kind in self.kinds:
            names = list(self.ranges[kind])
            self.names[kind] = names
            self.slices[kind] = slice(i, i + len(names))
            for n in names:
                a, b = self.ranges[kind][n]
                lo.append(a)
                hi.append(b)
                sg.append(_SIGNED.get(kind) == n)
            i += len(names)
        if self.emit is not None:
            lo.append(self.emit[0])
            hi.append(self.emit[1])
            sg.append(False)
            i += 1
        self.lo, self.hi, self.signed = np.array(lo), np.array(hi), np.array(sg)
        self.dim = i

    def physical(self, u: np.ndarray) -> np.ndarray:
        """(N, dim) u in [0, 1] -> (N, dim) physical parameter values."""
        v = self.lo + u * (self.hi - self.lo)
        s = 2 * u - 1
        sv = np.sign(s) * (self.lo + np.abs(s) * (self.hi - self.lo))
        return np.where(self.signed, sv, v)

    def to_u(self, components: list[dict], t_start: float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """A generated trajectory's ``meta.trajectory_components`` -> ``(u (dim,), mask (5,))``
        (inactive kinds at u = 0.5).  Inverse of :meth:`physical` on the active parameters."""
        u = np.full(self.dim, 0.5)
        mask = np.zeros(len(self.kinds), bool)
        for c in components:
            kind = c["kind"]
            j = self.kinds.index(kind)
            mask[j] = True
            for n, idx in zip(self.names[kind], range(self.slices[kind].start, self.slices[kind].stop)):
                lo, hi, val = self.lo[idx], self.hi[idx], float(c[n])
                if hi == lo:
                    u[idx] = 0.5
                elif self.signed[idx]:
                    u[idx] = 0.5 + 0.5 * np.sign(val) * (abs(val) - lo) / (hi - lo)
                else:
                    u[idx] = (val - lo) / (hi - lo)
        if self.emit is not None and t_start is not None:
            lo, hi = self.emit
            u[-1] = 0.5 if hi == lo else (t_start - lo) / (hi - lo)
        return u, mask


def _cis(omega: np.ndarray, phase: np.ndarray, t_rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` of ``omega t + phase`` (each (M, n)) for ``omega``, ``phase`` (M, 1).

    On a uniform grid ``t_rel`` (``linspace``, as every generated task has) by the rotation
    recurrence ``z_{k+1} = z_k exp(i omega dt)``: two complex exponentials per particle instead
    of two trigonometric calls per particle and step (float64 trigonometry dominates the
    sampler's cost); the accumulated rounding error after ``n`` steps is about ``n`` ulp
    (below 1e-13 for n = 50).  Other grids: direct evaluation."""
    d = np.diff(t_rel)
    if len(t_rel) < 3 or t_rel[0] != 0.0 or np.ptp(d) > 1e-12 * max(abs(d[0]), 1e-300):
        a = omega * t_rel[None, :] + phase
        return np.cos(a), np.sin(a)
    M, n = len(omega), len(t_rel)
    step = np.exp(1j * omega[:, 0] * d[0])
    z = np.exp(1j * phase[:, 0])
    out = np.empty((n, M), complex)
    for k in range(n):
        out[k] = z
        z = z * step
    return out.real.T, out.imag.T


def trajectories(layout: PriorLayout, u: np.ndarray, mask: np.ndarray, t_rel: np.ndarray,
                 domain=(0.0, 10.0)) -> np.ndarray:
    """Normalised positions (N, n, 2) of N particles at relative times ``t_rel`` (n,), exactly
    as :func:`stsim.sim.motion.random_trajectory` builds them (sum, then per-axis min-max)."""
    P = layout.physical(u)
    t = t_rel[None, :]
    N, n = len(u), len(t_rel)
    X, Y = np.zeros((N, n)), np.zeros((N, n))   # per-axis sums: reductions along the last axis
    for j, kind in enumerate(layout.kinds):
        every = bool(mask[:, j].all())
        rows = slice(None) if every else np.flatnonzero(mask[:, j])  # particles with this kind
        if not every and not len(rows):
            continue
        q = {n_: P[rows, i][:, None] for n_, i in zip(layout.names[kind],
                                                      range(layout.slices[kind].start, layout.slices[kind].stop))}
        if kind == "linear":
            x, y = q["x0"] + q["vx"] * t, q["y0"] + q["vy"] * t
        elif kind == "circular":
            ca, sa = _cis(q["omega"], q["phase"], t_rel)
            x, y = q["cx"] + q["radius"] * ca, q["cy"] + q["radius"] * sa
        elif kind == "sinusoidal":
            s, o = q["speed"] * t, q["amplitude"] * _cis(q["omega"], q["phase"], t_rel)[1]
            c, sn = np.cos(q["theta"]), np.sin(q["theta"])
            x, y = q["x0"] + s * c - o * sn, q["y0"] + s * sn + o * c
        elif kind == "figure_eight":
            ca, sa = _cis(q["omega"], np.zeros_like(q["omega"]), t_rel)
            a = q["amplitude"] * sa
            b = q["amplitude"] * sa * ca          # (A / 2) sin(2 w t) = A sin(w t) cos(w t)
            c, sn = np.cos(q["theta"]), np.sin(q["theta"])
            x, y = q["cx"] + c * a - sn * b, q["cy"] + sn * a + c * b
        else:  # spiral
            r = q["r0"] + q["growth"] * t
            ca, sa = _cis(q["omega"], q["phase"], t_rel)
            x, y = q["cx"] + r * ca, q["cy"] + r * sa
        X[rows] += x
        Y[rows] += y
    low, high = domain
    out = np.empty((N, n, 2))
    for k, A in enumerate((X, Y)):
        lo, hi = A.min(axis=1), A.max(axis=1)
        span = hi - lo
        flat = span < 1e-12
        # the generator's arithmetic (minmax_normalise): the extremes land exactly on the domain
        o = low + (A - lo[:, None]) / np.where(flat, 1.0, span)[:, None] * (high - low)
        o[flat] = 0.5 * (low + high)
        out[:, :, k] = o
    return out


# ------------------------------------------------------------------------------ the readings
@dataclass
class Readings:
    """Per-step readings of one task in a common form: ``z`` (n, m, c) with NaN = dropped,
    ``c`` = 1 (range, bearing, ToA, proximity) or 2 (range+bearing)."""
    modality: str
    sensors: np.ndarray
    z: np.ndarray
    range_sigma: float = 0.01
    bearing_half: float = 2 * np.pi * 0.01
    toa_half: float = 0.01
    speed: float = 1.0
    radius: float = 4.0


def reading_terms(e: np.ndarray, a: np.ndarray, h: float = ROUNDING) -> tuple[np.ndarray, np.ndarray]:
    """Exact log-likelihood of printed readings under bounded uniform noise and print rounding.

    A reading is ``z = x + U(-a, a)`` (STARK Table 7: range ``a = sigma d``, bearing and ToA
    ``a`` fixed), printed rounded to ``2 h`` (4 decimals: ``h = 5e-5``).  The printed value
    ``zp`` has probability ``|[zp - h, zp + h] ∩ [x - a, x + a]| / (2 a)``: with ``e = |zp - x|``
    that is ``1 / (2 a)`` times ``(min(e + h, a) - max(e - h, -a)) / (2 h)`` (1 inside,
    falling linearly to 0 over the last ``2 h`` of the support, up to the constant ``2 h``).

    Args: ``e`` (...) absolute error of the printed reading (the reading's units), ``a`` (...)
        noise half-width, same units, ``h`` half the rounding unit.
    Returns: ``(v, ld)`` each (...): the violation ``e / (a + h) - 1`` (``<= 0`` inside the
        support, in units of the bound) and the log-likelihood up to a constant (``-inf`` on
        the support's boundary; outside it, where only a tolerance level admits the reading,
        ``-log(2 a)``, the value inside).
    """
    v = e / (a + h) - 1.0
    frac = (np.minimum(e + h, a) - np.maximum(e - h, -a)) / (2 * h)
    with np.errstate(divide="ignore"):
        edge = np.where(v <= 0, np.log(np.clip(frac, 0.0, 1.0)), 0.0)
    return v, edge - np.log(2 * a)


def _modal_errors(r: Readings, d, dx, dy, emit, z):
    """Per-reading ``(e, a, h)`` arrays of every numeric part of a modality's readings ``z``
    (``(..., m, c)``), broadcast against the distances ``d`` (..., m); proximity excluded."""
    out = []
    if r.modality in ("range", "range_bearing"):
        out.append((np.abs(z[..., 0] - d), r.range_sigma * d, ROUNDING))
    if r.modality in ("bearing", "range_bearing"):
        zb = np.radians(z[..., -1])
        out.append((np.abs(wrap_pi(np.where(np.isfinite(zb), zb, 0.0) - np.arctan2(dy, dx))),
                    np.full(d.shape, r.bearing_half), np.radians(ROUNDING)))
    if r.modality == "toa":
        out.append((np.abs(z[..., 0] - emit[..., None] - d / r.speed), np.full(d.shape, r.toa_half),
                    ROUNDING))
    return out


def violations(r: Readings, pos: np.ndarray, emit: np.ndarray | None, k: int):
    """Violation of each step-``k`` reading by positions ``pos`` (N, 2), in units of its noise
    bound (``<= 0``: consistent), and its log-likelihood (N,) (:func:`reading_terms`), summed
    over the step's readings.  Returns ``(viol (N, r), loglik (N,))``; ``r`` may be 0."""
    s = r.sensors
    dx, dy = pos[:, None, 0] - s[None, :, 0], pos[:, None, 1] - s[None, :, 1]
    d = np.hypot(dx, dy)
    zk = np.broadcast_to(r.z[k][None], (len(pos),) + r.z[k].shape)
    ok = np.isfinite(r.z[k][:, 0])
    cols, ld = [], np.zeros(len(pos))
    if r.modality == "proximity":
        if ok.any():
            sign = np.where(r.z[k][ok, 0] >= 0.5, 1.0, -1.0)
            cols.append(sign * (d[:, ok] - r.radius) / (0.01 * r.radius))
    else:
        for e, a, h in _modal_errors(r, d, dx, dy, emit, zk):
            if ok.any():
                v, lk = reading_terms(e[:, ok], a[:, ok], h)
                cols.append(v)
                ld += lk.sum(axis=1)
    if not cols:
        return np.zeros((len(pos), 0)), ld
    return np.concatenate(cols, axis=1), ld


def step_violations(r: Readings, pos: np.ndarray, emit: np.ndarray | None, K: int):
    """:func:`violations` of steps ``0..K-1`` at once: ``pos`` (N, K, 2), ``emit`` (N, K) or
    None.  Returns ``(vmax (N, K), loglik (N, K))``: each step's largest violation (``-inf``
    for a step without readings) and summed log-likelihood (:func:`reading_terms`)."""
    s = r.sensors
    dx = pos[:, :K, None, 0] - s[None, None, :, 0]
    dy = pos[:, :K, None, 1] - s[None, None, :, 1]
    d = np.hypot(dx, dy)                                   # (N, K, m)
    N = len(pos)
    vmax = np.full((N, K), -np.inf)
    ld = np.zeros((N, K))
    z = r.z[:K]                                            # (K, m, c)
    ok = np.isfinite(z[..., 0])                            # (K, m)
    with np.errstate(invalid="ignore"):
        if r.modality == "proximity":
            v = np.where(z[..., 0] >= 0.5, 1.0, -1.0) * (d - r.radius) / (0.01 * r.radius)
            vmax = np.maximum(vmax, np.where(ok, v, -np.inf).max(axis=2))
        else:
            for e, a, h in _modal_errors(r, d, dx, dy, None if emit is None else emit[:, :K], z):
                v, lk = reading_terms(e, a, h)
                vmax = np.maximum(vmax, np.where(ok, v, -np.inf).max(axis=2))
                ld += np.where(ok, lk, 0.0).sum(axis=2)
    return vmax, ld


# ------------------------------------------------------------------------------------- SMC
@dataclass
class SMCResult:
    """Posterior means per step: ``pos`` (n, 2), ``emit`` (n,) (event families) and the
    posterior covariance trace of the position ``pos_var`` (n,) (plane units^2); ``ess`` (n,)
    effective sample size after the step; ``levels`` (n,) tolerance levels used;
    ``acceptance`` mean MH acceptance rate of the joint move; ``restarts`` structures
    restarted from the prior after their tolerance stalled, ``abandoned`` structures given up
    after stalling again from the prior, ``abandoned_eps`` the smallest tolerance (noise
    bounds) at which one was given up (``inf``: none; a small value would mean a structure
    that nearly fits was dropped); ``dropped`` an upper bound of the posterior weight of the
    structures dropped for not reaching tolerance 0 within the level budget (largest over
    the steps; 0 when every structure that matters converged); ``weights`` (n, G) each
    structure's posterior weight after the step and ``struct_pos`` (n, G, 2) its posterior
    mean position (NaN where its weight is 0; structures in :func:`structures` order: the
    diagnostics of a run that disagrees with another); ``revived`` structures restarted
    after every other one failed (``revive``)."""
    pos: np.ndarray
    emit: np.ndarray | None
    pos_var: np.ndarray
    emit_var: np.ndarray | None
    ess: np.ndarray
    levels: np.ndarray
    acceptance: float
    abandoned: int = 0
    dropped: float = 0.0
    restarts: int = 0
    abandoned_eps: float = float("inf")
    weights: np.ndarray | None = None
    struct_pos: np.ndarray | None = None
    revived: int = 0


class NotConverged(RuntimeError):
    """The sampler could not reach the exact posterior of a step (see :func:`smc_posterior`)."""


def _log_struct_prior(mask: np.ndarray, kmax: int, n_kinds: int) -> np.ndarray:
    k = mask.sum(axis=1)
    table = np.full(n_kinds + 1, -np.inf)
    for j in range(1, kmax + 1):
        table[j] = -np.log(kmax) - np.log(comb(n_kinds, j))
    return table[k]


#: parameters that only translate a basis motion: the per-axis min-max normalisation removes
#: them exactly, so the sampler leaves them at their prior mid-point and never moves them.
OFFSETS = frozenset({"x0", "y0", "cx", "cy"})


def _move_blocks(lay: PriorLayout, emit: bool):
    """(blocks, kind of each block): the ``u`` indices each random-walk block moves (a kind's
    non-offset parameters with a non-empty range; the emission time as its own block)."""
    blocks, kinds = [], []
    for j, kind in enumerate(lay.kinds):
        idx = [i for n, i in zip(lay.names[kind], range(lay.slices[kind].start, lay.slices[kind].stop))
               if n not in OFFSETS and lay.hi[i] > lay.lo[i]]
        if idx:
            blocks.append(np.array(idx))
            kinds.append(j)
    if emit and lay.hi[-1] > lay.lo[-1]:
        blocks.append(np.array([lay.dim - 1]))
        kinds.append(None)
    return blocks, kinds


def structures(n_kinds: int, max_components: int) -> np.ndarray:
    """(G, n_kinds) bool: every set of 1..``max_components`` active kinds (the prior's
    structures; STARK Appendix 7.3 draws ``k`` uniformly, then a uniform ``k``-subset)."""
    out = []
    for k in range(1, max_components + 1):
        for c in combinations(range(n_kinds), k):
            m = np.zeros(n_kinds, bool)
            m[list(c)] = True
            out.append(m)
    return np.array(out)


def _logmeanexp(x: np.ndarray) -> float:
    m = np.max(x) if len(x) else -np.inf
    return float(m + np.log(np.mean(np.exp(x - m)))) if np.isfinite(m) else -np.inf


def _next_eps(w: np.ndarray, v: np.ndarray, eps: float, keep: float = 0.5) -> float:
    """The smallest tolerance keeping ``keep`` of the effective sample size of weights ``w``
    (violations ``v``); strictly below ``eps`` when some particle allows it."""
    live = w > 0
    if np.all(v[live] <= 0):
        return 0.0
    ess0 = w.sum() ** 2 / (w ** 2).sum()
    cand = np.unique(np.concatenate([[0.0], v[live & (v > 0)]]))
    lo_i, hi_i = 0, len(cand) - 1
    while lo_i < hi_i:
        mid = (lo_i + hi_i) // 2
        wm = w * (v <= cand[mid])
        if wm.sum() ** 2 / max((wm ** 2).sum(), 1e-300) >= keep * ess0:
            hi_i = mid
        else:
            lo_i = mid + 1
    new = cand[lo_i]
    if np.isfinite(eps) and new > 0.9 * eps:
        # slow progress (the population hugs the tolerance): keep only the particles nearest
        # the readings (a few percent) and let the MH moves rebuild the diversity
        vs = np.sort(np.maximum(v[live], 0.0))
        new = min(new, float(vs[min(len(vs) - 1, max(4, int(0.03 * len(v))))]))
    if new >= eps:  # duplicates after resampling: force progress
        below = v[live & (v < eps)]
        new = max(below.max(), 0.0) if len(below) else eps
    return float(new)


def reading_jacobians(r: Readings, dx: np.ndarray, dy: np.ndarray, d: np.ndarray) -> list:
    """The linearised readings of one step at positions ``(dx, dy)`` (N, m) from its m sensors
    (plane units), ``d`` (N, m) their distances: a list of ``(dh/dpos (N, m, 2), dh/d(emission
    time), variance (N, m))``, one per reading kind of ``r.modality``.  Variance of bounded
    uniform noise of half-width ``a`` plus the print rounding ``h``: ``(a^2 + h^2) / 3`` (the
    Gaussian of equal variance); range relative (``a = sigma d``), bearing in radians, ToA in
    seconds (``dh/dpos = unit vector / speed``, ``dh/demit = 1``); proximity (no reading to
    differentiate): the distance to each sensor with sd 1 % of the disk radius.  Used by
    :func:`gauss_newton_chol` and :func:`posterior_crlb` (which refuses proximity)."""
    parts = []
    if r.modality in ("range", "range_bearing"):
        parts.append((np.stack([dx / d, dy / d], -1), 0.0, ((r.range_sigma * d) ** 2 + ROUNDING ** 2) / 3))
    if r.modality in ("bearing", "range_bearing"):
        parts.append((np.stack([-dy / d ** 2, dx / d ** 2], -1), 0.0,
                      np.full(d.shape, (r.bearing_half ** 2 + np.radians(ROUNDING) ** 2) / 3)))
    if r.modality == "toa":
        parts.append((np.stack([dx / d, dy / d], -1) / r.speed, 1.0,
                      np.full(d.shape, (r.toa_half ** 2 + ROUNDING ** 2) / 3)))
    if r.modality == "proximity":
        parts.append((np.stack([dx / d, dy / d], -1), 0.0, np.full(d.shape, (0.01 * r.radius) ** 2)))
    return parts


def gauss_newton_chol(r: Readings, lay: PriorLayout, u: np.ndarray, mask: np.ndarray,
                      t_rel: np.ndarray, dims: np.ndarray, widen: np.ndarray, domain=(0.0, 10.0),
                      delta: float = 1e-5, prior_precision: float = 12.0) -> np.ndarray:
    """Cholesky factors (R, p, p) of the Gauss-Newton (Fisher-metric) posterior covariance
    ``(J^T W J + prior_precision I)^-1`` in the coordinates ``dims`` (p,) of ``u``, at each of
    R points ``u`` (R, dim) with structures ``mask`` (R, 5).

    ``J`` stacks the derivatives of every reading of steps ``k < len(widen)`` (range, bearing,
    ToA; proximity: of the distance to each sensor, in units of the disk radius' 1 %) with
    respect to ``u[dims]`` (central differences, ``delta`` in ``u`` units); ``W`` is the
    inverse of the variance of each reading's bounded noise and print rounding, ``(a^2 +
    h^2) / 3`` (the Gaussian of equal variance, as :func:`posterior_crlb`), widened by
    ``widen[k]`` (noise bounds; ``inf``: step ``k`` left out).  ``prior_precision`` 12: the
    uniform prior's variance 1/12 per coordinate.  Such a covariance is long along the thin
    tube of parameters that keep every reading within its bound and short across it (the
    metric of Girolami & Calderhead 2011, here frozen at a few population members)."""
    R, p = len(u), len(dims)
    K = len(widen)
    U = np.repeat(u, 2 * p + 1, axis=0).reshape(R, 2 * p + 1, -1)
    for j, c in enumerate(dims):
        U[:, 1 + j, c] += delta
        U[:, 1 + p + j, c] -= delta
    M = np.repeat(mask, 2 * p + 1, axis=0)
    P = trajectories(lay, U.reshape(R * (2 * p + 1), -1), M, t_rel, domain)[:, :K]
    P = P.reshape(R, 2 * p + 1, K, 2)
    pos = P[:, 0]                                                  # (R, K, 2)
    D = np.moveaxis((P[:, 1:1 + p] - P[:, 1 + p:]) / (2 * delta), 1, -1)   # (R, K, 2, p)
    dE = np.zeros(p)
    if lay.emit is not None and (dims == lay.dim - 1).any():
        dE[int(np.flatnonzero(dims == lay.dim - 1)[0])] = lay.hi[-1] - lay.lo[-1]
    info = np.broadcast_to(prior_precision * np.eye(p), (R, p, p)).copy()
    s = r.sensors
    for k in range(K):
        ok = np.isfinite(r.z[k][:, 0])
        if not ok.any() or not np.isfinite(widen[k]):
            continue
        dx = pos[:, k, None, 0] - s[None, ok, 0]
        dy = pos[:, k, None, 1] - s[None, ok, 1]
        d = np.maximum(np.hypot(dx, dy), 1e-9)
        for jp, je, var in reading_jacobians(r, dx, dy, d):
            H = np.einsum("rmc,rcp->rmp", jp, D[:, k]) + je * dE
            info += np.einsum("rmp,rmq,rm->rpq", H, H, 1.0 / (var * widen[k] ** 2))
    cov = np.linalg.inv(info)
    cov = 0.5 * (cov + np.swapaxes(cov, 1, 2))
    return np.linalg.cholesky(cov + 1e-12 * np.eye(p))


def metric_proposal(x: np.ndarray, Ls: np.ndarray, scale: float, periodic: np.ndarray,
                    rng: np.random.Generator, spread: tuple[float, float] = (-1.5, 0.3)) -> np.ndarray:
    """Random-walk proposals ``x' = x + scale m L_c z`` for the rows of ``x`` (n, p): ``c``
    uniform among the R frozen factors ``Ls`` (R, p, p) (e.g. :func:`gauss_newton_chol` at a
    few population members), ``m = 10^U(spread)`` (a mixture of step sizes), ``z`` standard
    normal; ``periodic`` (p,) coordinates wrapped into [0, 1).  ``c``, ``m`` and ``z`` are drawn
    independently of ``x`` and the factors stay fixed during the step, so the proposal is a
    mixture of symmetric kernels, ``q(x' | x) = q(x | x')``: the Metropolis ratio is the
    target ratio alone (no Hastings correction).  Returns (n, p)."""
    n, p = x.shape
    c = rng.integers(len(Ls), size=n)
    m = 10.0 ** rng.uniform(*spread, size=(n, 1))
    out = x + scale * m * np.einsum("npq,nq->np", Ls[c], rng.normal(size=(n, p)))
    out[:, periodic] %= 1.0
    return out


def smc_posterior(r: Readings, t_rel: np.ndarray, n_steps_scored: int, *, ranges=None,
                  max_components: int = 3, emit_range: tuple[float, float] | None = None,
                  n_particles: int = 2000, n_moves: int = 2, seed: int = 0,
                  domain=(0.0, 10.0), max_levels: int = 80, max_sweeps: int = 12,
                  target_moved: float = 0.9, min_accepted: int = 3,
                  prune_nats: float = 30.0, ess_keep: float = 0.5,
                  restarts: bool = True, stall_window: int = 3, stall_drop: float = 0.1,
                  restart_share: float = 0.125, backtrack: tuple[int, ...] = (),
                  gn_moves: bool = False, gn_points: int = 8, revive: bool = False,
                  broad_sd: float | None = None, broad_max: float = 4.0,
                  min_per_structure: int = 20, on_step=None) -> SMCResult:
    """Posterior means of steps ``0..n_steps_scored-1`` (see the module docstring).

    One SMC sampler per prior structure (set of active kinds), run side by side in one array
    and combined by their evidence: the posterior is ``sum_g pi(g) Z_g p_g(x | data) / sum``
    with ``Z_g`` the structure's marginal likelihood, estimated by the product of its mean
    incremental weights (Del Moral, Doucet & Jasra 2006, eq. 14).  A structure is dropped when
    an upper bound of its posterior weight (its evidence at the current tolerance, which can
    only fall as the tolerance does) is ``prune_nats`` below the best structure that reached
    the exact posterior.

    Args:
        r: the task's readings (:class:`Readings`), one row per step of the whole trajectory.
        t_rel: (n,) times relative to the first step (``linspace(0, duration, n_steps)``).
        ranges: basis-motion parameter ranges (default :data:`STARK_RELEASE_RANGES`).
        emit_range: ``emit_time_range`` of an event family (first emission time), else None.
        n_particles: total particles, split evenly over the structures (at least 20 each).
        n_moves: least number of MH sweeps after each resampling (a sweep: one joint move with
            the structure's particle covariance, one random-walk block per active kind).
        max_sweeps, target_moved, min_accepted: sweeps continue until ``target_moved`` of the
            moved particles have accepted at least ``min_accepted`` moves since the resampling
            (the resampled duplicates have separated) or ``max_sweeps`` is reached.
        max_levels: tolerance levels allowed per step.
        prune_nats: a structure whose posterior weight is provably below
            ``exp(-prune_nats)`` times the best converged one's is dropped.
        restarts, stall_window, stall_drop, restart_share: a structure whose tolerance falls
            by less than ``stall_drop`` (relative) over ``stall_window`` levels has stalled: its
            particles sit in a mode the new readings rule out.  It is restarted from the prior
            (with at least ``restart_share * n_particles`` particles) and run over the readings
            of steps ``0..t`` at once, an ABC-SMC from the prior, which re-estimates its
            evidence; if it stalls again it is abandoned (e.g. a lone linear motion, whose
            normalised path is one of four diagonals).  Counted in :attr:`SMCResult.restarts`
            and :attr:`SMCResult.abandoned`.
        backtrack: before the restart from the prior, go back ``b`` steps for each ``b``
            (e.g. ``(3, 7)``): restart from the structure's saved posterior after step
            ``t - b`` and run over steps ``t-b+1..t`` at once (cheaper and nearer the target
            than the prior; off by default: not measured enough to be the reference).
        ess_keep: fraction of a structure's effective sample size each tolerance level keeps.
        gn_moves, gn_points: add to each sweep a random walk with the Gauss-Newton
            covariance (:func:`gauss_newton_chol`, :func:`metric_proposal`) of one of
            ``gn_points`` population members drawn per structure and level: long along the
            tube of parameters that keep every reading within its bound, short across it.
        revive: when every structure left has been abandoned or none reached tolerance 0
            within the level budget, restart the structures pruned or abandoned earlier, once
            per step: each from its last saved posterior, then (if that stalls) from the
            prior; a revived structure is not abandoned once within one noise bound of the
            readings (it runs to tolerance 0 or the level budget).  Counted in
            :attr:`SMCResult.revived`; a run that would not have been lost is unchanged.
        broad_sd, broad_max: more particles where the posterior is broad, since the
            Monte-Carlo error of a posterior mean grows with the posterior's spread: step 0
            with ``broad_max`` times ``n_particles`` (and restarts with as many more), each
            later step with ``clip(sd / broad_sd, 1, broad_max)`` times, ``sd`` the posterior
            standard deviation (plane units) of the step before; None: ``n_particles``
            throughout.
        min_per_structure: least particles per structure at the start and after each step's
            share-out (the limit's 20; a budgeted tracker may go lower).
        on_step: called after each step ``t`` as ``on_step(t, pos (2,), pos_var, emit, emit_var)``
            (``emit``/``emit_var`` None without ``emit_range``): the answers of the steps done
            before a later step raises (a tracker keeps them and answers the rest otherwise).
    Returns: :class:`SMCResult` (``ess``: the effective sample size of the combined weights).
    Raises: :class:`NotConverged` when no structure reaches tolerance 0 within ``max_levels``
        levels (structures that do not, while others do, are dropped and bounded in
        :attr:`SMCResult.dropped`); ValueError when no particle is consistent with the readings.
    """
    rng = np.random.default_rng(seed)
    lay = PriorLayout(STARK_RELEASE_RANGES if ranges is None else ranges, emit=emit_range)
    nk = len(lay.kinds)
    S = structures(nk, max_components)
    G = len(S)
    ng = max(n_particles // G, min_per_structure)
    # more particles where the step's posterior is broad (its Monte-Carlo error is largest
    # there): step 0 with ``broad_max`` times the particles, later steps in proportion to the
    # posterior standard deviation of the step before (``broad_sd`` plane units = 1x)
    grow = 1.0 if broad_sd is None else float(broad_max)
    log_pg = _log_struct_prior(S, max_components, nk)          # (G,)
    restart_particles = max(ng, int(restart_share * n_particles))
    # phases and headings spanning a full turn enter only through cos/sin: their u is periodic
    periodic = np.array([n_ in ("phase", "theta") and np.isclose(lay.hi[i] - lay.lo[i], 2 * np.pi)
                         for kind in lay.kinds for n_, i in zip(lay.names[kind], range(lay.slices[kind].start,
                                                                                         lay.slices[kind].stop))]
                        + ([False] if emit_range is not None else []))
    grp = np.repeat(np.arange(G), int(round(ng * grow)))
    mask = S[grp]
    N = G * ng                 # the base population (before ``grow``)
    offsets = [i for kind in lay.kinds for nm, i in zip(lay.names[kind], range(lay.slices[kind].start,
                                                                                lay.slices[kind].stop))
               if nm in OFFSETS]

    def prior_u(n_):
        """(n_, dim) prior draws; offsets do not change a normalised trajectory: fixed mid-point."""
        v = rng.random((n_, lay.dim))
        v[:, offsets] = 0.5
        return v
    u = prior_u(len(grp))
    blocks, block_kind = _move_blocks(lay, emit_range is not None)
    scale = [1.0] * len(blocks)
    js = {"joint": 1.0, "acc": 0.0, "n": 0, "gn": 1.0, "gacc": 0.0, "gn_n": 0}
    logZ = np.zeros(G)
    logw = np.zeros(len(grp))
    lt = np.zeros(len(grp))          # data log density so far (within a structure the prior is flat)
    abandoned = 0
    restarts_done = [0]
    saved = {}                         # step -> {structure: (particles, log evidence)}
    closest = [np.inf]                 # smallest tolerance at which a structure was abandoned
    dropped = 0.0
    gone = set()                       # structures pruned or abandoned (may be revived)
    revivals = [0]

    def evaluate(u_, mask_, t, eps_, start_=None):
        """(log target up to a constant, violation) at step t, tolerances eps_ (n,): the
        readings of steps ``start_..t`` within eps_ (default: step t alone), the earlier ones
        exact; the violation is the largest over steps ``start_..t``."""
        pos = trajectories(lay, u_, mask_, t_rel, domain)
        emit = None if emit_range is None else lay.physical(u_)[:, -1][:, None] + t_rel[None, :]
        vm, ld = step_violations(r, pos, emit, t + 1)
        held = np.arange(t + 1)[None, :] >= (t if start_ is None else start_[:, None])
        lim = np.where(held, eps_[:, None], 0.0)
        vmax_t = np.maximum(np.where(held, vm, -np.inf).max(axis=1), 0.0)
        lt_ = np.where(vm <= lim, ld, -np.inf).sum(axis=1)
        return lt_, vmax_t

    def move(u, mask, lt, vmax, g_of, eps_, chol, t, start_):
        """MH sweeps on a subset (arrays modified in place) targeting (step t, eps_)."""
        n = len(u)
        moved = np.zeros(n, int)
        keys = np.unique(g_of)
        members = {g: g_of == g for g in keys}

        def mh(prop, valid, real):
            rows = np.flatnonzero(valid)   # evaluate only the proposals that can be accepted
            a = np.zeros(n, bool)
            if len(rows):
                lp, vp = evaluate(prop[rows], mask[rows], t, eps_[rows], start_[rows])
                ok = np.log(rng.random(len(rows))) < lp - lt[rows]
                acc = rows[ok]
                u[acc], lt[acc], vmax[acc] = prop[acc], lp[ok], vp[ok]
                a[acc] = True
            moved[a & real] += 1
            return a

        def scaled_move(prop, scale, acc, count):
            """MH on the proposals ``prop`` that stay in the unit cube; the step size
            ``js[scale]`` adapted towards an acceptance rate of 0.15-0.3."""
            inside = np.all((prop >= 0) & (prop <= 1), axis=1) & np.any(prop != u, axis=1)
            a = mh(prop, inside, True)
            if inside.any():
                rate = a[inside].mean()
                js[scale] = float(np.clip(js[scale] * (1.2 if rate > 0.3 else (0.8 if rate < 0.15 else 1.0)),
                                          0.01, 3.0))
                js[acc] += rate
                js[count] += 1
        gnL = {}
        if gn_moves:
            for g in keys:
                if g not in chol:
                    continue
                dims = chol[g][0]
                rows_g = np.flatnonzero(members[g])
                pick = rows_g[rng.choice(len(rows_g), size=min(gn_points, len(rows_g)), replace=False)]
                e0, s0 = eps_[pick[0]], start_[pick[0]]
                widen = np.where(np.arange(t + 1) < s0, 1.0, 1.0 + e0)
                gnL[g] = (dims, gauss_newton_chol(r, lay, u[pick], mask[pick], t_rel, dims, widen, domain))
        for sweep in range(max_sweeps):
            prop = u.copy()
            for g in keys:
                if g not in chol:
                    continue
                dims, L = chol[g]
                sel = members[g]
                mult = 10.0 ** rng.uniform(-1.5, 0.0, size=(sel.sum(), 1))
                step = rng.normal(size=(sel.sum(), len(dims))) @ L.T
                prop[np.ix_(sel, dims)] += js["joint"] * 2.38 / np.sqrt(len(dims)) * mult * step
            prop[:, periodic] %= 1.0   # angles: a random walk on the circle (still symmetric)
            scaled_move(prop, "joint", "acc", "n")
            if gn_moves:
                # random walk with the Gauss-Newton covariance of one of a few population
                # members (fixed during the sweep: a mixture of symmetric proposals)
                prop = u.copy()
                for g in keys:
                    if g not in gnL:
                        continue
                    dims, Ls = gnL[g]
                    rows_g = np.flatnonzero(members[g])
                    prop[np.ix_(rows_g, dims)] = metric_proposal(
                        u[np.ix_(rows_g, dims)], Ls, js["gn"] * 2.38 / np.sqrt(len(dims)), periodic[dims], rng)
                prop[:, periodic] %= 1.0
                scaled_move(prop, "gn", "gacc", "gn_n")
            for bi, b in enumerate(blocks):
                act = mask[:, block_kind[bi]] if block_kind[bi] is not None else np.ones(n, bool)
                if not act.any():
                    continue
                ref = u[act] if act.sum() > 1 else u
                sd = np.maximum(ref[:, b].std(axis=0), 1e-4) * scale[bi]
                mult = 10.0 ** rng.uniform(-1.5, 0.5, size=(n, 1))  # a mixture of scales
                prop = u.copy()
                prop[:, b] += rng.normal(size=(n, len(b))) * sd * mult
                prop[:, periodic] %= 1.0
                inside = act & np.all((prop[:, b] >= 0) & (prop[:, b] <= 1), axis=1)
                a = mh(prop, inside, act)
                rate = a[act].mean()
                scale[bi] = float(np.clip(scale[bi] * (1.2 if rate > 0.3 else (0.8 if rate < 0.15 else 1.0)),
                                          0.01, 3.0))
            if sweep + 1 >= n_moves and np.mean(moved >= min_accepted) >= target_moved:
                break
        return sweep + 1, moved

    n = n_steps_scored
    out_pos, out_var = np.empty((n, 2)), np.empty(n)
    out_emit = np.empty(n) if emit_range is not None else None
    out_evar = np.empty(n) if emit_range is not None else None
    ess_hist, levels = np.empty(n), np.zeros(n, int)
    out_wS, out_gpos = np.zeros((n, G)), np.full((n, G, 2), np.nan)
    for t in range(n):
        lt_new, vmax = evaluate(u, mask, t, np.full(len(u), np.inf))
        finite = np.isfinite(lt)
        logw = np.where(finite, logw + lt_new - np.where(finite, lt, 0.0), -np.inf)
        lt = lt_new
        live = np.unique(grp)
        eps = np.full(G, np.inf)
        start = np.full(G, t)           # first step held to the tolerance, per structure
        nrest = np.zeros(G, int)        # restarts at this step
        patient = np.zeros(G, bool)     # revived: not abandoned once within one noise bound
        hist = {g: [] for g in live}    # each structure's tolerances at this step

        def restart(g, s):
            """Go back to structure g's posterior after step ``s`` (its saved particles; the
            prior when ``s < 0``) and run its tolerance levels over the readings of steps
            ``s+1..t`` at once (ABC-SMC from there): its evidence continues from the one
            saved with those particles.  It gets at least ``restart_particles`` particles."""
            nonlocal u, mask, grp, lt, vmax, logw
            sel_ = np.flatnonzero(grp == g)
            extra = max(int(round(restart_particles * grow)) - len(sel_), 0)
            if extra:   # a structure of small weight holds few particles: more for the search
                u = np.concatenate([u, np.repeat(u[sel_[:1]] if len(sel_) else prior_u(1), extra, axis=0)])
                mask = np.concatenate([mask, np.repeat(S[g][None], extra, axis=0)])
                grp = np.concatenate([grp, np.full(extra, g)])
                lt, vmax, logw = (np.concatenate([a, np.zeros(extra)]) for a in (lt, vmax, logw))
                sel_ = np.flatnonzero(grp == g)
            m_ = len(sel_)
            if s < 0:
                u[sel_] = prior_u(m_)
                base, logZ[g] = np.zeros(m_), 0.0
            else:
                us, logZ[g] = saved[s][g]
                u[sel_] = us[systematic_resample(np.full(len(us), 1.0 / len(us)), rng, m_)]
                base, _ = evaluate(u[sel_], mask[sel_], s, np.zeros(m_))   # log target at step s
            start[g] = s + 1
            lt[sel_], vmax[sel_] = evaluate(u[sel_], mask[sel_], t, np.full(m_, np.inf),
                                            np.full(m_, s + 1))
            logw[sel_] = lt[sel_] - base
            eps[g] = np.inf
            hist[g] = []
        level, budget = 0, max_levels
        revived_now = False
        while True:
            while level < budget:
                for g in live:
                    if eps[g] <= 0:
                        continue
                    sel = grp == g
                    lw = logw[sel]
                    if not np.isfinite(lw).any():
                        eps[g] = 0.0
                        continue
                    new = _next_eps(np.exp(lw - lw.max()), vmax[sel], eps[g], ess_keep)
                    if new < eps[g]:
                        kill = sel & (vmax > new)
                        logw[kill] = -np.inf
                        lt[kill] = -np.inf
                        eps[g] = new
                    hist[g].append(eps[g])
                    h = hist[g]
                    if (eps[g] > 0 and len(h) > stall_window
                            and h[-1] > (1.0 - stall_drop) * h[-1 - stall_window]
                            and not (patient[g] and eps[g] < 1.0)):
                        # the tolerance has stopped falling: the particles sit where the new
                        # readings cannot be met, and the region that meets them holds none
                        name = "+".join(k for k, a in zip(lay.kinds, S[g]) if a)
                        # go back further each time (``backtrack`` steps), then to the prior
                        back = [s_ for s_ in (t - b_ for b_ in backtrack)
                                if 0 <= s_ < start[g] - 1 and s_ in saved] + [-1]
                        if restarts and (start[g] > 0 or nrest[g] == 0):
                            s_ = back[0]
                            nrest[g] += 1
                            if _DEBUG:
                                print(f"  t={t} restart {name} at eps {eps[g]:.3g} from step {s_}")
                            restart(g, s_)
                            restarts_done[0] += 1
                            budget = max(budget, level + 1 + max_levels)
                        else:
                            # stalled again from the prior: no trajectory of this structure the
                            # sampler finds meets the readings (e.g. a lone linear motion, a
                            # diagonal once normalised); its closest approach is recorded
                            closest[0] = min(closest[0], float(h[-1]))
                            logw[sel] = -np.inf
                            lt[sel] = -np.inf
                            eps[g] = 0.0
                            abandoned += 1
                            gone.add(g)
                            if _DEBUG:
                                print(f"  t={t} abandoned {name} at eps {h[-1]:.3g}")
                # resample-move the structures still above tolerance 0 or degenerate
                todo, chol = [], {}
                for g in live:
                    sel = np.flatnonzero(grp == g)
                    lw = logw[sel]
                    if not np.isfinite(lw).any():
                        continue
                    w = np.exp(lw - lw.max())
                    w /= w.sum()
                    if eps[g] <= 0 and 1.0 / (w ** 2).sum() >= 0.5 * len(sel):
                        continue
                    dims = np.concatenate([blocks[i] for i, kd in enumerate(block_kind)
                                           if kd is None or S[g][kd]])
                    C = np.atleast_2d(np.cov(u[np.ix_(sel, dims)], rowvar=False, aweights=w + 1e-12))
                    if not np.all(np.isfinite(C)):
                        C = np.eye(len(dims)) * 1e-4
                    C = C + np.diag(np.maximum(np.diag(C) * 1e-3, 1e-10))
                    chol[g] = (dims, np.linalg.cholesky(C))
                    logZ[g] += _logmeanexp(lw)
                    idx = sel[systematic_resample(w, rng)]
                    u[sel], lt[sel], vmax[sel] = u[idx], lt[idx], vmax[idx]
                    logw[sel] = 0.0
                    todo.append(g)
                if todo:
                    M = np.isin(grp, todo)
                    um, lm, vm_ = u[M], lt[M], vmax[M]
                    sweeps, moved = move(um, mask[M], lm, vm_, grp[M], eps[grp[M]], chol, t, start[grp[M]])
                    u[M], lt[M], vmax[M] = um, lm, vm_
                    if _DEBUG:
                        print(f"  t={t} groups={len(live)} todo={len(todo)} eps max={eps[todo].max():.3g} "
                              f"sweeps={sweeps} moved>={min_accepted}: {np.mean(moved >= min_accepted):.2f} "
                              f"joint={js['joint']:.2f} gn={js['gn']:.2f} "
                              f"gn acc={js['gacc'] / max(js['gn_n'], 1):.2f} joint acc={js['acc'] / max(js['n'], 1):.2f}")
                # structures that provably cannot matter any more
                ub = np.full(G, -np.inf)
                for g in live:
                    sel = grp == g
                    ub[g] = log_pg[g] + logZ[g] + _logmeanexp(logw[sel])
                conv = [g for g in live if eps[g] <= 0 and np.isfinite(ub[g])]
                if conv:
                    best = max(ub[g] for g in conv)
                    # only structures whose evidence estimate can be trusted: converged, or
                    # restarted from the prior at this step (a structure still above tolerance 0
                    # may sit in a wrong mode, its evidence far too low: range+bearing task 5
                    # lost its true structure so at step 3)
                    drop = [g for g in live if ub[g] < best - prune_nats and (eps[g] <= 0 or start[g] == 0)]
                    if drop and _DEBUG:
                        print(f"  t={t} prune {drop}: ub {np.round(ub[drop] - best, 1)} eps {eps[drop]}")
                    if drop:
                        gone.update(drop)
                        keep = ~np.isin(grp, drop)
                        u, mask, grp, lt, vmax, logw = (u[keep], mask[keep], grp[keep], lt[keep],
                                                        vmax[keep], logw[keep])
                        live = np.unique(grp)
                if not len(live):
                    break
                levels[t] += 1
                level += 1
                if np.all(eps[live] <= 0):
                    break
            # every structure left was abandoned, or none reached tolerance 0: the ones pruned
            # or abandoned earlier (their evidence estimate may have been far too low, or the
            # restart missed a narrow mode) get one more restart from the prior
            ok_now = [g for g in live if eps[g] <= 0 and np.isfinite(logw[grp == g]).any()]
            back_g = sorted(g for g in gone if g not in ok_now)
            if ok_now or revived_now or not revive or not back_g:
                break
            revived_now = True
            for g in back_g:
                # from its last saved posterior (then, if that stalls, from the prior)
                s_ = max((k for k in saved if g in saved[k]), default=-1)
                if _DEBUG:
                    print(f"  t={t} revive {'+'.join(k for k, a in zip(lay.kinds, S[g]) if a)} "
                          f"from step {s_}")
                restart(g, s_)
                nrest[g] = int(s_ < 0)
                patient[g] = True
                gone.discard(g)
                revivals[0] += 1
            live = np.unique(grp)
            budget = level + max_levels
        if not len(live):
            raise ValueError(f"step {t}: no particle consistent with the readings")
        if not np.all(eps[live] <= 0):
            bad = [g for g in live if eps[g] > 0]
            conv = [g for g in live if eps[g] <= 0 and np.isfinite(ub[g])]
            if not conv:
                raise NotConverged(f"step {t}: tolerance still {max(eps[bad]):.3g} noise bounds after "
                                   f"{level} levels for {len(bad)} structure(s) and none reached "
                                   f"0 (the particles lost the posterior's support)")
            # drop the structures that did not reach the exact posterior; their evidence at
            # their last tolerance bounds their share of the posterior from above
            top = max(ub[conv].max(), ub[bad].max())
            zc, zb = np.exp(ub[conv] - top).sum(), np.exp(ub[bad] - top).sum()
            dropped = max(dropped, float(zb / (zc + zb)))
            keep_p = ~np.isin(grp, bad)
            u, mask, grp, lt, vmax, logw = (u[keep_p], mask[keep_p], grp[keep_p], lt[keep_p],
                                            vmax[keep_p], logw[keep_p])
        size = np.bincount(grp, minlength=G)
        if _DEBUG:
            print(f"step {t} done: structures " + ", ".join(
                "+".join(k[:3] for k, a in zip(lay.kinds, S[g]) if a) + f"({eps[g]:.2g})"
                for g in np.unique(grp)) + f"; abandoned so far {abandoned}")
        gl = log_pg[grp] + logZ[grp] + logw - np.log(np.maximum(size[grp], 1))
        if not np.isfinite(gl).any():
            raise ValueError(f"step {t}: no particle consistent with the readings")
        w = np.exp(gl - gl.max())
        w /= w.sum()
        pos = trajectories(lay, u, mask, t_rel, domain)[:, t]
        ess_hist[t] = 1.0 / (w ** 2).sum()
        m = w @ pos
        out_pos[t] = m
        out_var[t] = float(w @ np.sum((pos - m) ** 2, axis=1))
        if emit_range is not None:
            e = lay.physical(u)[:, -1] + t_rel[t]
            out_emit[t] = float(w @ e)
            out_evar[t] = float(w @ (e - out_emit[t]) ** 2)
        if on_step is not None:
            on_step(t, out_pos[t].copy(), float(out_var[t]),
                    None if out_emit is None else float(out_emit[t]),
                    None if out_evar is None else float(out_evar[t]))
        # share the particles out again, in proportion to each structure's posterior weight
        # (at least ``ng`` each, so a structure of small weight can still grow): resampled
        # within the structure, then moved on this step's exact posterior; the total stays
        # about n_particles
        wS = np.bincount(grp, weights=w, minlength=G)
        out_wS[t] = wS
        for g in np.flatnonzero(wS > 0):
            out_gpos[t, g] = (w[grp == g] @ pos[grp == g]) / wS[g]
        live = np.array([g for g in np.unique(grp) if wS[g] > 0 and np.isfinite(logw[grp == g]).any()])
        if broad_sd is not None:
            grow = float(np.clip(np.sqrt(out_var[t]) / broad_sd, 1.0, broad_max))
        ng_t = int(round(ng * grow))
        spare = max(int(round(N * grow)) - ng_t * len(live), 0)
        alloc = {g: ng_t + int(round(spare * wS[g] / wS[live].sum())) for g in live}
        if t + 1 < n:
            parts, chol = [], {}
            for g in live:
                sel = np.flatnonzero(grp == g)
                lw = logw[sel]
                wg = np.exp(lw - lw.max())
                wg /= wg.sum()
                dims = np.concatenate([blocks[i] for i, kd in enumerate(block_kind)
                                       if kd is None or S[g][kd]])
                C = np.atleast_2d(np.cov(u[np.ix_(sel, dims)], rowvar=False, aweights=wg + 1e-12))
                if not np.all(np.isfinite(C)):
                    C = np.eye(len(dims)) * 1e-4
                chol[g] = (dims, np.linalg.cholesky(C + np.diag(np.maximum(np.diag(C) * 1e-3, 1e-10))))
                logZ[g] += _logmeanexp(lw)
                parts.append(sel[systematic_resample(wg, rng, alloc[g])])
            idx = np.concatenate(parts)
            u, mask, grp, lt, vmax = u[idx], mask[idx], grp[idx], lt[idx], vmax[idx]
            logw = np.zeros(len(idx))
            move(u, mask, lt, vmax, grp, np.zeros(len(idx)), chol, t, np.full(len(idx), t))
            # this step's exact posterior of each structure, equally weighted, and its evidence:
            # where a structure that stalls later goes back to
            saved[t] = {g: (u[grp == g].copy(), float(logZ[g])) for g in live}
    return SMCResult(out_pos, out_emit, out_var, out_evar, ess_hist, levels,
                     js["acc"] / max(js["n"], 1), abandoned, dropped, restarts_done[0], closest[0],
                     out_wS, out_gpos, revivals[0])


def task_readings(task) -> Readings:
    """A tier-1 tracking task's inputs as :class:`Readings` (uniform Table 7 noise only).

    Raises: ValueError for Gaussian noise or an unknown modality."""
    from ..sim.readings import readings_to_array
    inp = task.inputs
    m = inp["modality"]
    z = readings_to_array(inp["readings"], pairs=m == "range_bearing", stepped=True)
    z = z if z.ndim == 3 else z[:, :, None]
    sm = inp.get("sensor_model", {})
    kw = {}
    for part in ([sm.get("range", {}), sm.get("bearing", {})] if m == "range_bearing" else [sm]):
        for key in ("noise", "noise_rad"):
            nd = part.get(key)
            if nd and nd.get("kind") == "gaussian":
                raise ValueError(f"{task.id}: Gaussian noise is not supported (bounded noise only)")
        if part.get("modality") == "range" or m == "range":
            kw["range_sigma"] = float((part.get("noise") or {}).get("sigma", 0.01))
        if part.get("modality") == "bearing" or m == "bearing":
            kw["bearing_half"] = float((part.get("noise_rad") or {}).get("half_width", 2 * np.pi * 0.01))
    if m == "toa":
        kw["toa_half"] = float((sm.get("noise") or {}).get("half_width", 0.01))
        kw["speed"] = float(inp["wave_speed"])
    if m == "proximity":
        kw["radius"] = float(inp["radius"])
    if m not in ("range", "bearing", "range_bearing", "proximity", "toa"):
        raise ValueError(f"{task.id}: unknown modality {m!r}")
    return Readings(m, np.asarray(inp["sensors"], float), z, **kw)


def task_posterior(task, n_steps: int = 10, n_particles: int = 2000, n_moves: int = 2,
                   seed: int = 0, max_levels: int = 80, **kw) -> SMCResult:
    """:func:`smc_posterior` of a generated tier-1 tracking task, with the prior read from the
    family config the task was generated with (``task.meta["config"]``: ``n_steps``,
    ``duration``, ``max_components``, ``emit_time_range``, ``motion_ranges``: the parameter
    table, :data:`stsim.sim.motion.MOTION_RANGES`); ``kw`` go to :func:`smc_posterior`.
    The reference settings are on unless ``kw`` says otherwise: ``revive=True`` (a run is
    lost only when the pruned and abandoned structures fail again; it changes nothing in a
    run that converges) and, for range and range+bearing readings (the families it was
    measured on, docs/stark-tier1.md), ``broad_sd=0.3`` (up to 4x the particles on steps
    whose posterior is broad); for range+bearing also ``gn_moves=True`` (measured there:
    fewer lost runs and closer runs at 1.4x the cost; not measured on range over 20 tasks)."""
    from ..sim.motion import MOTION_RANGES
    from .prior_motion import prior_config
    cfg = prior_config(task)
    kw.setdefault("ranges", MOTION_RANGES[cfg["motion_ranges"]])
    kw.setdefault("revive", True)
    if task.inputs["modality"] in ("range", "range_bearing"):
        kw.setdefault("broad_sd", 0.3)
    if task.inputs["modality"] == "range_bearing":
        kw.setdefault("gn_moves", True)
    t_rel = np.linspace(0.0, float(cfg["duration"]), int(cfg["n_steps"]))
    emit = tuple(cfg["emit_time_range"]) if task.inputs["modality"] == "toa" else None
    return smc_posterior(task_readings(task), t_rel, min(n_steps, len(t_rel)),
                         max_components=int(cfg["max_components"]), emit_range=emit,
                         n_particles=n_particles, n_moves=n_moves, seed=seed,
                         max_levels=max_levels, **kw)


def posterior_crlb(task, n_steps: int = 10, n_draws: int = 200, seed: int = 0, delta: float = 1e-6):
    """Indicative Bayesian (posterior) Cramér-Rao bounds of a tracking task's step answers.

    What is computed, per step ``t < n_steps`` (readings of steps ``0..t`` at the task's own
    sensors and dropout pattern):

    * the prior's structure (set of active basis motions) is given to the estimator (a genie:
      the bound can only fall), so the bound is ``sum_S P(S) B_S``;
    * ``B_S`` is the Bayesian CRB for a function ``g(u)`` of a random parameter (Van Trees
      1968, Part I eq. 2.288; Bell, Steinberg, Ephraim & Van Trees 1997; the filtering form
      of Tichavsky, Muravchik & Nehorai 1998 for a static state):
      ``E[(g^ - g)^2] >= tr(E[dg/du] J^-1 E[dg/du]^T)`` with the Bayesian information
      ``J = E_u[I_F(u)] + J_P``, expectations by Monte Carlo over ``n_draws`` prior draws;
      ``g`` is the step-``t`` position (plane units), the emission time (temporal family)
      or both (x-y-t); derivatives by central differences (``delta`` in ``u`` units);
    * ``I_F(u) = sum_k sum_r H_r^T H_r / R_r``: each reading linearised (range, bearing,
      ToA), with the bounded uniform noise and the print rounding replaced by the Gaussian
      of equal variance ``R = (a^2 + h^2) / 3`` (half-width ``a``, rounding half-unit
      ``h``; the information in a range's ``d``-dependent spread is left out);
    * ``J_P = 12 I``: the uniform prior of each ``u`` coordinate replaced by the Gaussian of
      equal variance (1/12).

    Both replacements break the regularity the bound needs (a uniform density has no
    finite Fisher information; bounded noise can be estimated faster than ``1/sqrt(n)``), so
    the value is indicative only, not a strict bound.  Proximity (binary detections: no
    Fisher information) raises ValueError.

    Returns: (n_steps,) the bound on the mean squared error (squared answer units: the
    squared Euclidean position error, squared time, or their sum for x-y-t).
    """
    from ..sim.motion import MOTION_RANGES
    from .prior_motion import prior_config
    cfg = prior_config(task)
    ranges = MOTION_RANGES[cfg["motion_ranges"]]
    t_rel = np.linspace(0.0, float(cfg["duration"]), int(cfg["n_steps"]))
    r = task_readings(task)
    if r.modality == "proximity":
        raise ValueError("proximity detections carry no Fisher information: no CRLB")
    emit_range = tuple(cfg["emit_time_range"]) if r.modality == "toa" else None
    lay = PriorLayout(ranges, emit=emit_range)
    T = min(n_steps, len(t_rel))
    kmax = int(cfg["max_components"])
    S = structures(len(lay.kinds), kmax)
    pS = np.exp(_log_struct_prior(S, kmax, len(lay.kinds)))
    rng = np.random.default_rng(seed)
    grp = np.repeat(np.arange(len(S)), n_draws)
    mask = S[grp]
    N = len(grp)
    u = rng.random((N, lay.dim))
    blocks, _ = _move_blocks(lay, emit_range is not None)
    dims = np.concatenate(blocks)                       # the coordinates that move a trajectory
    u[:, dims] = np.clip(u[:, dims], 2 * delta, 1 - 2 * delta)
    u[:, np.setdiff1d(np.arange(lay.dim), dims)] = 0.5
    p = len(dims)
    pos = trajectories(lay, u, mask, t_rel)[:, :T]      # (N, T, 2)
    D = np.zeros((N, T, 2, p))
    for j, c in enumerate(dims):
        up, um = u.copy(), u.copy()
        up[:, c] += delta
        um[:, c] -= delta
        D[:, :, :, j] = (trajectories(lay, up, mask, t_rel)[:, :T] - trajectories(lay, um, mask, t_rel)[:, :T]) / (2 * delta)
    dE = np.zeros((N, p))                               # d(emission time)/du (same every step)
    if emit_range is not None:
        last = int(np.flatnonzero(dims == lay.dim - 1)[0]) if (dims == lay.dim - 1).any() else None
        if last is not None:
            dE[:, last] = lay.hi[-1] - lay.lo[-1]
    info = np.zeros((N, p, p))
    bcrb = np.zeros(T)
    s = r.sensors
    for k in range(T):
        ok = np.isfinite(r.z[k][:, 0])
        if ok.any():
            dx = pos[:, k, None, 0] - s[None, ok, 0]
            dy = pos[:, k, None, 1] - s[None, ok, 1]
            d = np.maximum(np.hypot(dx, dy), 1e-9)
            for jp, je, R in reading_jacobians(r, dx, dy, d):
                H = np.einsum("nmc,ncp->nmp", jp, D[:, k]) + je * dE[:, None, :]
                info += np.einsum("nmp,nmq,nm->npq", H, H, 1.0 / R)
        if task.answer_format == "time":
            G = dE[:, None, :]
        elif task.answer_format == "vector":
            G = np.concatenate([D[:, k], dE[:, None, :]], axis=1)
        else:
            G = D[:, k]
        Jt = info + 12.0 * np.eye(p)
        for g in range(len(S)):
            rows = grp == g
            Gm = G[rows].mean(axis=0)
            bcrb[k] += pS[g] * float(np.trace(Gm @ np.linalg.solve(Jt[rows].mean(axis=0), Gm.T)))
    return bcrb
