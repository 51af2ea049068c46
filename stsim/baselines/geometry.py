"""First-principle position estimators shared by the localisation and tracking baselines
(STARK Appendix 7.6, Table 9).  Pure functions on numpy arrays; ``None`` means "no estimate".

Units: plane units (km for event tasks); bearings in degrees, CCW from +x at the sensor; times
in the task's unit.  Every estimator is bounded to the task's domain ([0, 10]^2 by default),
which every STARK prompt states.

Failure modes, documented once here:

* **Geometric dilution of precision (GDOP).** Nearly collinear sensors (or a target on the line
  through two bearing sensors) make the normal equations ill-conditioned; the estimate's error
  then grows far beyond the reading noise.  The multi-start search below avoids *local* minima,
  but cannot remove the ambiguity itself.
* **Too few readings.** Two ranges give two mirror-image solutions (we return the one with the
  lower cost inside the domain); fewer readings than unknowns give ``None``.
"""
from __future__ import annotations

import numpy as np
import shapely
from scipy.optimize import least_squares

DOMAIN = (0.0, 10.0)


def wrap_pi(a: np.ndarray) -> np.ndarray:
    """Wrap angles (radians) into (-pi, pi]."""
    return -((-np.asarray(a) + np.pi) % (2 * np.pi) - np.pi)


def _grid(domain=DOMAIN, n: int = 21) -> np.ndarray:
    g = np.linspace(domain[0], domain[1], n)
    xx, yy = np.meshgrid(g, g)
    return np.column_stack([xx.ravel(), yy.ravel()])


def _best_starts(cost: np.ndarray, pts: np.ndarray, k: int) -> np.ndarray:
    idx = np.argsort(cost)[:k]
    return pts[idx]


def _bounded(x0: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.clip(x0, lo + 1e-9, hi - 1e-9)


def _multistart(res, jac, starts, lo, hi, good_cost: float):
    """Bounded nonlinear least squares (scipy ``least_squares``, method ``trf``) from each start
    in turn, keeping the lowest cost and stopping early once the cost is at most
    ``good_cost`` (residuals are scaled by their noise level, so a consistent fit has a cost
    of about half the number of residuals or less)."""
    best = None
    for x0 in starts:
        sol = least_squares(res, _bounded(np.asarray(x0, float), lo, hi), jac=jac,
                            bounds=(lo, hi), method="trf")
        if best is None or sol.cost < best.cost - 1e-15:
            best = sol
        if best.cost <= good_cost:
            break
    return best


# ---------------------------------------------------------------------------- multilateration
def linearized_multilateration(sensors: np.ndarray, ranges: np.ndarray) -> np.ndarray | None:
    """Closed-form least-squares start: subtract the last circle equation from the others,
    ``2 (s_m - s_i) . p = r_i^2 - r_m^2 - |s_i|^2 + |s_m|^2``.  Needs >= 3 non-collinear
    sensors; returns ``None`` if the system is rank-deficient."""
    if len(ranges) < 3:
        return None
    sm, rm = sensors[-1], ranges[-1]
    A = 2.0 * (sm - sensors[:-1])
    b = ranges[:-1] ** 2 - rm ** 2 - np.sum(sensors[:-1] ** 2, axis=1) + np.sum(sm ** 2)
    sol, _, rank, _ = np.linalg.lstsq(A, b, rcond=None)
    return sol if rank == 2 else None


def multilaterate(sensors: np.ndarray, ranges: np.ndarray, domain=DOMAIN,
                  relative_noise: bool = True, noise_scale: float = 0.01) -> np.ndarray | None:
    """Nonlinear least-squares multilateration (STARK Table 9, "Range-only").

    Minimises ``sum_i ((r_i - |p - s_i|) / w_i)^2`` with ``w_i = noise_scale * r_i`` for
    relative (Table 7) noise, else ``noise_scale``, over ``p`` in the domain, started from the linearised closed form and from the
    best points of a coarse 21 x 21 grid (so poor geometry does not trap it in a local minimum).

    Args:
        sensors: (m, 2); ranges: (m,) with NaN for missing readings.
    Returns: (2,) estimate, or ``None`` with fewer than 2 usable readings.
    """
    ok = np.isfinite(ranges)
    s, r = sensors[ok], ranges[ok]
    if len(r) < 2:
        return None
    w = (np.maximum(r, 0.05) if relative_noise else np.ones_like(r)) * noise_scale
    lo, hi = np.array([domain[0]] * 2), np.array([domain[1]] * 2)

    def res(p):
        return (r - np.hypot(p[0] - s[:, 0], p[1] - s[:, 1])) / w

    def jac(p):
        d = np.maximum(np.hypot(p[0] - s[:, 0], p[1] - s[:, 1]), 1e-9)
        return -np.column_stack([(p[0] - s[:, 0]) / d, (p[1] - s[:, 1]) / d]) / w[:, None]

    grid = _grid(domain)
    d = np.hypot(grid[:, None, 0] - s[None, :, 0], grid[:, None, 1] - s[None, :, 1])
    gcost = np.sum(((r - d) / w) ** 2, axis=1)
    starts = list(_best_starts(gcost, grid, 3))
    lin = linearized_multilateration(s, r)
    if lin is not None and np.all(np.isfinite(lin)):
        starts.insert(0, lin)
    return _multistart(res, jac, starts, lo, hi, 0.5 * len(r)).x


# ------------------------------------------------------------------------------ triangulation
def triangulate(sensors: np.ndarray, bearings_deg: np.ndarray, domain=DOMAIN) -> np.ndarray | None:
    """Bearing-only triangulation (STARK Table 9): intersect the bearing lines by weighted
    linear least squares on ``n_i . p = n_i . s_i`` (``n_i`` the line normal), reweighted by
    1/distance (perpendicular error grows with range), then refined by nonlinear least squares
    on the wrapped angle residuals, bounded to the domain.

    Returns (2,) or ``None`` with fewer than 2 usable bearings or parallel bearing lines.
    """
    ok = np.isfinite(bearings_deg)
    s, th = sensors[ok], np.radians(bearings_deg[ok])
    if len(th) < 2:
        return None
    n = np.column_stack([-np.sin(th), np.cos(th)])
    b = np.sum(n * s, axis=1)
    w = np.ones(len(th))
    p = None
    for _ in range(3):
        A, bb = n * w[:, None], b * w
        sol, _, rank, sv = np.linalg.lstsq(A, bb, rcond=None)
        if rank < 2:
            break
        p = sol
        w = 1.0 / np.maximum(np.hypot(p[0] - s[:, 0], p[1] - s[:, 1]), 0.1)
    lo, hi = np.array([domain[0]] * 2), np.array([domain[1]] * 2)

    sb = 2 * np.pi * 0.01  # residual scale: STARK Table 7 bearing half-width (rad)

    def res(q):
        return wrap_pi(np.arctan2(q[1] - s[:, 1], q[0] - s[:, 0]) - th) / sb

    def jac(q):
        dx, dy = q[0] - s[:, 0], q[1] - s[:, 1]
        d2 = np.maximum(dx * dx + dy * dy, 1e-12)
        return np.column_stack([-dy / d2, dx / d2]) / sb

    grid = _grid(domain)
    ang = np.arctan2(grid[:, None, 1] - s[None, :, 1], grid[:, None, 0] - s[None, :, 0])
    gcost = np.sum(wrap_pi(ang - th[None, :]) ** 2, axis=1)
    starts = list(_best_starts(gcost, grid, 3))
    if p is not None:
        starts.insert(0, p)
    return _multistart(res, jac, starts, lo, hi, 0.5 * len(th)).x


# ---------------------------------------------------------------------- range + bearing fusion
def range_bearing_fix(sensors: np.ndarray, rb: np.ndarray, range_sigma: float = 0.01,
                      bearing_sigma_rad: float = 2 * np.pi * 0.01, domain=DOMAIN) -> np.ndarray | None:
    """Fuse range and bearing readings (STARK Table 9, "Range + bearing").

    Each sensor alone gives ``s_i + r_i (cos b_i, sin b_i)``, with errors proportional to
    ``r_i``; these are averaged with weights ``1 / r_i^2`` and refined by nonlinear least squares
    on both residual kinds, each scaled by its noise level (``range_sigma * r_i`` and
    ``bearing_sigma_rad``).

    Args: sensors (m, 2); rb (m, 2) of ``[range, bearing_deg]``, NaN rows missing.
    Returns: (2,) or ``None`` if no sensor reported.
    """
    ok = np.all(np.isfinite(rb), axis=1)
    s, r, th = sensors[ok], rb[ok, 0], np.radians(rb[ok, 1])
    if len(r) == 0:
        return None
    pts = s + r[:, None] * np.column_stack([np.cos(th), np.sin(th)])
    w = 1.0 / np.maximum(r, 1e-3) ** 2
    x0 = np.sum(pts * w[:, None], axis=0) / np.sum(w)
    lo, hi = np.array([domain[0]] * 2), np.array([domain[1]] * 2)
    sr = np.maximum(range_sigma * r, 1e-4)

    def res(q):
        d = np.hypot(q[0] - s[:, 0], q[1] - s[:, 1])
        a = np.arctan2(q[1] - s[:, 1], q[0] - s[:, 0])
        return np.concatenate([(r - d) / sr, wrap_pi(a - th) / bearing_sigma_rad])

    def jac(q):
        dx, dy = q[0] - s[:, 0], q[1] - s[:, 1]
        d2 = np.maximum(dx * dx + dy * dy, 1e-12)
        d = np.sqrt(d2)
        return np.vstack([-np.column_stack([dx / d, dy / d]) / sr[:, None],
                          np.column_stack([-dy / d2, dx / d2]) / bearing_sigma_rad])

    return _multistart(res, jac, [x0], lo, hi, np.inf).x


# ---------------------------------------------------------------------------------- proximity
#: Numerical slack (plane units) of the feasibility test on binary floats.
FEASIBLE_TOL = 1e-9
#: Below this area (plane units^2) the feasible set counts as degenerate (a point, an arc, a
#: sliver): its polygonal inner approximation is unreliable and its best point is returned.
DEGENERATE_AREA = 1e-6


def _disk(x: float, y: float, radius: float, quad_segs: int, outer: bool):
    """Polygonal disk with ``4 * quad_segs`` vertices: inscribed (vertices on the circle, a
    subset of the disk) or circumscribed (edges tangent to it, a superset)."""
    n = 4 * quad_segs
    r = radius / np.cos(np.pi / n) if outer else radius
    return shapely.Point(x, y).buffer(r, quad_segs=quad_segs)


def feasible_region(sensors: np.ndarray, hits: np.ndarray, radius: float, domain=DOMAIN,
                    quad_segs: int = 32, approx: str = "inner"):
    """The set of positions consistent with binary disk readings: the domain square,
    intersected with every detecting sensor's closed disk, minus every silent sensor's disk
    (shapely geometry; NaN readings ignored).  Disks are polygons with ``4 * quad_segs``
    vertices, so the result approximates the exact set F: ``approx="inner"`` gives a subset of
    F (inscribed detection disks, circumscribed silent ones), ``"outer"`` a superset.  A set
    of zero area (tangent disks) has an empty inner approximation: use
    :func:`proximity_estimate`, which does not rely on the polygons."""
    box = shapely.box(domain[0], domain[0], domain[1], domain[1])
    region = box
    for (x, y), h in zip(sensors, hits):
        if not np.isfinite(h):
            continue
        hit = h >= 0.5
        disk = _disk(x, y, radius, quad_segs, outer=(hit == (approx == "outer")))
        region = region.intersection(disk) if hit else region.difference(disk)
    return region


def proximity_margin(pts: np.ndarray, sensors: np.ndarray, hits: np.ndarray, radius: float,
                     domain=DOMAIN) -> np.ndarray:
    """(N, 2) -> (N,) signed clearance of each position from violating a reading (plane
    units): the smallest of ``r - d_i`` over detecting sensors, ``d_j - r`` over silent ones
    and the distances to the domain's sides.  A position lies in the feasible set F exactly
    when its margin is >= 0 (> 0 against silent disks: a position on a silent sensor's circle
    would be detected)."""
    pts = np.atleast_2d(np.asarray(pts, float))
    ok = np.isfinite(hits)
    s, h = sensors[ok], hits[ok] >= 0.5
    d = np.hypot(pts[:, None, 0] - s[None, :, 0], pts[:, None, 1] - s[None, :, 1])
    m = np.where(h[None, :], radius - d, d - radius)
    edge = np.concatenate([pts - domain[0], domain[1] - pts], axis=1)
    return np.min(np.concatenate([m, edge], axis=1), axis=1)


def _min_enclosing_centre(pts: np.ndarray) -> np.ndarray:
    """Centre of the smallest circle enclosing ``pts`` (m, 2): it maximises the smallest
    ``r - d_i``, so for detections alone it is the feasible point deepest inside every disk
    (the tangent point of two tangent disks).  Exact for 1-3 points; for more, the best of all
    pair midpoints and triple circumcentres (m <= 10 sensors here)."""
    best, best_r = None, np.inf
    m = len(pts)
    cands = [pts[i] for i in range(m)]
    cands += [0.5 * (pts[i] + pts[j]) for i in range(m) for j in range(i + 1, m)]
    for i in range(m):
        for j in range(i + 1, m):
            for k in range(j + 1, m):
                a, b, c = pts[i], pts[j], pts[k]
                d = 2 * (a[0] * (b[1] - c[1]) + b[0] * (c[1] - a[1]) + c[0] * (a[1] - b[1]))
                if abs(d) < 1e-12:
                    continue
                ux = ((a @ a) * (b[1] - c[1]) + (b @ b) * (c[1] - a[1]) + (c @ c) * (a[1] - b[1])) / d
                uy = ((a @ a) * (c[0] - b[0]) + (b @ b) * (a[0] - c[0]) + (c @ c) * (b[0] - a[0])) / d
                cands.append(np.array([ux, uy]))
    for c in cands:
        r = np.max(np.hypot(*(pts - c).T))
        if r < best_r - 1e-15:
            best, best_r = c, r
    return np.asarray(best, float)


def deepest_point(sensors: np.ndarray, hits: np.ndarray, radius: float,
                  domain=DOMAIN) -> tuple[np.ndarray, float]:
    """The position of largest :func:`proximity_margin` (a Chebyshev-centre analogue for disk
    readings) and that margin.  Starts: the smallest enclosing circle's centre of the
    detecting sensors, the centroid of the outer polygonal approximation, and the best points
    of a 41 x 41 grid; each refined by SLSQP on ``max t  s.t.  margin_i(p) >= t``."""
    from scipy.optimize import minimize
    ok = np.isfinite(hits)
    s, h = sensors[ok], hits[ok] >= 0.5
    lo, hi = domain
    starts = []
    if h.any():
        starts.append(_min_enclosing_centre(s[h]))
    outer = feasible_region(sensors, hits, radius, domain, approx="outer")
    if not outer.is_empty:
        starts.append(np.array(outer.representative_point().coords[0]))
    g = np.linspace(lo, hi, 41)
    grid = np.array(np.meshgrid(g, g)).reshape(2, -1).T
    starts += list(grid[np.argsort(-proximity_margin(grid, sensors, hits, radius, domain))[:3]])
    sign = np.where(h, -1.0, 1.0)

    def cons(z):
        d = np.hypot(z[0] - s[:, 0], z[1] - s[:, 1])
        return np.concatenate([sign * (d - radius) - z[2], [z[0] - lo - z[2], hi - z[0] - z[2],
                                                             z[1] - lo - z[2], hi - z[1] - z[2]]])

    best, best_m = None, -np.inf
    for x0 in starts:
        x0 = np.clip(np.asarray(x0, float), lo, hi)
        cand = [x0]
        m0 = float(proximity_margin(x0, sensors, hits, radius, domain)[0])
        sol = minimize(lambda z: -z[2], np.array([*x0, m0]), method="SLSQP",
                       constraints=[{"type": "ineq", "fun": cons}],
                       bounds=[(lo, hi), (lo, hi), (None, None)], options={"ftol": 1e-14, "maxiter": 200})
        if np.all(np.isfinite(sol.x)):
            cand.append(np.clip(sol.x[:2], lo, hi))
        for c in cand:
            mc = float(proximity_margin(c, sensors, hits, radius, domain)[0])
            if mc > best_m:
                best, best_m = c, mc
    return best, best_m


def proximity_estimate(sensors: np.ndarray, hits: np.ndarray, radius: float, domain=DOMAIN,
                       tol: float = FEASIBLE_TOL) -> tuple[np.ndarray | None, str]:
    """Minimum-mean-square-error position from binary disk readings under a uniform prior on
    the domain, always inside the exact feasible set F (STARK Table 9, "Proximity"; F = the
    detecting sensors' closed disks minus the silent sensors' disks, within the domain).

    * F of reasonable area: the centroid of F (computed on the inner polygonal approximation,
      :func:`feasible_region`); if F is not convex and the centroid falls outside it, the
      point of F nearest the centroid.
    * F of area below :data:`DEGENERATE_AREA` (tangent disks: a single point; a thin lens; a
      sliver): its deepest point (:func:`deepest_point`), which for a single point is that
      point -- polygonal disks would lose it.
    * F empty (readings contradict each other by more than ``tol`` plane units, e.g. after
      sensor positions were rounded): ``None`` and the reason.

    ``tol`` also bounds how far outside F (in margin, plane units) a returned point may lie.

    Args:
        sensors: (m, 2) plane units; hits: (m,) 1 detected / 0 silent / NaN missing;
        radius: detection radius (closed disk).
    Returns: ``((2,) estimate or None, reason when None)``.
    """
    ok = np.isfinite(hits)
    if not ok.any():
        return None, "no usable proximity reading"
    inner = feasible_region(sensors, hits, radius, domain, quad_segs=64, approx="inner")
    if not inner.is_empty and inner.area > DEGENERATE_AREA:
        c = np.array(inner.centroid.coords[0])
        if proximity_margin(c, sensors, hits, radius, domain)[0] >= -tol:
            return c, ""
        from shapely.ops import nearest_points
        q = nearest_points(inner, shapely.Point(*c))[0]
        return np.array(q.coords[0]), ""
    p, m = deepest_point(sensors, hits, radius, domain)
    silent = sensors[ok][hits[ok] < 0.5]
    on_silent = bool(len(silent)) and np.min(np.abs(np.hypot(*(silent - p).T) - radius)) <= tol
    if m >= -tol and not (m <= tol and on_silent):
        return p, ""
    n_hit = int((hits[ok] >= 0.5).sum())
    miss = (f"the best position misses by {-m:.3g} units" if m < -tol else
            "the only candidates lie on a silent sensor's circle, where it would detect")
    return None, (f"inconsistent readings: no position within r = {radius:g} of all {n_hit} "
                  f"detecting sensor(s) and outside the disks of the {int(ok.sum()) - n_hit} "
                  f"silent one(s) ({miss})")


def proximity_grid_search(sensors: np.ndarray, hits: np.ndarray, radius: float, domain=DOMAIN,
                          step: float = 0.05) -> np.ndarray | None:
    """STARK's proximity baseline (Appendix 7.6): a grid search minimising the number of
    readings a candidate position contradicts; ties are resolved by averaging all minimisers
    (the paper does not say how it breaks ties)."""
    ok = np.isfinite(hits)
    if not ok.any():
        return None
    g = np.arange(domain[0], domain[1] + step / 2, step)
    xx, yy = np.meshgrid(g, g)
    pts = np.column_stack([xx.ravel(), yy.ravel()])
    s, h = sensors[ok], hits[ok]
    inside = np.hypot(pts[:, None, 0] - s[None, :, 0], pts[:, None, 1] - s[None, :, 1]) <= radius
    cost = np.sum(inside != (h[None, :] >= 0.5), axis=1)
    return pts[cost == cost.min()].mean(axis=0)


def proximity_mmse(sensors: np.ndarray, hits: np.ndarray, radius: float,
                   domain=DOMAIN, tol: float = FEASIBLE_TOL) -> np.ndarray | None:
    """:func:`proximity_estimate` without the reason: the estimate, or ``None`` when there is
    no usable reading or the readings are inconsistent."""
    return proximity_estimate(sensors, hits, radius, domain, tol)[0]


# ------------------------------------------------------------------------- time of arrival fit
def toa_fit(sensors: np.ndarray, times: np.ndarray, speed: float, domain=DOMAIN,
            prior: tuple[np.ndarray, float] | None = None) -> tuple[np.ndarray, float] | None:
    """Nonlinear least squares over position and emission time (STARK Table 9, "Event-based"):
    minimise ``sum_i (T_i - t0 - |p - s_i| / v)^2``.

    Starts: for each point of a 21 x 21 grid the optimal ``t0`` is the mean of
    ``T_i - |p - s_i| / v`` (closed form), and the three best grid points start the solver.
    ``prior = (p_prev, sigma)`` adds the pseudo-residual ``(p - p_prev) / sigma`` (tracking with
    history); with a prior one reading suffices, without one three are needed.

    Returns ``(p (2,), t0)`` or ``None``.
    """
    ok = np.isfinite(times)
    s, T = sensors[ok], times[ok]
    need = 1 if prior is not None else 3
    if len(T) < need:
        return None
    lo = np.array([domain[0], domain[0], -np.inf])
    hi = np.array([domain[1], domain[1], np.inf])
    scale = 0.01  # ToA noise level: makes the prior weight comparable

    def res(q):
        d = np.hypot(q[0] - s[:, 0], q[1] - s[:, 1])
        r = (T - q[2] - d / speed) / scale
        if prior is not None:
            r = np.concatenate([r, (q[:2] - prior[0]) / prior[1]])
        return r

    def jac(q):
        dx, dy = q[0] - s[:, 0], q[1] - s[:, 1]
        d = np.maximum(np.hypot(dx, dy), 1e-9)
        J = np.column_stack([-dx / (d * speed), -dy / (d * speed), -np.ones_like(d)]) / scale
        if prior is not None:
            J = np.vstack([J, np.array([[1.0 / prior[1], 0, 0], [0, 1.0 / prior[1], 0]])])
        return J

    starts = []
    if prior is not None:
        p0 = np.clip(prior[0], domain[0], domain[1])
        starts.append(np.array([*p0, np.mean(T - np.hypot(*(p0 - s).T) / speed)]))
    grid = _grid(domain)
    d = np.hypot(grid[:, None, 0] - s[None, :, 0], grid[:, None, 1] - s[None, :, 1])
    t0 = np.mean(T[None, :] - d / speed, axis=1)
    gcost = np.sum(((T[None, :] - t0[:, None] - d / speed) / scale) ** 2, axis=1)
    if prior is not None:
        gcost += np.sum(((grid - prior[0]) / prior[1]) ** 2, axis=1)
    starts += [np.array([*grid[i], t0[i]]) for i in np.argsort(gcost)[:3]]
    best = _multistart(res, jac, starts, lo, hi, 0.5 * len(T) + (2.0 if prior is not None else 0.0))
    return best.x[:2], float(best.x[2])
