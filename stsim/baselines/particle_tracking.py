"""Particle filters for tracking under the generator's own motion prior and bounded noise
(issue 20): the default trackers of ``stark.tracking.proximity``, ``stark.tracking.event``,
``stark.temporal_tracking.event`` and ``stark.tracking.event_xyt``.  The range, bearing and
range+bearing trackers share this module's motion library, step grid and tolerance rule; their
model and filter loop are in :mod:`stsim.baselines.sensor_particle_tracking` (the EKF bank
stays for them as ``baseline:ekf``).

Model.  The state of a particle is its position ``p``, velocity ``v`` and acceleration ``a``
per step (plane units, km for ToA; per step, per step^2), propagated as a constant-acceleration
model ``a += j_k, v += a, p += v`` whose jerk ``j_k`` is drawn from the empirical third
differences at step ``k`` of trajectories sampled from the generator's trajectory prior
(:func:`stsim.sim.motion.random_trajectory`, STARK Appendix 7.3: the same basis motions,
parameter table, number of steps and duration).  The initial ``(v, a)`` of a particle at
position ``p0`` is that of a prior trajectory whose first position is among the nearest to
``p0`` (a k-nearest-neighbour draw from the prior's joint law of ``(p0, v0, a0)``).  Positions
are reflected into the domain (the prior's trajectories never leave it).  Proximity instead
takes the velocity change of a prior trajectory near the particle in ``(p, 3 v)``
(``motion="knn"``), found through per-step tables of the library (``knn_query``), chosen among
the nearest ones by the extent of the path so far (``extent``: the min-max normalisation over
all steps makes every trajectory touch the four edges of the domain, so an edge not reached yet
is still ahead), and weights its particles at the trajectory's last step by how far their
extent falls short of the domain (``terminal``).

Cost: each step is a few dozen numpy calls on (6, N) state rows updated in place; gathers use
``ndarray.take``, per-library tables are cached (``perf/pf_cost.py``: 6-12x cheaper per task
than Stone Soup's particle filter, ``perf/pf_accuracy.py``: the errors).

Likelihood (STARK Table 7; readings printed with 4 decimals, so each bound is widened by half a
unit of the 4th decimal): ToA ``T = t_emit + d / v + U(-h, h)``, proximity exact disk
detections ``[d <= r]``.  When the emission times are unknown the shots are fired at
``t_start + t_rel[k]`` (the generator's schedule, :func:`task_schedule`); for a flat prior on
``t_start`` and uniform noise the posterior of ``t_start`` given one particle's path is
uniform on the intersection ``[L, U]`` of the intervals its readings allow, so ``t_start`` is
integrated out exactly (Rao-Blackwellised): each particle carries ``[L, U]`` and its weight is
multiplied by the interval's shrinkage ``(U' - L') / (U - L)`` (Doucet, de Freitas & Gordon 2001,
Rao-Blackwellised particle filtering).  When the schedule is unknown each step's emission time is
integrated out on its own (weight ``(U_k - L_k) / 2h``).

Sampling: step 0 is drawn from its posterior under the prior's own law of the first position
(:mod:`stsim.baselines.first_position`: point masses in the corners and at the centre cluster,
densities along the edges and over the square, integrated on grids refined around the readings;
uniform within the chosen cell); after each step the particles are resampled (systematic) when
the effective sample size falls below half.  Model mismatch: when fewer than ``min_ess``
effective particles satisfy a step's readings exactly, the noise bound is widened for that step
(an adaptive tolerance, as in ABC-SMC; Del Moral, Doucet & Jasra 2012) just enough to keep
``min_ess``.  The estimate of each step is the particles' weighted mean (the filtering posterior
mean under the model), and of the emission time ``(L + U) / 2 + t_rel[k]``.

Failure modes: a motion the constant-acceleration model with prior jerks cannot follow (rare
fast turns) costs the particles their support; the widened tolerance then keeps the filter
alive but biases it toward the readings.  Gaussian noise is treated as uniform of half-width
``2 sigma``.
"""
from __future__ import annotations

import numpy as np

from .geometry import DOMAIN
from .first_position import first_position_law_of, start_posterior
from .prior_motion import (ROUNDING, MotionLibrary, adaptive_tolerance, grid_draw, in_domain, propagate_rows,
                           library_cache, on_step_grid, reflect, start_graph,
                           start_grid, step_grid, task_schedule)
from .resampling import systematic_resample

#: a step whose readings need the noise bound widened this many times over (for the particles
#: to stay alive) means the shot schedule ``t_start + t_rel[k]`` does not hold for the task.
SCHEDULE_BREAK = 20.0
#: proximity: the prior's own transitions (``motion="knn"``), 8 neighbours found through the
#: cell table and k-NN graph of the library (``knn_query="cell"``); the k-NN draw chooses among
#: the 32 library states nearest in ``(p, 3 v)`` by the extent each has covered so far
#: (``extent=0.5``: a Gaussian kernel of 0.5 plane units on the running min / max of x and y), and
#: the last step of the trajectory weights each particle by how far its extent falls short of
#: the whole domain (``terminal=0.3``; the min-max normalisation makes every trajectory touch all
#: four edges); a library of 16,000 prior trajectories, 800 particles.  30 tasks of suite seed
#: 7, filter seeds 0 / 1 / 2 pooled: trimmed RMSE 1.288 over the first 10 steps and 1.298 over all
#: 20, against 1.367 / 1.484 for the settings before (no extent, 4,000 trajectories, 1200
#: particles) and 1.597 / 1.793 for the grid Bayes filter (the sweep of 2026-12-01, in the issue-20
#: notes; the current default's figures with their commands: docs/stark-tier1.md).
PROXIMITY_SETTINGS = {"motion": "knn", "n_particles": 800, "knn": 8, "knn_query": "cell",
                      "extent": 0.5, "terminal": 0.3, "lib_size": 16000}


class _Model:
    """One family's readings: per-step violations and Rao-Blackwellised emission intervals."""

    def __init__(self, kind: str, sensors: np.ndarray, z: np.ndarray, *, radius: float = 4.0,
                 speed: float = 1.0, half: float = 0.01, emit: np.ndarray | None = None,
                 t_rel: np.ndarray | None = None):
        self.kind, self.s, self.z = kind, sensors, z
        self.radius, self.speed, self.half = radius, speed, half + ROUNDING
        self.emit, self.t_rel = emit, t_rel

    def step(self, k: int, p: np.ndarray, L: np.ndarray | None, U: np.ndarray | None):
        """Step-``k`` readings at positions ``p`` (N, 2).

        Returns ``(viol (N,), factor(eps) -> (N,) weight factor, interval(eps) -> (L', U'))``:
        ``viol`` is how far (in noise bounds for ToA, in plane units / (0.01 r) for proximity)
        the readings must be widened for the particle to satisfy them; ``factor(eps)`` the
        likelihood factor with bounds widened by ``eps`` (0 where ``viol > eps``)."""
        z = self.z[k]
        ok = np.isfinite(z)
        N = len(p)
        if not ok.any():
            return np.zeros(N), (lambda eps: np.ones(N)), (lambda eps: (L, U))
        # (S, N) layout: the reductions over the few sensors run along contiguous rows
        s = self.s[ok]
        d = p[:, 0] - s[:, 0, None]                         # distances (S, N): sqrt(dx^2 + dy^2)
        dy = p[:, 1] - s[:, 1, None]                        # (twice cheaper than np.hypot)
        d *= d
        dy *= dy
        d += dy
        np.sqrt(d, out=d)
        if self.kind == "proximity":
            scale = 0.01 * self.radius
            sign = np.where(z[ok] >= 0.5, 1.0, -1.0)
            d -= self.radius
            d *= sign[:, None]
            d /= scale
            viol = np.maximum(d.max(axis=0), 0.0)
            return viol, (lambda eps: (viol <= eps).astype(float)), (lambda eps: (L, U))
        h = self.half
        c = z[ok][:, None] - d / self.speed                # emission time each reading implies
        if self.emit is not None:                          # known emission time
            c -= self.emit[k]
            viol = np.maximum(np.abs(c, out=c).max(axis=0) / h - 1.0, 0.0)
            return viol, (lambda eps: (viol <= eps).astype(float)), (lambda eps: (L, U))
        cmax, cmin = c.max(axis=0), c.min(axis=0)
        if self.t_rel is None or L is None:                # this step's emission time on its own
            need = 0.5 * (cmax - cmin)
            viol = np.maximum(need / h - 1.0, 0.0)

            def fac(eps):
                he = h * (1 + eps)
                return np.maximum(cmin - cmax + 2 * he, 0.0) / (2 * h)

            def itv(eps):
                he = h * (1 + eps)
                return cmax - he, cmin + he
            return viol, fac, itv
        cmax, cmin = cmax - self.t_rel[k], cmin - self.t_rel[k]   # implied t_start
        need = np.maximum.reduce([0.5 * (cmax - cmin), cmax - U, L - cmin])
        viol = np.maximum(need / h - 1.0, 0.0)

        def itv(eps):
            he = h * (1 + eps)
            return np.maximum(L, cmax - he), np.minimum(U, cmin + he)

        def fac(eps):
            lo, hi = itv(eps)
            return np.maximum(hi - lo, 0.0) / np.maximum(U - L, 1e-12)
        return viol, fac, itv


def particle_track(model: _Model, lib: MotionLibrary, n_steps: int, *, n_particles: int = 1500,
                   min_ess: float = 50.0, cells: int = 201, knn: int = 16, seed: int = 0,
                   jitter: float = 0.3, jerk_scale: float = 8.0, motion: str = "ca",
                   vel_weight: float = 3.0, start_prior: float = 4.0, knn_query: str = "exact",
                   extent: float = 0.0, extent_pool: int = 32, terminal: float = 0.0,
                   aligned_start: bool = False,
                   _trace: list | None = None,
                   _eps_log: list | None = None,
                   domain=DOMAIN) -> tuple[np.ndarray, np.ndarray | None]:
    """Run the particle filter of the module docstring over steps ``0..n_steps-1``.

    Args:
        model: the readings (:class:`_Model`).
        lib: prior trajectories (:func:`~stsim.baselines.prior_motion.motion_library`) of at least ``n_steps`` steps.
        n_particles: particles; min_ess: effective sample size kept by widening a step's bound.
        cells: cells per axis of the law of the first position's grid (its densities smoothed by
            ``start_prior`` of them) and of the step-0 grid when no position meets the readings
            (the step-0 posterior itself starts from 101 x 101 cells, refined); knn: library
            neighbours per particle.
        start_prior: when > 0, the step-0 prior is the law of the library's first positions
            (:func:`~stsim.baselines.first_position.first_position_law`: point masses in the
            corners and at crowded points, densities along the edges and over the square,
            smoothed by ``start_prior`` cells, 10 % uniform; 20-30 % of first positions
            lie on an edge: the first point of a monotone axis is its minimum or maximum) and
            the step-0 posterior is integrated on grids refined around the readings
            (:func:`~stsim.baselines.first_position.start_posterior`); 0: uniform on the grid.
        motion: ``"ca"`` (constant acceleration, prior jerks times ``jerk_scale``) or ``"knn"``
            (the velocity change of a library trajectory near ``(p, vel_weight * v)``).
        knn_query: how the k-NN draws (the first velocity; each step's for ``motion="knn"``)
            find the library trajectory: ``"exact"``, one of the
            particle's own ``knn`` nearest library states (a k-d tree k-NN query per particle
            and step); ``"graph"``, one of the ``knn`` nearest library states to the
            particle's nearest one (a precomputed k-NN graph of the library per step: a 1-NN
            query, about 2x cheaper); ``"cell"``, the same with the nearest one replaced by
            the library state nearest to the centre of the particle's cell in a
            ``CELLS_PER_AXIS``^4 grid over the step's states (a table look-up, about 6x
            cheaper than ``"exact"``; the tables are built once per library and step).  The
            first velocity uses the ``"graph"`` draw for both ``"graph"`` and ``"cell"``.
        jitter: regularisation bandwidth after resampling (fraction of the particle spread).
        extent: when > 0, the k-NN draws of ``motion="knn"`` choose among the ``extent_pool``
            candidate library states (the particle's own nearest ones for ``"exact"``, its
            nearest one's for ``"graph"`` / ``"cell"``) by a Gaussian kernel of bandwidth
            ``extent`` (plane units) on the distance between the running extents (min x, min
            y, max x, max y of the path so far) of the candidate and of the particle: the
            trajectory is min-max normalised over all its steps (STARK Appendix 7.3), so the
            edges it has not reached yet are still ahead of it and prior trajectories with the
            same extent so far move as it will (:func:`_extent_pick`).  0: uniform among
            ``knn``.
        aligned_start: ``motion="ca"`` starts each particle at ``(v0 - a0, a0)`` of its
            library trajectory, so that step 1 (``a += j, v += a, p += v``) moves it by the
            trajectory's own first step ``v0`` (plus the jerk); False (the sensor filter's
            setting) starts at ``(v0, a0)``, one acceleration ahead.
        terminal: when > 0 (with ``extent``), the last step of the trajectory (the library's
            last) multiplies each particle's weight by ``exp(-|g|^2 / (2 terminal^2))``, ``g``
            the four gaps between its extent and the domain's edges (0 for every trajectory
            of the prior).
    Returns: positions (n_steps, 2) and emission times (n_steps,) or None (known emission or
        proximity).

    Raises ``ValueError`` for an unknown ``knn_query``.
    """
    if knn_query not in ("graph", "exact", "cell"):
        raise ValueError(f"knn_query must be 'graph' or 'exact', got {knn_query!r}")
    rng = np.random.default_rng(seed)
    lo, hi = float(domain[0]), float(domain[1])          # floats once: the compiled step's types
    N = n_particles
    # step 0: its exact posterior on a grid, then uniform within the chosen cell
    unknown_t = model.kind == "toa" and model.emit is None

    def lik0(P):
        viol, fac, _ = model.step(0, P.T, None, None)
        return fac(0.0), viol
    start = None
    if start_prior:  # the prior's law of the first position (often on an edge: min-max norm)
        start = start_posterior(lik0, first_position_law_of(lib, domain, cells, start_prior), N, rng)
    if start is not None:
        p, q0, _ = start                                   # proposal: likelihood at the cell / point
    else:  # a uniform prior, or no position meets the readings: widen them on the grid
        g, grid = start_grid(lo, hi, cells)
        viol, fac, _ = model.step(0, grid, None, None)
        p, q0, _ = grid_draw(viol, fac, grid, g[1] - g[0], N, rng, lo, hi)
    cache = library_cache(lib)
    M = len(lib.pos)
    if knn_query == "exact":
        _, nb = cache["start_tree"].query(p, k=knn)
        pick = nb[np.arange(N), rng.integers(0, knn, size=N)]
    else:  # one of the knn nearest first positions to the particle's nearest one
        _, near = cache["start_tree"].query(p, k=1)
        pick = start_graph(lib, knn)[near, rng.integers(0, knn, size=N)]
    # the state as rows (6, N): x, y, vx, vy, ax, ay (contiguous per component)
    X = np.empty((6, N))
    X[0:2] = p.T
    X[2:4] = cache["vel"][0][:, pick]
    X[4:6] = cache["acc0"][:, pick]
    if aligned_start and motion == "ca":
        # step 1 adds the acceleration before the velocity (a += j, v += a, p += v): start from
        # v0 - a0 so that p1 = p0 + v0 (+ jerk), the library trajectory's own next position
        X[2:4] -= X[4:6]
    P, V, A = X[0:2], X[2:4], X[4:6]
    if extent > 0:  # each particle's running extent so far: (min x, min y, max x, max y) rows
        E = np.vstack([P, P])
        ext_pool = min(extent_pool, M)
    L = U = None
    logw = np.zeros(N)
    uniform = True                                         # logw constant (start, resampled)
    out_p = np.empty((n_steps, 2))
    out_t = np.empty(n_steps) if unknown_t else None
    velT, jerkT = cache["vel"], cache["jerk"]
    jerk_rows = np.full(N, float(jerk_scale))               # every particle's jerk scale
    if motion == "knn":
        Q = np.empty((N, 4))                               # k-d tree query (p, vel_weight * v)
    for k in range(n_steps):
        if k and motion == "knn":
            if k >= 2:  # the velocity change of a prior trajectory in a similar state
                kk = min(k - 1, lib.vel.shape[1] - 1)
                tree_k = _state_tree(lib, kk, vel_weight)
                Q[:, :2] = P.T
                np.multiply(V.T, vel_weight, out=Q[:, 2:])
                if extent > 0:
                    # the candidates: the extent_pool library states nearest to the particle's
                    # (p, vel_weight v) ("exact") or to its nearest one ("graph", "cell"), as
                    # (K, N) rows: the reductions over the pool run along contiguous rows
                    if knn_query == "exact":
                        cand = np.ascontiguousarray(tree_k.query(Q, k=ext_pool)[1].T)
                    else:
                        near = (_state_cells(lib, kk, vel_weight)(Q) if knn_query == "cell"
                                else tree_k.query(Q, k=1)[1])
                        cand = _state_pool(lib, kk, vel_weight, ext_pool).take(near, axis=1)
                    pick = _extent_pick(cand, _lib_extent(lib)[kk], E, extent, rng)
                elif knn_query == "exact":
                    _, nb = tree_k.query(Q, k=knn)
                    pick = nb[np.arange(N), rng.integers(0, knn, size=N)]
                elif knn_query == "cell":
                    near = _state_cells(lib, kk, vel_weight)(Q)
                    pick = _state_graph(lib, kk, vel_weight, knn)[near, rng.integers(0, knn, size=N)]
                else:  # the nearest library state's own knn (precomputed): 1-NN queries only
                    _, near = tree_k.query(Q, k=1)
                    pick = _state_graph(lib, kk, vel_weight, knn)[near, rng.integers(0, knn, size=N)]
                V += velT[kk].take(pick, axis=1)
                V -= velT[kk - 1].take(pick, axis=1)
            P += V
            reflect(P, V, lo, hi)
        elif k:   # a += j, v += a, p += v, reflected (compiled; as the numpy steps bit for bit)
            propagate_rows(X, jerkT[min(k - 1, lib.jerk.shape[1] - 1)], rng.integers(0, M, size=N), jerk_rows,
                           1.0, lo, hi)
        p = P.T
        if extent > 0:
            if k:
                np.minimum(E[:2], P, out=E[:2])
                np.maximum(E[2:], P, out=E[2:])
            if terminal > 0 and k == len(lib.pos[0]) - 1:
                # the last step of the trajectory: min-max normalised, it has reached every edge
                gap = np.vstack([E[:2] - lo, hi - E[2:]])
                gap *= gap
                logw = logw - 0.5 * gap.sum(axis=0) / terminal ** 2
                uniform = False
        if unknown_t and model.t_rel is not None and L is None:
            L, U = np.full(N, -np.inf), np.full(N, np.inf)
            viol, fac, itv = model.step(k, p, None, None)   # first step: interval of t_emit(0)
            eps = adaptive_tolerance(viol, logw, min_ess, uniform)
            w_step = fac(eps)
            L, U = itv(eps)
            L, U = L - model.t_rel[k], U - model.t_rel[k]
        else:
            viol, fac, itv = model.step(k, p, L, U)
            eps = adaptive_tolerance(viol, logw, min_ess, uniform)
            w_step = fac(eps)
            if unknown_t:
                L, U = itv(eps)
        if k == 0:                                         # drawn from step 0's posterior
            w_step = w_step / q0
        with np.errstate(divide="ignore"):
            logw = logw + np.log(w_step)
        uniform = False
        w = np.exp(logw - logw.max())
        w /= w.sum()
        out_p[k] = P @ w
        if _trace is not None:
            _trace.append((P.T.copy(), V.T.copy(), A.T.copy(), w.copy(), eps))
        if _eps_log is not None:
            _eps_log.append(eps)
        if unknown_t:
            mid = 0.5 * (L + U)
            out_t[k] = w @ mid + (model.t_rel[k] if model.t_rel is not None else 0.0)
            if model.t_rel is None:
                L = U = None
        if 1.0 / (w @ w) < 0.5 * N:
            idx = systematic_resample(w, rng)
            X = X.take(idx, axis=1)                        # (take: much cheaper than X[:, idx])
            if extent > 0:
                E = E.take(idx, axis=1)
            if L is not None:
                L, U = L.take(idx), U.take(idx)
            logw = np.zeros(N)
            uniform = True
            if jitter > 0:  # regularised PF: shrink to the mean, add kernel noise (Liu & West 2001)
                mu = X.mean(axis=1, keepdims=True)
                dev = X - mu
                dev *= dev
                sd = np.sqrt(dev.mean(axis=1, keepdims=True))
                shrink = np.sqrt(1.0 - jitter ** 2)
                X *= shrink
                X += (1 - shrink) * mu
                noise = rng.standard_normal(size=(N, 6)).T   # = normal(0, 1)
                noise *= jitter * sd
                X += noise
            P, V, A = X[0:2], X[2:4], X[4:6]
            if jitter > 0:
                reflect(P, V, lo, hi)
    return out_p, out_t


_TREES: dict = {}


def _extent_pick(cand: np.ndarray, lib_ext: np.ndarray, ext: np.ndarray, bandwidth: float,
                 rng: np.random.Generator) -> np.ndarray:
    """One library state per particle among its candidates, drawn with the Gaussian kernel
    weight ``exp(-|e_j - e|^2 / (2 bandwidth^2))`` of the distance between the candidate's
    running extent ``e_j`` and the particle's ``e`` (plane units).

    Args: cand (K, N) candidate library indices per particle; lib_ext (4, M) the library's
    running extents at this step (:func:`_lib_extent`); ext (4, N) the particles'; bandwidth
    in plane units.  Returns (N,) library indices."""
    K, N = cand.shape
    ce = lib_ext.take(cand, axis=1)                                   # (4, K, N)
    ce -= ext.astype(np.float32)[:, None, :]
    ce *= ce
    d2 = ce[0] + ce[1]
    d2 += ce[2]
    d2 += ce[3]
    d2 *= np.float32(-0.5 / bandwidth ** 2)
    d2 -= d2.max(axis=0)
    np.exp(d2, out=d2)
    cw = np.cumsum(d2, axis=0, out=d2)                                # inverse-CDF draw per column
    j = (cw < rng.random(N).astype(np.float32) * cw[-1]).sum(axis=0)
    return cand[np.minimum(j, K - 1), np.arange(N)]


def _lib_extent(lib: MotionLibrary) -> np.ndarray:
    """(n, 4, M) running extent of each library trajectory through step ``k``: rows min x,
    min y, max x, max y of ``pos[:, :k+1]``; cached per library."""
    cache = library_cache(lib)
    if "extent" not in cache:
        lo = np.minimum.accumulate(lib.pos, axis=1)
        hi = np.maximum.accumulate(lib.pos, axis=1)
        cache["extent"] = np.ascontiguousarray(np.concatenate([lo, hi], axis=2).transpose(1, 2, 0),
                                               dtype=np.float32)
    return cache["extent"]


def _state_tree(lib: MotionLibrary, k: int, vel_weight: float):
    """k-d tree of the library's states ``(p_k, vel_weight * (p_k - p_{k-1}))`` at step ``k``
    (cached per library, step and weight)."""
    from scipy.spatial import cKDTree
    key = (id(lib), k, vel_weight)
    hit = _TREES.get(key)
    if hit is None or hit[0] is not lib:     # the library kept referenced: its id stays unique
        if len(_TREES) > 2000:
            _TREES.clear()
        hit = (lib, cKDTree(np.hstack([lib.pos[:, k], vel_weight * lib.vel[:, k - 1]])))
        _TREES[key] = hit
    return hit[1]


_CELLS: dict = {}
CELLS_PER_AXIS = 12


def _state_cells(lib: MotionLibrary, k: int, vel_weight: float):
    """A lookup ``Q (N, 4) -> (N,)`` of the library state nearest to the centre of ``Q``'s cell
    in a ``CELLS_PER_AXIS``^4 grid over the bounding box of :func:`_state_tree`'s states at
    step ``k`` (an approximate 1-NN: one table look-up instead of a k-d tree query); cached."""
    key = (id(lib), k, vel_weight)
    hit = _CELLS.get(key)
    if hit is None or hit[0] is not lib:
        if len(_CELLS) > 2000:
            _CELLS.clear()
        tree = _state_tree(lib, k, vel_weight)
        n = CELLS_PER_AXIS
        lo, hi = tree.data.min(axis=0), tree.data.max(axis=0)
        width = (hi - lo) / n
        axes = [lo[i] + width[i] * (np.arange(n) + 0.5) for i in range(4)]
        centres = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 4)
        table = tree.query(centres, k=1)[1]
        stride = np.array([n ** 3, n ** 2, n, 1])

        def look(Q):
            c = ((Q - lo) / width).astype(np.intp)
            np.clip(c, 0, n - 1, out=c)
            return table.take(c @ stride)
        hit = (lib, look)
        _CELLS[key] = hit
    return hit[1]


_GRAPHS: dict = {}


def _state_graph(lib: MotionLibrary, k: int, vel_weight: float, knn: int) -> np.ndarray:
    """(M, knn) indices of the ``knn`` nearest library states (itself included) of each
    library state at step ``k`` (:func:`_state_tree`'s space); cached per library, step,
    weight and ``knn``."""
    key = (id(lib), k, vel_weight, knn)
    hit = _GRAPHS.get(key)
    if hit is None or hit[0] is not lib:
        if len(_GRAPHS) > 2000:
            _GRAPHS.clear()
        tree = _state_tree(lib, k, vel_weight)
        hit = (lib, tree.query(tree.data, k=knn)[1])
        _GRAPHS[key] = hit
    return hit[1]


def _state_pool(lib: MotionLibrary, k: int, vel_weight: float, knn: int) -> np.ndarray:
    """:func:`_state_graph` transposed: (knn, M), contiguous per neighbour rank; cached."""
    cache = library_cache(lib)
    key = ("pool", k, vel_weight, knn)
    if key not in cache:
        cache[key] = np.ascontiguousarray(_state_graph(lib, k, vel_weight, knn).T)
    return cache[key]


def track_task(task, seed: int = 0, **kw) -> tuple[np.ndarray, np.ndarray | None]:
    """The particle filter on a proximity or ToA tracking task (``task.inputs``: sensors,
    readings, radius / wave_speed and sensor_model; the prior's schedule from
    :func:`task_schedule`); ``kw`` are :func:`particle_track` settings (proximity defaults
    :data:`PROXIMITY_SETTINGS`) and, for ToA, ``smooth``: None, or the settings of
    :func:`stsim.baselines.trajectory_smoother.smooth_task` (the filter's answers replaced by the
    MAP smoother's under the prior's Gaussian approximation, before the refit), and ``refit``: None, or the settings of
    :func:`stsim.baselines.trajectory_refit.refit_task` (the answers replaced by the
    generator's parametric trajectory fitted to the readings so far where that fit holds;
    bounded noise only: with Gaussian noise the filter's answers stay), and ``late``: None, or
    the settings of :func:`stsim.baselines.trajectory_smc.track_late` (the answers from its
    first step on replaced by the resample-move sampler over the trajectory's parameters;
    proximity only).  Returns positions (k, 2)
    and emission times (k,) or None.

    Raises ``ValueError`` for another modality."""
    from ..sim.readings import readings_to_array
    inp = task.inputs
    m = inp["modality"]
    if m not in ("proximity", "toa"):
        raise ValueError(f"{task.id}: particle_track handles proximity and ToA tracking, not {m!r}")
    z = readings_to_array(inp["readings"], pairs=False, stepped=True)
    s = np.asarray(inp["sensors"], float)
    if m == "proximity":
        for key, val in PROXIMITY_SETTINGS.items():
            kw.setdefault(key, val)
    index, full, lib = on_step_grid(task, z, kw.pop("lib_size", 4000))
    n, duration = task_schedule(task)[:2]
    n_lib, span = step_grid(n, duration, len(full))
    t_rel = np.linspace(0.0, span, n_lib)[:len(full)]
    if m == "proximity":
        model = _Model("proximity", s, full, radius=float(inp["radius"]))
    else:
        noise = (inp.get("sensor_model") or {}).get("noise") or {}
        half = float(noise["half_width"]) if "half_width" in noise else 2.0 * float(noise.get("sigma", 0.005))
        emit = inp.get("times")
        known = None
        if emit is not None:
            known = np.full(len(full), np.nan)
            known[index] = np.asarray(emit, float)
            known[np.isnan(known)] = np.interp(np.flatnonzero(np.isnan(known)), index, known[index])
        model = _Model("toa", s, full, speed=float(inp["wave_speed"]), half=half, emit=known,
                       t_rel=t_rel)
        kw.setdefault("aligned_start", True)
        if known is not None:
            kw.setdefault("jerk_scale", 4.0)
        else:  # 1000 particles: as accurate as 1500 on 30 tasks (seed 7), a third cheaper
            kw.setdefault("n_particles", 1000)
            kw.setdefault("cells", 121)
    refit = kw.pop("refit", None)
    smooth = kw.pop("smooth", None)
    late = kw.pop("late", None)
    widened: list = []
    pos, t = particle_track(model, lib, len(full), seed=seed, _eps_log=widened, **kw)
    if t is not None and max(widened) > SCHEDULE_BREAK:
        # the readings contradict the shot schedule (steps missing from the task, another
        # firing rate): estimate each step's emission time on its own
        model.t_rel = None
        pos, t = particle_track(model, lib, len(full), seed=seed, **kw)
    bounded = ((inp.get("sensor_model") or {}).get("noise") or {}).get("kind") != "gaussian"
    refine = (refit is not None or smooth is not None) and m == "toa" and bounded   # both need bounded noise
    sample = late is not None and m == "proximity"
    if refine or sample:                                     # the readings on the step grid
        from dataclasses import replace

        from .trajectory_posterior import task_readings
        r = task_readings(task)
        z_grid = np.full((len(full), *r.z.shape[1:]), np.nan)
        z_grid[index] = r.z
        r = replace(r, z=z_grid)
    if refine:
        from .trajectory_smoother import smooth_then_refit
        if model.emit is None and model.t_rel is None:
            smooth = None       # the shot schedule broke: each step's emission time is its own
        pos, t0, _ = smooth_then_refit(task, r, pos, smooth, refit, emit=model.emit,
                                       t_rel=None if model.emit is not None else t_rel,
                                       t_start=None if t is None else t - t_rel)
        if t is not None and t0 is not None:
            t = np.where(np.isfinite(t0), t0 + t_rel, t)
    if sample:
        from .trajectory_smc import track_late
        pos = track_late(task, r, pos, seed=seed, **late)[0]
    return in_domain(task, pos[index]), None if t is None else t[index]
