"""The refit's inner loop compiled: normalised trajectories of the prior's basis motions and their
derivatives with respect to the motion parameters, one row (fit) at a time (issue 20).

:func:`stsim.baselines.trajectory_refit.trajectories_jacobian` evaluates this kernel a few
hundred times per tracking task inside Levenberg-Marquardt; as whole-array numpy code it cost
about 160 microseconds per call on this project's machines, mostly the overhead of a hundred
small array operations, and about a fifth of the event tracker's time.  Compiled with numba
(``cache=True``: compiled once, about 3 s, then loaded from numba's cache beside this module,
or from its user-wide cache where this folder is read-only) it takes about 35.  Every
floating-point operation is the one the numpy version did, in the same order, so the answers
were the same bit for bit (checked on 10 tasks of each refit family when it was introduced;
since session 27 the angles on a uniform grid are turned by rotation instead, below).

:func:`residuals_and_jacobian` does the same for the readings' residuals and their chain rule
(:meth:`stsim.baselines.trajectory_refit.ReadingResiduals.jacobian`; about 4 ms of an event
task's 65).  Its range and ToA residuals equalled the numpy version's bit for bit; a bearing's
did to the last bit only: the C library's ``atan2`` that numba calls differs from numpy's own
``arctan2`` in the last bit for about 8 % of arguments, so bearing and range+bearing answers
moved by rounding when it came in (session 17; their accuracy was measured again).  Since
session 28 the distance is ``sqrt(dx * dx + dy * dy)`` instead of ``hypot`` (which guards
against overflow these distances, 1e-12 to 30 plane units, never reach): 2.8 against 23 ns per
distance in a compiled loop, the scan of 5,000 prior draws' residuals
(:func:`~stsim.baselines.trajectory_refit.readings_fit`) about twice as fast, every answer moved by
rounding.
:func:`analytic_centre_rows` runs the analytic centre's damped Newton iterations
(:func:`stsim.baselines.trajectory_refit.analytic_centre`) one fit at a time; its shifts agreed
with those of the batched numpy version it replaced (session 17) to about 2e-11 (a different order
of summation).  :func:`damped_steps` solves the Levenberg-Marquardt step's damped system one fit
at a time and takes the step (session 24: numpy's batched LU solve and the
step's scatter, wrap and clip were about a quarter of the LM's time; the default trackers of
range, bearing, range+bearing and event about 10 % cheaper as whole processes; the same LAPACK
LU solve, so the default tracks of 8 tasks each of suite seed 7's bearing, range+bearing, event,
temporal and x-y-t families equal the numpy version's bit for bit).  Since session 27 both
:func:`damped_steps` and :func:`analytic_centre_rows` solve their symmetric positive definite
systems by :func:`spd_solve` (Cholesky; LAPACK's LU only where a pivot is not positive in
floating point): the default trackers of range and x-y-t 6-8 % cheaper (20 tasks of suite seed
7, four alternating whole-process rounds), their answers moved by rounding.  And on a uniform
time grid (every refit's) :func:`positions_and_derivatives` turns each kind's angle by a
rotation per step instead of calling ``cos`` and ``sin`` (an exact value every :data:`RESEED`
steps): its positions within 4e-14 of the direct evaluation's on the fits measured then, within
5e-11 over 100,000 prior draws (session 31: a few fast rates), range's default tracker another
8 % cheaper (x-y-t's 1 %: its time is elsewhere).  :func:`_centre_newton` is compiled with
floating-point reassociation (``fastmath`` ``reassoc`` and ``contract`` only: NaN and inf keep
their meaning), so that its sums over the readings vectorise, and :func:`path_sq_distance`
runs the draws innermost (the same sums, bit for bit, three times faster): x-y-t's default
tracker 8 % cheaper.  Since session 32 :func:`damped_steps` also forms each fit's ``J J^T`` and
``J r`` itself (reassociated sums, :func:`_normal_equations`), reading the live fits' rows of the
LM's whole Jacobian: numpy's batched products of the gathered rows took 1.7-1.9 times as long
(125-250 fits, 9-11 parameters, 40-160 residuals), the range tracker about 4 % cheaper; the
tuning-seed figures of all six refit families (8 suite seeds, 20 tasks, two filter draws) equal
to 6 digits; proximity's resample-move sampler, which calls the same LM, moved some answers by up
to 0.1 units, its trimmed error over 40 tasks of suite seeds 7, 11 and 13 the same to 4 digits.
Its entry checks the shapes (numba checks no bounds).
Since session 37 :func:`lm_iterations` runs the LM's whole loop (the proposals, the
candidates' positions, residuals and prior residuals, acceptance and damping) for the readings'
residuals: the numpy loop's bookkeeping between these kernels (gathers, scatters, index arrays,
about 45 microseconds per iteration) was a sixth of the event tracker's time.  Its costs are
summed in numpy's pairwise order (:func:`pairwise_sum`), so the default trackers' answers on 20
tasks of each refit family of suite seed 7 equal the numpy loop's bit for bit, and each tracker
is 9-15 % cheaper (event, range, range+bearing and bearing 13-15 %, temporal and x-y-t 9 %; 20
tasks each, three alternating whole-process rounds).

The motions (STARK Appendix 7.3; :mod:`stsim.sim.motion`), with ``a = omega t + phase``,
``(c, s) = (cos a, sin a)``, a heading ``theta`` with ``(ct, st)`` and ``perp(x, y) = (-y, x)``:

- linear: ``(vx t, vy t)``
- circular: ``radius (c, s)``; spiral: ``(r0 + growth t) (c, s)``
- sinusoidal: ``speed t (ct, st) + amplitude s perp(ct, st)``
- figure eight (``phase`` 0): ``amplitude s (ct, st) + amplitude s c perp(ct, st)``

The offsets (``x0``, ``y0``, ``cx``, ``cy``) are left out: the per-axis min-max normalisation to
the domain cancels them.  The positions are the sum over a row's kinds, normalised per axis,
``o = low + (A - A[k_min]) / (A[k_max] - A[k_min]) (high - low)`` (``(low + high) / 2`` on an
axis whose span is below ``1e-12``), and the derivatives follow by the quotient rule with the
extreme steps held.
"""
from __future__ import annotations

import numba
import numpy as np

# the parameters each kind's derivatives are taken by, in the kernel's numbering (``code =
# 8 kind + index``, kinds in :data:`stsim.sim.motion.BASIS_MOTIONS` order)
KIND_PARAMETERS = {"linear": ("vx", "vy"), "circular": ("radius", "omega", "phase"),
                   "sinusoidal": ("speed", "theta", "amplitude", "omega", "phase"),
                   "figure_eight": ("amplitude", "omega", "theta"),
                   "spiral": ("r0", "growth", "omega", "phase")}
_TABLES: dict = {}


def layout_tables(lay) -> tuple[np.ndarray, np.ndarray]:
    """``(code (dim,) int64, column (5, 8) int64)`` for a :class:`PriorLayout` ``lay``:
    each ``u`` column's ``8 kind + parameter index`` in :data:`KIND_PARAMETERS` (-1 for the
    offsets and the emission column, which have no derivative here), and each kind's
    parameters' columns.  Raises ``ValueError`` for a layout whose kinds are not the five basis
    motions in their usual order.  Cached per layout while it is referenced."""
    hit = _TABLES.get(id(lay))
    if hit is not None and hit[0] is lay:
        return hit[1]
    if tuple(lay.kinds) != tuple(KIND_PARAMETERS):
        raise ValueError(f"layout kinds {lay.kinds} are not {tuple(KIND_PARAMETERS)}")
    code = np.full(lay.dim, -1, np.int64)
    column = np.zeros((5, 8), np.int64)
    for j, kind in enumerate(KIND_PARAMETERS):
        for q, name in enumerate(KIND_PARAMETERS[kind]):
            c = lay.slices[kind].start + lay.names[kind].index(name)
            code[c], column[j, q] = 8 * j + q, c
    if len(_TABLES) > 64:
        _TABLES.clear()
    _TABLES[id(lay)] = (lay, (code, column))
    return code, column


#: :func:`positions_and_derivatives` on a uniform time grid: each kind's angle by a rotation of
#: the step before, from an exact ``cos`` / ``sin`` every ``RESEED`` steps (the rounding of the
#: recurrence stays near 1e-15)
RESEED = 16


@numba.njit(cache=True)
def _physical(u, lo, hi, signed):
    """One ``u`` value to its physical value (:meth:`PriorLayout.physical`, the same operations)."""
    if signed:
        s = 2 * u - 1
        return np.sign(s) * (lo + np.abs(s) * (hi - lo))
    return lo + u * (hi - lo)


@numba.njit(cache=True)
def _derivative(kind, q, tk, ca, sa, ct, st, xk, yk, amplitude):
    """``(d x / d p, d y / d p)`` of one kind's ``(x, y)`` at a step, ``p`` its parameter ``q``
    (:data:`KIND_PARAMETERS`): ``tk`` the step's time, ``(ca, sa)`` the kind's angle's cosine and
    sine there, ``(ct, st)`` its heading's, ``(xk, yk)`` its own ``(x, y)`` there."""
    if kind == 0:                                      # linear
        if q == 0:
            return tk, 0.0
        return 0.0, tk
    if kind == 1 or kind == 4:                         # circular, spiral
        if q == 0:                                     # radius, r0
            return ca, sa
        if kind == 4 and q == 1:                       # growth
            return tk * ca, tk * sa
        if (kind == 1 and q == 1) or (kind == 4 and q == 2):   # omega: t perp(x, y)
            return (yk * -1.0) * tk, (xk * 1.0) * tk
        return yk * -1.0, xk * 1.0                     # phase: perp(x, y)
    mst, ctp = st * -1.0, ct * 1.0                     # perp(ct, st)
    if kind == 2:                                      # sinusoidal
        if q == 0:                                     # speed
            return tk * ct, tk * st
        if q == 2:                                     # amplitude
            return sa * mst, sa * ctp
        if q == 3:                                     # omega
            w = (amplitude * ca) * tk
            return w * mst, w * ctp
        if q == 4:                                     # phase
            w = amplitude * ca
            return w * mst, w * ctp
        return yk * -1.0, xk * 1.0                     # theta: perp(x, y)
    if q == 0:                                         # figure eight: amplitude
        sc = sa * ca
        return sa * ct + sc * mst, sa * st + sc * ctp
    if q == 1:                                         # omega
        w1 = (amplitude * ca) * tk
        w2 = (amplitude * (ca * ca - sa * sa)) * tk
        return w1 * ct + w2 * mst, w1 * st + w2 * ctp
    return yk * -1.0, xk * 1.0                         # theta


@numba.njit(cache=True)
def positions_and_derivatives(u, mask, t, cols, valid, scale, m, low, high, code, column, lo, hi, signed,
                              derivatives):
    """Normalised positions and their derivatives, row by row (the module docstring's formulas).

    Args: u (N, dim) parameters in [0, 1]; mask (N, 5) bool each row's kinds; t (n,) step
        times (s); cols (N, P) int64 the ``u`` columns to differentiate by, where valid (N, P)
        bool; scale (N, P) ``d physical / d u`` of those columns (0 where a column is fixed or
        padding); m the steps whose derivatives are returned (``0..m-1``); low, high the
        domain; code, column: :func:`layout_tables`; lo, hi, signed (dim,) the layout's
        parameter ranges; derivatives: False for the positions alone.
    Returns: ``(pos (2, N, n), g (2, N, P, m))`` (axis first: the caller returns transposed
        views, the memory layout of the numpy version), ``g`` zero where not ``valid``, for
        the offsets and emission columns, and on an axis with no span (``(0, 0, 0, 0)``-shaped
        without ``derivatives``)."""
    N, n, P = u.shape[0], t.shape[0], cols.shape[1]
    present = np.zeros(5, np.bool_)
    for i in range(N):
        for j in range(5):
            present[j] |= mask[i, j]
    pos = np.empty((2, N, n))
    g = np.zeros((2, N, P, m)) if derivatives else np.zeros((2, 0, 0, 0))
    CA, SA = np.zeros((5, n)), np.zeros((5, n))        # each kind's (cos, sin) of its angle
    XK, YK = np.zeros((5, n)), np.zeros((5, n))        # each kind's (x, y)
    CT, ST, AMP = np.zeros(5), np.zeros(5), np.zeros(5)
    XY = np.zeros((2, n))
    kext = np.zeros((2, 2), np.int64)                  # (axis, min / max) step
    lo_ax, s_ax = np.zeros(2), np.zeros(2)
    flat = np.zeros(2, np.bool_)
    par = np.zeros(8)
    dlo, dspan = np.zeros(2), np.zeros(2)           # each axis' extreme steps' derivatives
    dt = t[1] - t[0] if n > 1 else 0.0                # a uniform grid: the angles by rotation
    uniform = n > 1
    for k in range(n):
        uniform &= abs(t[k] - (t[0] + k * dt)) <= 1e-12 * (1.0 + abs(t[k]))
    for i in range(N):
        XY[:] = 0.0
        for j in range(5):
            if not present[j]:
                continue
            on = mask[i, j]
            for q in range(8):                         # a kind a row lacks: its parameters 0
                c = column[j, q]
                par[q] = _physical(u[i, c], lo[c], hi[c], signed[c]) if on else 0.0
            if j == 0:
                for k in range(n):
                    XK[0, k], YK[0, k] = par[0] * t[k], par[1] * t[k]
            else:
                if j == 1:
                    om, ph = par[1], par[2]
                elif j == 2:
                    om, ph = par[3], par[4]
                elif j == 3:
                    om, ph = par[1], 0.0
                else:
                    om, ph = par[2], par[3]
                if not on:
                    for k in range(n):
                        CA[j, k], SA[j, k] = 0.0, 0.0
                elif uniform:                          # a rotation by omega dt per step, from an
                    cd, sd = np.cos(om * dt), np.sin(om * dt)   # exact value every RESEED steps
                    for k in range(n):
                        if k % RESEED == 0:
                            a = om * t[k] + ph
                            CA[j, k], SA[j, k] = np.cos(a), np.sin(a)
                        else:
                            c, s = CA[j, k - 1], SA[j, k - 1]
                            CA[j, k], SA[j, k] = c * cd - s * sd, s * cd + c * sd
                else:
                    for k in range(n):
                        a = om * t[k] + ph
                        CA[j, k], SA[j, k] = np.cos(a), np.sin(a)
                if j == 1 or j == 4:
                    for k in range(n):
                        r = par[0] if j == 1 else par[0] + par[1] * t[k]
                        XK[j, k], YK[j, k] = r * CA[j, k], r * SA[j, k]
                else:
                    th = par[1] if j == 2 else par[2]
                    ct, st = np.cos(th), np.sin(th)
                    amp = par[2] if j == 2 else par[0]
                    CT[j], ST[j], AMP[j] = ct, st, amp
                    mst, ctp = st * -1.0, ct * 1.0
                    for k in range(n):
                        if j == 2:
                            w1, w2 = par[0] * t[k], amp * SA[j, k]
                        else:
                            w1, w2 = amp * SA[j, k], amp * (SA[j, k] * CA[j, k])
                        XK[j, k], YK[j, k] = w1 * ct + w2 * mst, w1 * st + w2 * ctp
            for k in range(n):
                XY[0, k] += XK[j, k]
                XY[1, k] += YK[j, k]
        for ax in range(2):                            # per-axis min-max normalisation
            k0, k1 = 0, 0
            for k in range(1, n):
                if XY[ax, k] < XY[ax, k0]:
                    k0 = k
                if XY[ax, k] > XY[ax, k1]:
                    k1 = k
            kext[ax, 0], kext[ax, 1] = k0, k1
            lo_ax[ax] = XY[ax, k0]
            span = XY[ax, k1] - lo_ax[ax]
            flat[ax] = span < 1e-12
            s_ax[ax] = 1.0 if flat[ax] else span
            for k in range(n):
                if flat[ax]:
                    pos[ax, i, k] = 0.5 * (low + high)
                else:
                    pos[ax, i, k] = low + ((XY[ax, k] - lo_ax[ax]) / s_ax[ax]) * (high - low)
        if not derivatives:
            continue
        for p in range(P):
            c = cols[i, p]
            if not valid[i, p] or code[c] < 0 or (flat[0] and flat[1]):
                continue
            j, q, sc = code[c] // 8, code[c] % 8, scale[i, p]
            # one call site of _derivative (compiles once): first each axis' extreme steps
            # (min, then max), then steps 0..m-1
            for r in range(m + 4):
                kk = kext[r // 2, r % 2] if r < 4 else r - 4
                gx, gy = _derivative(j, q, t[kk], CA[j, kk], SA[j, kk], CT[j], ST[j], XK[j, kk], YK[j, kk], AMP[j])
                if r < 4:
                    ax = r // 2
                    v = (gx if ax == 0 else gy) * sc
                    if r % 2 == 0:
                        dlo[ax] = v
                    else:
                        dspan[ax] = v - dlo[ax]
                    continue
                k = r - 4
                if not flat[0]:
                    g[0, i, p, k] = ((gx * sc - dlo[0]) - ((XY[0, k] - lo_ax[0]) / s_ax[0]) * dspan[0]) * (
                        (high - low) / s_ax[0])
                if not flat[1]:
                    g[1, i, p, k] = ((gy * sc - dlo[1]) - ((XY[1, k] - lo_ax[1]) / s_ax[1]) * dspan[1]) * (
                        (high - low) / s_ax[1])
    return pos, g


#: reading kinds of :func:`residuals_and_jacobian` (``ReadingResiduals``' parts)
READING_KINDS = {"range": 0, "bearing": 1, "toa": 2, "interval": 3}


@numba.njit(cache=True, error_model="numpy")   # x / 0: inf or nan, as numpy
def residuals_and_jacobian(Pt, Dt, kind, step, sx, sy, val, tk, t0, bounds, sigma, speed, emit_col, emit_scale,
                           jacobian, extra):
    """Each reading's signed residual in units of its noise bound and its derivatives by the
    fit's parameters through the chain rule, row by row
    (:meth:`stsim.baselines.trajectory_refit.ReadingResiduals.jacobian`, the same operations
    in the same order).

    Args: Pt (2, N, n) positions, axis first; Dt (2, N, P, >= max(step) + 1) their
        derivatives; kind (R,) int64 :data:`READING_KINDS`; step (R,) int64 each reading's
        step; sx, sy (R,) its sensor's position; val (R,) its value (plane units; bearings in
        radians; ToA in s; an interval's centre, plane units); tk (R,) its step's time (ToA),
        or an interval's half-width (plane units); t0 (N,) each fit's first emission
        time (zeros when none); bounds (3,) the range residual's rounding ``h``, the bearing's
        and the ToA's noise bounds ``b``; sigma the range noise's relative sigma; speed the
        ToA signal speed; emit_col (N, P) bool the emission time's column, ``emit_scale`` its
        range in s; jacobian: False for the residuals alone, from the undamped distance;
        extra: columns left after the readings' for the caller to fill (a prior's residuals).
    Returns: ``(r (N, R + extra), J (N, P, R + extra))`` (``(0, 0, 0)``-shaped without
        ``jacobian``), the extra columns 0:
        range ``r = (z - d) / (sigma d + h)``, ``dr/dd = -(sigma z + h) / (sigma d + h)^2``;
        bearing ``r = wrap(z - atan2(dy, dx)) / b``, ``dr/dp = (dy, -dx) / (d^2 b)``; ToA
        ``r = (z - t0 - t_k - d / v) / b``, ``dr/dp = -(dx, dy) / (d v b)`` and
        ``dr/du = -emit_scale / b`` in the emission column; interval (a proximity detection:
        the distance within ``[0, radius]`` or beyond it) ``r = (c - d) / w`` with ``c`` the
        interval's centre (``val``) and ``w`` its half-width (``tk``), ``dr/dp = -(dx, dy) /
        (d w)``; ``d`` the distance floored at
        ``1e-12`` with ``jacobian``."""
    N, P, R = Pt.shape[1], Dt.shape[2], kind.shape[0]
    out = np.empty((N, R + extra))
    jac = np.empty((N, P, R + extra)) if jacobian else np.empty((0, 0, 0))
    h, bb, tb = bounds[0], bounds[1], bounds[2]
    GX, GY = np.empty(R), np.empty(R)                 # a row's d r / d (x, y), per reading
    for i in range(N):
        for r in range(R, R + extra):
            out[i, r] = 0.0
            if jacobian:
                for p in range(P):
                    jac[i, p, r] = 0.0
        for r in range(R):
            k, c = step[r], kind[r]
            dx, dy = Pt[0, i, k] - sx[r], Pt[1, i, k] - sy[r]
            d = np.sqrt(dx * dx + dy * dy)
            if jacobian and d < 1e-12:
                d = 1e-12
            if c == 1:
                out[i, r] = -((-(val[r] - np.arctan2(dy, dx)) + np.pi) % (2 * np.pi) - np.pi) / bb
            elif c == 0:
                out[i, r] = (val[r] - d) / (sigma * d + h)
            elif c == 3:
                out[i, r] = (val[r] - d) / tk[r]
            else:
                out[i, r] = (val[r] - t0[i] - tk[r] - d / speed) / tb
            if not jacobian:
                continue
            if c == 1:
                gx, gy = dy / (d * d * bb), -dx / (d * d * bb)
            else:
                if c == 0:
                    f = -(sigma * val[r] + h) / ((sigma * d + h) * (sigma * d + h) * d)
                elif c == 3:
                    f = -1.0 / (tk[r] * d)
                else:
                    f = -1.0 / (speed * tb * d)
                gx, gy = f * dx, f * dy
            GX[r], GY[r] = gx, gy
        if not jacobian:
            continue
        for p in range(P):                            # then the chain rule, a parameter at a
            e = emit_col[i, p]                         # time (J's rows contiguous)
            for r in range(R):
                k = step[r]
                g = Dt[0, i, p, k] * GX[r] + Dt[1, i, p, k] * GY[r]
                if e and kind[r] == 2:
                    g -= emit_scale / tb
                jac[i, p, r] = g
    return out, jac


@numba.njit(cache=True, error_model="numpy")
def analytic_centre_rows(s0, J, valid, iters, tol, du0, warm, rounds):
    """The damped Newton iterations of
    :func:`stsim.baselines.trajectory_refit.analytic_centre`, one fit (row) at a time, each
    until its own Newton decrement falls below ``tol`` or ``iters`` steps; then, while the
    widening ``c`` is above 1, up to ``rounds`` times: ``c`` shrunk to ``max(1, m + 0.1 (c -
    m))``, ``m`` the largest ``|s|`` at the centre reached (which stays strictly inside), and
    the iterations run again from there (Huard's method of centres; a round that shrinks ``c``
    by less than 0.1 % ends the row's rounds).

    Args: s0 (N, R) constraint values (finite); J (N, P, R) their derivatives (finite); valid
        (N, P) bool; iters, tol, rounds: as there; du0 (N, P) starts, used where ``warm`` and
        strictly inside.
    Returns: du (N, P), 0 in the columns not ``valid``."""
    N, P, R = J.shape
    out = np.zeros((N, P))
    x = np.empty(R)
    Jc = np.empty((P, R))
    w, xq = np.empty(R), np.empty(R)
    H, L = np.empty((P, P)), np.empty((P, P))
    g, step = np.empty(P), np.empty(P)
    du = np.empty(P)
    for i in range(N):
        big = 0.0
        for r in range(R):
            a = abs(s0[i, r])
            if a > big:
                big = a
        c = max(1.0, 1.02 * big)
        for r in range(R):
            x[r] = s0[i, r] / c
        ss = 0.0
        for p in range(P):
            for r in range(R):
                Jc[p, r] = J[i, p, r] / c
                ss += Jc[p, r] * Jc[p, r]
        du[:] = 0.0
        if warm:
            inside = True
            for r in range(R):
                v = x[r]
                for p in range(P):
                    v += du0[i, p] * Jc[p, r]
                w[r] = v
                if not abs(v) < 0.999:
                    inside = False
            if inside:
                for p in range(P):
                    du[p] = du0[i, p]
                x[:] = w
        for rnd in range(rounds + 1):
            if rnd:                                           # shrink the widening toward 1
                big = 0.0
                for r in range(R):
                    a = abs(x[r])
                    if a > big:
                        big = a
                cn = max(1.0, big * c + 0.1 * (c - big * c))
                if cn >= c * 0.999:
                    break
                f = c / cn
                c = cn
                ss = 0.0
                for r in range(R):
                    x[r] *= f
                for p in range(P):
                    for r in range(R):
                        Jc[p, r] *= f
                        ss += Jc[p, r] * Jc[p, r]
            _centre_newton(x, Jc, valid[i], du, w, xq, H, g, L, step, ss, iters, tol)
        for p in range(P):
            out[i, p] = du[p] if valid[i, p] else 0.0
    return out


@numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract"})
def _centre_newton(x, Jc, valid, du, w, xq, H, g, L, step, ss, iters, tol):
    """:func:`analytic_centre_rows`' damped Newton iterations on one row, in place: ``x`` (R,)
    the constraint values over the widening, ``Jc`` (P, R) their derivatives, ``du`` (P,) the
    shift; ``w``, ``xq``, ``H``, ``g``, ``L``, ``step`` work arrays (the Newton system by
    :func:`spd_solve`, LAPACK's LU where its Cholesky factor fails)."""
    P, R = Jc.shape
    for _ in range(iters):
        for r in range(R):
            q = 1.0 / (1.0 - x[r] * x[r])
            w[r] = (1.0 + x[r] * x[r]) * q * q            # the barrier's curvature
            xq[r] = x[r] * q
        for p in range(P):
            v = 0.0
            for r in range(R):
                v += Jc[p, r] * xq[r]
            g[p] = v                                      # half the gradient
        for p in range(P):
            for p2 in range(p + 1):
                v = 0.0
                for r in range(R):
                    v += Jc[p, r] * w[r] * Jc[p2, r]
                H[p, p2] = v
                H[p2, p] = v
            H[p, p] += (0.0 if valid[p] else 1.0) + 1e-9 * (ss + 1.0)
        if not spd_solve(H, g, L, step):                 # not positive definite in floating point
            step[:] = np.linalg.solve(H, g)
        dec = 0.0
        for p in range(P):
            dec += g[p] * step[p]
        lam = np.sqrt(2.0 * max(dec, 0.0))
        f = 1.0 if lam < 0.25 else 1.0 / (1.0 + lam)
        for p in range(P):
            du[p] -= step[p] * f
        for r in range(R):
            v = 0.0
            for p in range(P):
                v += step[p] * f * Jc[p, r]
            x[r] -= v
        if lam < tol:
            break


@numba.njit(cache=True)
def path_sq_distance(rows, path, steps):
    """(M,) summed squared distance (plane units^2) of M trajectories to ``path`` over the
    given steps: ``rows`` (n, 2, M) the trajectories' positions per step and axis (float64, or
    float32 for a large library: each difference taken in float64), ``path``
    (k, 2), ``steps`` (s,) int64 step indices below ``k``; per trajectory the squares added
    step after step, x before y (the order, and so the floating-point result, of the numpy
    loop it replaced), the trajectories innermost (contiguous in ``rows``)."""
    M = rows.shape[2]
    d = np.zeros(M)
    for j in steps:
        for c in range(2):
            p = path[j, c]
            for i in range(M):
                e = rows[j, c, i] - p
                d[i] += e * e
    return d


@numba.njit(cache=True)
def spd_solve(M, b, L, x):
    """Solve ``M x = b`` for a symmetric positive definite ``M`` (P, P) by its Cholesky factor
    ``M = L L^T`` (Golub & Van Loan 2013, algorithm 4.2.1), then forward and back substitution;
    ``L`` (P, P) and ``x`` (P,) are work arrays written in place (``L``'s upper triangle not
    touched).  Returns False, with ``x`` undefined, when a pivot is not positive (``M`` not
    positive definite in floating point): the caller then solves another way.  About a third
    of the time of numba's ``np.linalg.solve`` (LAPACK's LU, with its copies) on the refit's
    13 x 13 systems."""
    P = M.shape[0]
    for j in range(P):
        s = M[j, j]
        for k in range(j):
            s -= L[j, k] * L[j, k]
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        L[j, j] = d
        for i in range(j + 1, P):
            s = M[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            L[i, j] = s / d
    for i in range(P):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(P - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, P):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]
    return True


@numba.njit(cache=True, error_model="numpy", fastmath={"reassoc", "contract"})
def _normal_equations(J, r, M, b):
    """``M = J J^T`` (P, P) and ``b = -J r`` (P,) in place, for one fit's Jacobian ``J`` (P, K)
    and residuals ``r`` (K,); reassociated sums (``fastmath``: they vectorise; NaN and inf keep
    their meaning)."""
    P, K = J.shape
    for p in range(P):
        s = 0.0
        for k in range(K):
            s += J[p, k] * r[k]
        b[p] = -s
        for q in range(p + 1):
            s = 0.0
            for k in range(K):
                s += J[p, k] * J[q, k]
            M[p, q] = s
            M[q, p] = s


@numba.njit(cache=True)
def damped_steps(J, r, rows, lam, valid, cols, u, periodic):
    """One Levenberg-Marquardt proposal per fit (:func:`stsim.baselines.trajectory_refit.
    levenberg_marquardt`; Marquardt 1963, Nocedal & Wright 2006, section 10.3): the Gauss-Newton
    matrix ``A = J J^T`` and gradient ``g = J r`` of the fit's residuals, the damped system
    ``(A + lam (diag A + 1e-9) + [not valid]) d = -g`` solved (:func:`spd_solve`; numba's
    ``np.linalg.solve``, LAPACK's LU, where that fails), ``d`` added to the active columns of
    ``u`` and the result wrapped (``periodic`` columns, modulo 1) and clipped to ``[0, 1]``.

    Args: J (N, P, K) the residuals' Jacobians and r (N, K) the residuals of all N fits (read
        only); rows (n,) the fits that take a step (indices into ``J`` and ``r``); for those n
        fits, in that order: lam (n,) the damping, valid (n, P) their active columns, ``cols``
        (n, P) those columns of ``u`` (n, dim); periodic (dim,) bool.
    Returns: the proposals (n, dim), a new array.  A fit whose system or step is not finite
    keeps its ``u`` (no step: the caller's damping then grows).
    Raises ``ValueError`` for shapes that do not match (numba checks no bounds: a row or column
    past an array's end would be read or written silently) or a row outside ``[0, N)``."""
    n, P = valid.shape
    N, K = J.shape[0], J.shape[2]
    if (J.shape[1] != P or r.shape[0] != N or r.shape[1] != K or rows.shape[0] != n or lam.shape[0] != n
            or cols.shape[0] != n or cols.shape[1] != P or u.shape[0] != n or periodic.shape[0] != u.shape[1]):
        raise ValueError("damped_steps: shapes do not match (J (N, P, K), r (N, K), rows / lam (n,), "
                         "valid / cols (n, P), u (n, dim), periodic (dim,))")
    for i in range(n):
        if rows[i] < 0 or rows[i] >= N:
            raise ValueError("damped_steps: a row outside [0, N)")
    for i in range(n):
        for p in range(P):
            if valid[i, p] and (cols[i, p] < 0 or cols[i, p] >= u.shape[1]):
                raise ValueError("damped_steps: an active column outside [0, dim)")
    out = u.copy()
    M, L = np.empty((P, P)), np.empty((P, P))
    d, b = np.empty(P), np.empty(P)
    for i in range(n):
        _normal_equations(J[rows[i]], r[rows[i]], M, b)
        finite = True
        for p in range(P):
            for q in range(P):
                finite &= np.isfinite(M[p, q])
            dg = M[p, p]
            M[p, p] = dg + (lam[i] * (dg + 1e-9) + (0.0 if valid[i, p] else 1.0))
        if not finite:
            continue
        if not spd_solve(M, b, L, d):                      # not positive definite in floating point
            d[:] = np.linalg.solve(M, b)
        if not np.isfinite(d).all():
            continue
        for p in range(P):
            if valid[i, p]:
                out[i, cols[i, p]] += d[p]
        for c in range(out.shape[1]):
            v = out[i, c]
            if periodic[c]:
                v = v % 1.0
            out[i, c] = min(max(v, 0.0), 1.0)
    return out


@numba.njit(cache=True)
def _pairwise_leaf(x, lo, hi):
    """numpy's ``pairwise_sum`` of ``x[lo:hi]`` up to 128 terms: plain below 8, else eight
    running sums combined pairwise, then the remainder."""
    n = hi - lo
    if n < 8:
        s = 0.0
        for i in range(lo, hi):
            s += x[i]
        return s
    r0, r1, r2, r3 = x[lo], x[lo + 1], x[lo + 2], x[lo + 3]
    r4, r5, r6, r7 = x[lo + 4], x[lo + 5], x[lo + 6], x[lo + 7]
    i = lo + 8
    end = hi - n % 8
    while i < end:
        r0 += x[i]
        r1 += x[i + 1]
        r2 += x[i + 2]
        r3 += x[i + 3]
        r4 += x[i + 4]
        r5 += x[i + 5]
        r6 += x[i + 6]
        r7 += x[i + 7]
        i += 8
    s = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < hi:
        s += x[i]
        i += 1
    return s


@numba.njit(cache=True)
def pairwise_sum(x, lo, hi):
    """``x[lo:hi].sum()`` as numpy sums a contiguous row (its ``pairwise_sum``: up to 128 terms
    :func:`_pairwise_leaf`, above that the two halves, cut at a multiple of 8, summed the same
    way and added), so that a cost compares bit for bit with the numpy version's.  The halving
    is unrolled (an explicit stack of the segments, without recursion: numba's cache has loaded
    recursive functions wrongly), and the left half's sum is added to the right's as numpy does."""
    n = hi - lo
    if n <= 128:
        return _pairwise_leaf(x, lo, hi)
    # post-order walk of the halving tree: segments to visit, and partial sums to combine
    seg_lo = np.empty(64, np.int64)
    seg_hi = np.empty(64, np.int64)
    seg_done = np.zeros(64, np.bool_)
    vals = np.empty(64)
    ns, nv = 1, 0
    seg_lo[0], seg_hi[0] = lo, hi
    while ns:
        a, b = seg_lo[ns - 1], seg_hi[ns - 1]
        m = b - a
        if m <= 128:
            vals[nv] = _pairwise_leaf(x, a, b)
            nv += 1
            ns -= 1
        elif seg_done[ns - 1]:                       # both halves summed: combine them
            vals[nv - 2] = vals[nv - 2] + vals[nv - 1]
            nv -= 1
            seg_done[ns - 1] = False
            ns -= 1
        else:
            seg_done[ns - 1] = True
            m2 = m // 2
            m2 -= m2 % 8
            seg_lo[ns], seg_hi[ns] = a + m2, b          # the right half, visited second
            seg_done[ns] = False
            seg_lo[ns + 1], seg_hi[ns + 1] = a, a + m2  # the left half, visited first
            seg_done[ns + 1] = False
            ns += 2
    return vals[0]


@numba.njit(cache=True)
def _row_costs(r):
    """(N,) the sums of squares of the rows of ``r`` (N, K), as numpy's ``(r * r).sum(axis=1)``."""
    N, K = r.shape
    out = np.empty(N)
    sq = np.empty(K)
    for i in range(N):
        for k in range(K):
            sq[k] = r[i, k] * r[i, k]
        out[i] = pairwise_sum(sq, 0, K)
    return out


@numba.njit(cache=True, error_model="numpy")
def lm_iterations(u, lam, cost, X, r0, J, Ds, mask, cols, valid, scale, pw, extra, periodic, iters, tol, info,
                  t, m, low, high, code, column, lo, hi, signed,
                  kind, step, sx, sy, val, tk, bounds, sigma, speed, emit, emit_col, emit_scale):
    """The iterations of :func:`stsim.baselines.trajectory_refit.levenberg_marquardt`, compiled
    (the same operations in the same order as its numpy loop, which they replaced in session
    37: the loop's own bookkeeping, about a sixth of the event tracker's time, was interpreter
    overhead on arrays of a few dozen rows).  Each iteration: the live fits' proposals
    (:func:`damped_steps`), their positions and derivatives (:func:`positions_and_derivatives`;
    none after the last iteration unless ``info``), residuals and Jacobians
    (:func:`residuals_and_jacobian`) with the prior's residuals ``pw (u - 0.5)`` in the last
    ``P`` columns; a proposal is taken where its cost is lower, and the damping divided by 3
    (else multiplied by 4); a fit stops when a taken step gains less than ``tol`` of its cost
    or its damping passes 1e8.

    Args: u (N, dim), lam (N,), cost (N,), r0 (N, K), J (N, P, K), X (2, N, n) and Ds (2, N,
        P, mD) (axis first): the fits' state, updated in place (``Ds`` cut to the steps both it
        and a new evaluation hold, a new array then); mask, cols, valid, scale: the fits'
        kinds, columns, active columns and ``d physical / d u``; pw (N, P) the prior's weights
        in the last ``extra`` columns of the residuals (``extra`` 0: no prior, or ``P``);
        periodic (dim,); t .. signed:
        :func:`positions_and_derivatives`' arguments (``m`` the steps of the derivatives);
        kind .. speed: :func:`residuals_and_jacobian`'s readings; emit: the layout has a first
        emission time (``u``'s last column, ``lo[-1] + u (hi[-1] - lo[-1])`` s), emit_col (N,
        P) its column, emit_scale its range.
    Returns: ``Ds``.  Raises ``ValueError`` for shapes that do not match (numba checks no
    bounds)."""
    N, dim = u.shape
    P = cols.shape[1]
    K = r0.shape[1]
    if X.shape[1] != N or r0.shape[0] != N or J.shape[0] != N or J.shape[1] != P or J.shape[2] != K \
            or Ds.shape[1] != N or Ds.shape[2] != P or (extra != 0 and extra != P):
        raise ValueError("lm_iterations: shapes do not match (u (N, dim), X (2, N, n), r0 (N, K), J (N, P, K), "
                         "Ds (2, N, P, m), extra 0 or P)")
    live = np.ones(N, np.bool_)
    it = 0
    while it < iters:
        na = 0
        for i in range(N):
            if live[i]:
                na += 1
        if na == 0:
            break
        a = np.empty(na, np.int64)
        k = 0
        for i in range(N):
            if live[i]:
                a[k] = i
                k += 1
        lam_a = np.empty(na)
        cost_a = np.empty(na)
        valid_a = np.empty((na, P), np.bool_)
        cols_a = np.empty((na, P), np.int64)
        mask_a = np.empty((na, mask.shape[1]), np.bool_)
        scale_a = np.empty((na, P))
        ec_a = np.empty((na, P), np.bool_)
        u_a = np.empty((na, dim))
        for k in range(na):
            i = a[k]
            lam_a[k] = lam[i]
            cost_a[k] = cost[i]
            for p in range(P):
                valid_a[k, p] = valid[i, p]
                cols_a[k, p] = cols[i, p]
                scale_a[k, p] = scale[i, p]
                ec_a[k, p] = emit_col[i, p]
            for j in range(mask.shape[1]):
                mask_a[k, j] = mask[i, j]
            for j in range(dim):
                u_a[k, j] = u[i, j]
        un = damped_steps(J, r0, a, lam_a, valid_a, cols_a, u_a, periodic)
        need_j = info or it < iters - 1
        pos, g = positions_and_derivatives(un, mask_a, t, cols_a, valid_a, scale_a, m, low, high, code, column,
                                           lo, hi, signed, need_j)
        t0 = np.zeros(na)
        if emit:
            for k in range(na):
                t0[k] = lo[dim - 1] + un[k, dim - 1] * (hi[dim - 1] - lo[dim - 1])
        if need_j:                                   # (variables, not literals: the signature compile_all holds)
            dt, ec_j, es = g, ec_a, emit_scale
        else:
            dt, ec_j, es = np.zeros((2, na, 0, 1)), np.zeros((na, 0), np.bool_), 0.0
        rn, Jn = residuals_and_jacobian(pos, dt, kind, step, sx, sy, val, tk, t0, bounds, sigma, speed, ec_j, es,
                                        need_j, extra)
        if rn.shape[1] != K:
            raise ValueError("lm_iterations: the residuals' columns do not match r0's")
        if extra:
            R = rn.shape[1] - P
            for k in range(na):
                i = a[k]
                for p in range(P):
                    rn[k, R + p] = pw[i, p] * (un[k, cols_a[k, p]] - 0.5)
                    if need_j:
                        Jn[k, p, R + p] = pw[i, p]
        cn = _row_costs(rn)
        if need_j:
            mD = min(Ds.shape[3], g.shape[3])
            if Ds.shape[3] != mD:
                Ds = Ds[:, :, :, :mD].copy()
        for k in range(na):
            i = a[k]
            better = cn[k] < cost_a[k]
            gain = (cost_a[k] - cn[k]) / max(cost_a[k], 1e-300)
            if better:
                for j in range(dim):
                    u[i, j] = un[k, j]
                for q in range(K):
                    r0[i, q] = rn[k, q]
                cost[i] = cn[k]
                for ax in range(2):
                    for s in range(X.shape[2]):
                        X[ax, i, s] = pos[ax, k, s]
                if need_j:
                    for p in range(P):
                        for q in range(K):
                            J[i, p, q] = Jn[k, p, q]
                    for ax in range(2):
                        for p in range(P):
                            for s in range(mD):
                                Ds[ax, i, p, s] = g[ax, k, p, s]
            la = lam_a[k] / 3.0 if better else lam_a[k] * 4.0
            lam[i] = la
            live[i] = not ((better and gain < tol) or la > 1e8)
        it += 1
    return Ds


def _array(dtype, ndim: int, layout: str = "C"):
    return numba.types.Array(dtype, ndim, layout)


def compiled_signatures() -> dict:
    """The argument types the default trackers pass each compiled kernel, as numba signatures:
    the refit's (:mod:`stsim.baselines.trajectory_refit`), one for
    :func:`positions_and_derivatives`, :func:`analytic_centre_rows`,
    :func:`damped_steps`, :func:`lm_iterations`, two for :func:`path_sq_distance` (float64 and
    float32 positions), four for
    :func:`residuals_and_jacobian` (its positions ``Pt`` and derivatives ``Dt`` arrive as
    contiguous arrays or as slices, ``C`` or ``A`` layout), and the particle filters' one for
    :func:`~stsim.baselines.resampling.systematic_indices`,
    :func:`~stsim.baselines.prior_motion.propagate_rows` and
    :func:`~stsim.baselines.sensor_particle_tracking.reading_violations`."""
    from .resampling import systematic_indices
    from .prior_motion import propagate_rows
    from .sensor_particle_tracking import reading_violations
    f8, i8, b1 = numba.types.float64, numba.types.int64, numba.types.boolean
    f1, i1 = _array(f8, 1), _array(i8, 1)
    return {
        positions_and_derivatives: [(_array(f8, 2), _array(b1, 2), f1, _array(i8, 2), _array(b1, 2), _array(f8, 2),
                                     i8, f8, f8, i1, _array(i8, 2), f1, f1, _array(b1, 1), b1)],
        residuals_and_jacobian: [(_array(f8, 3, p), _array(f8, 4, d), i1, i1, f1, f1, f1, f1, f1, f1, f8, f8,
                                  _array(b1, 2), f8, b1, i8) for p, d in ("CC", "AA", "AC", "CA")],
        analytic_centre_rows: [(_array(f8, 2), _array(f8, 3), _array(b1, 2), i8, f8, _array(f8, 2), b1, i8)],
        path_sq_distance: [(_array(f8, 3), _array(f8, 2), i1), (_array(numba.types.float32, 3), _array(f8, 2), i1)],
        damped_steps: [(_array(f8, 3), _array(f8, 2), i1, f1, _array(b1, 2), _array(i8, 2), _array(f8, 2),
                        _array(b1, 1))],
        lm_iterations: [(_array(f8, 2), f1, f1, _array(f8, 3), _array(f8, 2), _array(f8, 3), _array(f8, 4),
                         _array(b1, 2), _array(i8, 2), _array(b1, 2), _array(f8, 2), _array(f8, 2), i8, _array(b1, 1),
                         i8, f8, b1, f1, i8, f8, f8, i1, _array(i8, 2), f1, f1, _array(b1, 1),
                         i1, i1, f1, f1, f1, f1, f1, f8, f8, b1, _array(b1, 2), f8)],
        systematic_indices: [(f1, f8, i8)],
        propagate_rows: [(_array(f8, 2), _array(f8, 2), i1, f1, f8, f8, f8)],
        reading_violations: [(_array(f8, 2), _array(f8, 2), f1, f8, f8, _array(f8, 2), _array(f8, 2), f8, b1)],
    }


def compile_all() -> None:
    """Compile (or load from numba's cache) every kernel for every signature of
    :func:`compiled_signatures`, ahead of the first tracking task: about 20 s when nothing is
    cached (16 s before :func:`lm_iterations`, session 37).  A sandbox zygote that shares stsim calls it before forking its jobs
    (``Sandbox(preimport=(..., "stsim.baselines.trajectory_kernel:compile_all"))``): stsim's
    folder is read-only there and the work folder is emptied between jobs, so without it every
    job that runs a default tracker compiles the kernels again."""
    for kernel, signatures in compiled_signatures().items():
        for sig in signatures:
            kernel.compile(sig)
