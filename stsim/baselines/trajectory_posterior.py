"""The posterior mean of a tracking task under the generator's own trajectory prior and noise
model, by sequential Monte Carlo over the prior's parameters (a reference, not a user baseline).

Prior (STARK Appendix 7.3, :func:`stsim.sim.motion.random_trajectory`): ``k`` uniform in
``1..max_components`` basis motions, a uniform ``k``-subset of the five kinds, each kind's
parameters uniform in its range (:data:`~stsim.sim.motion.STARK_RELEASE_RANGES`; circular and
spiral angular rates with a random sign), summed at ``linspace(0, duration, n_steps)`` and
min-max normalised per axis into the domain over *all* steps.  Event families add the first
emission time, uniform in ``emit_time_range`` (the ``k``-th shot is fired at
``t_start + t_rel[k]``).  Noise: STARK Table 7 bounded uniform noise (range relative, bearing
and ToA absolute) widened by the print rounding (half a unit of the 4th decimal); proximity:
exact disk detections.  Under this prior and noise model the posterior mean of the step-``t``
answer given the readings of steps ``0..t`` minimises the expected squared error: no estimator
can do better on average over the generator.

Algorithm (an SMC sampler over a growing data set, Chopin 2002 "IBIS", with the bounded
likelihood of each new step reached through a decreasing tolerance as in adaptive ABC-SMC,
Del Moral, Doucet & Jasra 2012):

* a particle is a vector ``u`` of every kind's parameters mapped to ``[0, 1]`` plus a mask of
  active kinds (parameters of inactive kinds follow their prior, which makes kind birth/death
  a plain Metropolis-Hastings move on the extended space);
* step ``t`` enters with tolerance ``eps``: a reading is accepted when its violation of the
  noise bound, in units of that bound, is at most ``eps``; ``eps`` falls adaptively (each level
  keeps about half of the effective sample size) to 0, the exact posterior;
* after each level the particles are resampled (systematic) and moved by Metropolis-Hastings:
  one random-walk block per kind (scale from the particles' spread, adapted to the acceptance
  rate) and one kind-toggle move.

Failure modes: too few particles or moves leave the population degenerate (report the
effective sample size and compare independent runs); Gaussian noise is not supported (the
tolerance scheme needs bounded noise).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from math import comb

import numpy as np

from ..sim.motion import BASIS_MOTIONS, STARK_RELEASE_RANGES
from .geometry import wrap_pi

#: half a unit of the 4th printed decimal (readings are printed with 4 decimals).
ROUNDING = 5e-5
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


def trajectories(layout: PriorLayout, u: np.ndarray, mask: np.ndarray, t_rel: np.ndarray,
                 domain=(0.0, 10.0)) -> np.ndarray:
    """Normalised positions (N, n, 2) of N particles at relative times ``t_rel`` (n,), exactly
    as :func:`stsim.sim.motion.random_trajectory` builds them (sum, then per-axis min-max)."""
    P = layout.physical(u)
    t = t_rel[None, :]
    tot = np.zeros((len(u), len(t_rel), 2))
    for j, kind in enumerate(layout.kinds):
        if not mask[:, j].any():
            continue
        q = {n: P[:, i][:, None] for n, i in zip(layout.names[kind],
                                                 range(layout.slices[kind].start, layout.slices[kind].stop))}
        if kind == "linear":
            x, y = q["x0"] + q["vx"] * t, q["y0"] + q["vy"] * t
        elif kind == "circular":
            a = q["omega"] * t + q["phase"]
            x, y = q["cx"] + q["radius"] * np.cos(a), q["cy"] + q["radius"] * np.sin(a)
        elif kind == "sinusoidal":
            s, o = q["speed"] * t, q["amplitude"] * np.sin(q["omega"] * t + q["phase"])
            c, sn = np.cos(q["theta"]), np.sin(q["theta"])
            x, y = q["x0"] + s * c - o * sn, q["y0"] + s * sn + o * c
        elif kind == "figure_eight":
            a = q["amplitude"] * np.sin(q["omega"] * t)
            b = 0.5 * q["amplitude"] * np.sin(2 * q["omega"] * t)
            c, sn = np.cos(q["theta"]), np.sin(q["theta"])
            x, y = q["cx"] + c * a - sn * b, q["cy"] + sn * a + c * b
        else:  # spiral
            r, a = q["r0"] + q["growth"] * t, q["omega"] * t + q["phase"]
            x, y = q["cx"] + r * np.cos(a), q["cy"] + r * np.sin(a)
        m = mask[:, j][:, None].astype(float)
        tot[:, :, 0] += m * x
        tot[:, :, 1] += m * y
    lo, hi = tot.min(axis=1, keepdims=True), tot.max(axis=1, keepdims=True)
    span = hi - lo
    low, high = domain
    with np.errstate(invalid="ignore", divide="ignore"):
        out = low + (tot - lo) / span * (high - low)
    return np.where(span < 1e-12, 0.5 * (low + high), out)


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


def violations(r: Readings, pos: np.ndarray, emit: np.ndarray | None, k: int):
    """Violation of each step-``k`` reading by positions ``pos`` (N, 2), in units of its noise
    bound (``<= 0``: consistent), and its log density (N,), summed over the step's readings.
    Returns ``(viol (N, r), logdens (N,))``; ``r`` may be 0."""
    s = r.sensors
    dx, dy = pos[:, None, 0] - s[None, :, 0], pos[:, None, 1] - s[None, :, 1]
    d = np.hypot(dx, dy)
    cols, ld = [], np.zeros(len(pos))
    if r.modality in ("range", "range_bearing"):
        z = r.z[k, :, 0]
        ok = np.isfinite(z)
        if ok.any():
            half = r.range_sigma * d[:, ok] + ROUNDING
            cols.append(np.abs(z[ok] - d[:, ok]) / half - 1.0)
            ld -= np.log(2 * r.range_sigma * np.maximum(d[:, ok], 1e-9)).sum(axis=1)
    if r.modality in ("bearing", "range_bearing"):
        z = r.z[k, :, -1]
        ok = np.isfinite(z)
        if ok.any():
            ang = np.arctan2(dy[:, ok], dx[:, ok])
            half = r.bearing_half + np.radians(ROUNDING)
            cols.append(np.abs(wrap_pi(np.radians(z[ok]) - ang)) / half - 1.0)
    if r.modality == "toa":
        z = r.z[k, :, 0]
        ok = np.isfinite(z)
        if ok.any():
            half = r.toa_half + ROUNDING
            cols.append(np.abs(z[ok] - emit[:, None] - d[:, ok] / r.speed) / half - 1.0)
    if r.modality == "proximity":
        z = r.z[k, :, 0]
        ok = np.isfinite(z)
        if ok.any():
            sign = np.where(z[ok] >= 0.5, 1.0, -1.0)
            cols.append(sign * (d[:, ok] - r.radius) / (0.01 * r.radius))
    if not cols:
        return np.zeros((len(pos), 0)), ld
    return np.concatenate(cols, axis=1), ld


def step_violations(r: Readings, pos: np.ndarray, emit: np.ndarray | None, K: int):
    """:func:`violations` of steps ``0..K-1`` at once: ``pos`` (N, K, 2), ``emit`` (N, K) or
    None.  Returns ``(vmax (N, K), logdens (N, K))``: each step's largest violation (``-inf``
    for a step without readings) and summed log density."""
    s = r.sensors
    dx = pos[:, :K, None, 0] - s[None, None, :, 0]
    dy = pos[:, :K, None, 1] - s[None, None, :, 1]
    d = np.hypot(dx, dy)                                   # (N, K, m)
    N = len(pos)
    vmax = np.full((N, K), -np.inf)
    ld = np.zeros((N, K))
    with np.errstate(invalid="ignore"):
        if r.modality in ("range", "range_bearing"):
            z = r.z[:K, :, 0]
            ok = np.isfinite(z)
            half = r.range_sigma * d + ROUNDING
            v = np.where(ok, np.abs(z - d) / half - 1.0, -np.inf)
            vmax = np.maximum(vmax, v.max(axis=2))
            ld -= np.where(ok, np.log(2 * r.range_sigma * np.maximum(d, 1e-9)), 0.0).sum(axis=2)
        if r.modality in ("bearing", "range_bearing"):
            z = r.z[:K, :, -1]
            ok = np.isfinite(z)
            half = r.bearing_half + np.radians(ROUNDING)
            v = np.abs(wrap_pi(np.radians(np.where(ok, z, 0.0)) - np.arctan2(dy, dx))) / half - 1.0
            vmax = np.maximum(vmax, np.where(ok, v, -np.inf).max(axis=2))
        if r.modality == "toa":
            z = r.z[:K, :, 0]
            ok = np.isfinite(z)
            half = r.toa_half + ROUNDING
            v = np.abs(z - emit[:, :K, None] - d / r.speed) / half - 1.0
            vmax = np.maximum(vmax, np.where(ok, v, -np.inf).max(axis=2))
        if r.modality == "proximity":
            z = r.z[:K, :, 0]
            ok = np.isfinite(z)
            v = np.where(z >= 0.5, 1.0, -1.0) * (d - r.radius) / (0.01 * r.radius)
            vmax = np.maximum(vmax, np.where(ok, v, -np.inf).max(axis=2))
    return vmax, ld


# ------------------------------------------------------------------------------------- SMC
@dataclass
class SMCResult:
    """Posterior means per step: ``pos`` (n, 2), ``emit`` (n,) (event families) and the
    posterior covariance trace of the position ``pos_var`` (n,) (plane units^2); ``ess`` (n,)
    effective sample size after the step; ``levels`` (n,) tolerance levels used;
    ``acceptance`` mean MH acceptance rate."""
    pos: np.ndarray
    emit: np.ndarray | None
    pos_var: np.ndarray
    emit_var: np.ndarray | None
    ess: np.ndarray
    levels: np.ndarray
    acceptance: float


class NotConverged(RuntimeError):
    """The sampler could not reach the exact posterior of a step (see :func:`smc_posterior`)."""


def _log_struct_prior(mask: np.ndarray, kmax: int, n_kinds: int) -> np.ndarray:
    k = mask.sum(axis=1)
    table = np.full(n_kinds + 1, -np.inf)
    for j in range(1, kmax + 1):
        table[j] = -np.log(kmax) - np.log(comb(n_kinds, j))
    return table[k]


def _systematic(w: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    n = len(w)
    c = np.cumsum(w)
    c[-1] = 1.0
    return np.searchsorted(c, (rng.random() + np.arange(n)) / n)


def smc_posterior(r: Readings, t_rel: np.ndarray, n_steps_scored: int, *, ranges=None,
                  max_components: int = 3, emit_range: tuple[float, float] | None = None,
                  n_particles: int = 2000, n_moves: int = 2, seed: int = 0,
                  domain=(0.0, 10.0), max_levels: int = 80) -> SMCResult:
    """Posterior means of steps ``0..n_steps_scored-1`` (see the module docstring).

    Args:
        r: the task's readings (:class:`Readings`), one row per step of the whole trajectory.
        t_rel: (n,) times relative to the first step (``linspace(0, duration, n_steps)``).
        ranges: basis-motion parameter ranges (default :data:`STARK_RELEASE_RANGES`).
        emit_range: ``emit_time_range`` of an event family (first emission time), else None.
        n_moves: MH sweeps after each resampling (each sweep: one block per kind + a toggle).
    Returns: :class:`SMCResult`.
        max_levels: tolerance levels allowed per step.
    Raises: :class:`NotConverged` when a step's tolerance does not reach 0 within
        ``max_levels`` levels.
    """
    rng = np.random.default_rng(seed)
    lay = PriorLayout(STARK_RELEASE_RANGES if ranges is None else ranges, emit=emit_range)
    nk = len(lay.kinds)
    N = n_particles
    # prior draws
    u = rng.random((N, lay.dim))
    kk = rng.integers(1, max_components + 1, size=N)
    mask = np.zeros((N, nk), bool)
    for i in range(N):
        mask[i, rng.choice(nk, size=kk[i], replace=False)] = True
    logw = np.zeros(N)
    blocks = [np.arange(lay.slices[k].start, lay.slices[k].stop) for k in lay.kinds]
    if emit_range is not None and emit_range[1] > emit_range[0]:
        blocks.append(np.array([lay.dim - 1]))
    block_kind = list(range(nk)) + [None] * (len(blocks) - nk)
    keep_b = [i for i, b in enumerate(blocks) if (lay.hi[b] > lay.lo[b]).any()]
    blocks = [blocks[i][lay.hi[blocks[i]] > lay.lo[blocks[i]]] for i in keep_b]
    block_kind = [block_kind[i] for i in keep_b]
    joint_scale = 1.0
    scale = {i: 1.0 for i in range(len(blocks))}

    def evaluate(u_, mask_, t, eps):
        """log target at (step t, tolerance eps) up to a constant, and step-t max violation."""
        pos = trajectories(lay, u_, mask_, t_rel, domain)
        emit = None if emit_range is None else lay.physical(u_)[:, -1][:, None] + t_rel[None, :]
        lt = _log_struct_prior(mask_, max_components, nk)
        vm, ld = step_violations(r, pos, emit, t + 1)
        lim = np.zeros(t + 1)
        lim[t] = eps
        lt = lt + np.where(vm <= lim, ld, -np.inf).sum(axis=1)
        vmax_t = np.maximum(vm[:, t], 0.0) if np.isfinite(vm[:, t]).any() else np.zeros(len(u_))
        return lt, vmax_t, pos, emit

    acc_tot, acc_n = 0.0, 0
    lt, vmax, pos, emit = evaluate(u, mask, 0, np.inf)
    n = n_steps_scored
    out_pos, out_var = np.empty((n, 2)), np.empty(n)
    out_emit = np.empty(n) if emit_range is not None else None
    out_evar = np.empty(n) if emit_range is not None else None
    ess_hist, levels = np.empty(n), np.zeros(n, int)
    for t in range(n):
        # enter step t at eps = inf: weight by the step's log density
        lt_new, vmax, pos, emit = evaluate(u, mask, t, np.inf)
        finite = np.isfinite(lt)
        logw = logw + np.where(finite, lt_new - np.where(finite, lt, 0.0), -np.inf)
        lt = lt_new
        eps = np.inf
        for _level in range(max_levels):
            # choose the next tolerance keeping about half of the ESS
            w = np.exp(logw - logw.max())
            ess0 = w.sum() ** 2 / (w ** 2).sum()
            if np.all(vmax[w > 0] <= 0):
                new_eps = 0.0
            else:
                cand = np.unique(np.concatenate([[0.0], vmax[(w > 0) & (vmax > 0)]]))
                new_eps = cand[-1]
                lo_i, hi_i = 0, len(cand) - 1
                while lo_i < hi_i:  # smallest eps with ESS >= ess0 / 2
                    mid = (lo_i + hi_i) // 2
                    wm = w * (vmax <= cand[mid])
                    e = wm.sum() ** 2 / max((wm ** 2).sum(), 1e-300)
                    if e >= 0.5 * ess0:
                        hi_i = mid
                    else:
                        lo_i = mid + 1
                new_eps = cand[lo_i]
                if new_eps >= eps:  # duplicates after resampling: force progress
                    alive = vmax[(w > 0) & (vmax < eps)]
                    new_eps = max(alive.max(), 0.0) if len(alive) else eps
            if new_eps < eps:
                eps = new_eps
                keep = vmax <= eps
                logw = np.where(keep, logw, -np.inf)
                lt = np.where(keep, lt, -np.inf)
                levels[t] += 1
            if not np.isfinite(logw).any():
                raise ValueError(f"step {t}: no particle consistent with the readings")
            w = np.exp(logw - logw.max())
            w /= w.sum()
            ess = 1.0 / (w ** 2).sum()
            if ess < 0.5 * N or eps > 0:
                idx = _systematic(w, rng)
                u, mask, lt, vmax = u[idx], mask[idx], lt[idx], vmax[idx]
                logw = np.zeros(N)
                # Metropolis-Hastings moves targeting (step t, eps)
                for _ in range(n_moves):
                    for bi, b in enumerate(blocks):
                        act = mask[:, block_kind[bi]] if block_kind[bi] is not None else np.ones(N, bool)
                        ref = u[act] if act.sum() > 1 else u
                        sd = np.maximum(ref[:, b].std(axis=0), 1e-4) * scale[bi]
                        mult = 10.0 ** rng.uniform(-1.5, 0.5, size=(N, 1))  # a mixture of scales
                        prop = u.copy()
                        prop[:, b] += rng.normal(size=(N, len(b))) * sd * mult
                        inside = np.all((prop[:, b] >= 0) & (prop[:, b] <= 1), axis=1)
                        prop[~inside] = u[~inside]
                        lp, vp, _, _ = evaluate(prop, mask, t, eps)
                        a = inside & (np.log(rng.random(N)) < lp - lt)
                        u[a], lt[a], vmax[a] = prop[a], lp[a], vp[a]
                        rate = a[act].mean() if act.any() else 0.25
                        scale[bi] *= 1.2 if rate > 0.3 else (0.8 if rate < 0.15 else 1.0)
                        scale[bi] = float(np.clip(scale[bi], 0.01, 3.0))
                        acc_tot += rate
                        acc_n += 1
                    # joint move with each structure's particle covariance (adaptive
                    # Metropolis within the SMC population): follows the correlations the
                    # per-axis normalisation creates between every active parameter
                    prop = u.copy()
                    for key in np.unique(mask, axis=0):
                        grp = np.all(mask == key, axis=1)
                        dims = np.concatenate([blocks[i] for i, kd in enumerate(block_kind)
                                               if kd is None or key[kd]])
                        if grp.sum() < 2 * len(dims):
                            continue
                        C = np.cov(u[np.ix_(grp, dims)], rowvar=False) + 1e-10 * np.eye(len(dims))
                        L = np.linalg.cholesky(C)
                        mult = 10.0 ** rng.uniform(-1.5, 0.0, size=(grp.sum(), 1))
                        step = rng.normal(size=(grp.sum(), len(dims))) @ L.T
                        prop[np.ix_(grp, dims)] += joint_scale * 2.38 / np.sqrt(len(dims)) * mult * step
                    inside = np.all((prop >= 0) & (prop <= 1), axis=1)
                    prop[~inside] = u[~inside]
                    lp, vp, _, _ = evaluate(prop, mask, t, eps)
                    moved = np.any(prop != u, axis=1)
                    a = inside & moved & (np.log(rng.random(N)) < lp - lt)
                    u[a], lt[a], vmax[a] = prop[a], lp[a], vp[a]
                    if moved.any():
                        rate = a[moved].mean()
                        joint_scale *= 1.2 if rate > 0.3 else (0.8 if rate < 0.15 else 1.0)
                        joint_scale = float(np.clip(joint_scale, 0.01, 3.0))
                    # kind birth/death
                    pm = mask.copy()
                    j = rng.integers(0, nk, size=N)
                    pm[np.arange(N), j] = ~pm[np.arange(N), j]
                    lp, vp, _, _ = evaluate(u, pm, t, eps)
                    a = np.log(rng.random(N)) < lp - lt
                    mask[a], lt[a], vmax[a] = pm[a], lp[a], vp[a]
            if eps <= 0:
                break
        else:
            raise NotConverged(f"step {t}: tolerance still {eps:.3g} noise bounds after "
                               f"{max_levels} levels (the particles lost the posterior's support)")
        pos = trajectories(lay, u, mask, t_rel, domain)[:, t]
        w = np.exp(logw - logw.max())
        w /= w.sum()
        ess_hist[t] = 1.0 / (w ** 2).sum()
        m = w @ pos
        out_pos[t] = m
        out_var[t] = float(w @ np.sum((pos - m) ** 2, axis=1))
        if emit_range is not None:
            e = lay.physical(u)[:, -1] + t_rel[t]
            out_emit[t] = float(w @ e)
            out_evar[t] = float(w @ (e - out_emit[t]) ** 2)
    return SMCResult(out_pos, out_emit, out_var, out_evar, ess_hist, levels,
                     acc_tot / max(acc_n, 1))


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
                   seed: int = 0, max_levels: int = 80) -> SMCResult:
    """:func:`smc_posterior` of a generated tier-1 tracking task, with the prior read from the
    family config the task was generated with (``task.meta["config"]``: ``n_steps``,
    ``duration``, ``max_components``, ``emit_time_range``)."""
    cfg = task.meta["config"]
    t_rel = np.linspace(0.0, float(cfg["duration"]), int(cfg["n_steps"]))
    emit = tuple(cfg["emit_time_range"]) if task.inputs["modality"] == "toa" else None
    return smc_posterior(task_readings(task), t_rel, min(n_steps, len(t_rel)),
                         max_components=int(cfg["max_components"]), emit_range=emit,
                         n_particles=n_particles, n_moves=n_moves, seed=seed,
                         max_levels=max_levels)
