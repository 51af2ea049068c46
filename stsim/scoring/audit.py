"""Audit: is each gold answer inside the set of answers its readings allow?

For every tier-1 item the audit recomputes the noiseless reading each sensor would give for the
gold answer and checks that the printed reading lies within the noise model's bound (STARK
Table 7: uniform noise is bounded; Gaussian noise is checked at 5 sigma), plus the printing
tolerance (readings rounded to 4 decimals; for published data whose sensor positions were
rounded to 2 decimals after simulation, the induced range and angle error).

Unknowns the gold does not state are optimised out: the emission time of a position-only
event task (an interval intersection, exact), and the position of a time-only event task (a
minimax over the domain: grid, then Nelder-Mead).  The *violation* is how far the worst reading
lies outside its bound, in the reading's own unit (0 when consistent).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize

from ..generators.stark_prompts import sensor_name
from ..records import Task
from ..sim.noise import noise_from_dict
from ..sim.readings import readings_to_array
from ..sim.sensors import bearings_deg, distances

PRINT_TOL = 0.5e-4
#: Gaussian noise models are checked at this many standard deviations.
GAUSS_K = 5.0


@dataclass
class AuditResult:
    task_id: str
    step: int | None
    ok: bool
    violation: float = 0.0
    reason: str = ""
    skipped: bool = False


def _bound(noise_dict, true):
    model = noise_from_dict(noise_dict)
    b = model.bound(true)
    if not np.all(np.isfinite(b)):  # Gaussian
        sig = model.sigma * (np.abs(true) if getattr(model, "relative", False) else 1.0)
        b = GAUSS_K * np.broadcast_to(sig, np.shape(true))
    return b


def _check_row(task: Task, step: int | None, gold, row) -> AuditResult:
    inp = task.inputs
    m = inp["modality"]
    s = np.asarray(inp["sensors"], float)
    sm = inp.get("sensor_model", {})
    z = readings_to_array(row, pairs=m == "range_bearing", stepped=False)
    sens_tol = float(task.meta.get("sensor_rounding", 0.0)) * np.sqrt(2)
    worst, why = 0.0, ""

    def take(dev, bound, label):
        nonlocal worst, why
        excess = np.where(np.isfinite(dev), np.abs(dev) - bound, -np.inf)
        j = int(np.argmax(excess))
        if excess[j] > worst:
            worst, why = float(excess[j]), f"{sensor_name(j)}: {label} off by {abs(dev[j]):.6g} (allowed {bound[j]:.6g})"

    if m in ("range", "bearing", "range_bearing", "proximity"):
        p = np.asarray(gold, float)[None, :2]
        d = distances(s, p)[0]
        if m in ("range", "range_bearing"):
            zr = z[:, 0] if m == "range_bearing" else z
            model = sm["range"] if m == "range_bearing" else sm
            take(zr - d, _bound(model.get("noise"), d) + PRINT_TOL + sens_tol, "range")
        if m in ("bearing", "range_bearing"):
            zb = z[:, 1] if m == "range_bearing" else z
            model = sm["bearing"] if m == "range_bearing" else sm
            dev = (zb - bearings_deg(s, p)[0] + 180.0) % 360.0 - 180.0
            b_rad = _bound(model.get("noise_rad"), np.zeros_like(d))
            ang_tol = np.degrees(np.arcsin(np.clip(sens_tol / np.maximum(d, 1e-9), 0, 1)))
            take(dev, np.degrees(b_rad) + PRINT_TOL + ang_tol, "bearing (deg)")
        if m == "proximity":
            r = float(inp.get("radius", sm.get("radius", 4.0)))
            inside = (d <= r).astype(float)
            near = np.abs(d - r) <= sens_tol + 1e-9
            dev = np.where(near, 0.0, z - inside)
            take(dev, np.zeros_like(d) + 0.5, "detection")
        return AuditResult(task.id, step, worst <= 0, max(worst, 0.0), why)

    # time of arrival
    v = float(inp["wave_speed"])
    noise = sm.get("noise")
    fmt = task.answer_format
    ok = np.isfinite(z)
    if not ok.any():
        return AuditResult(task.id, step, True)
    s_, z_ = s[ok], z[ok]
    bound = _bound(noise, z_) + PRINT_TOL + sens_tol / v
    emit = None
    if fmt == "vector":
        p, emit = np.asarray(gold[:2], float), float(gold[2])
    elif fmt == "point":
        p = np.asarray(gold, float)
        times = inp.get("times")
        if times is not None and step is not None:
            emit = float(times[step])
    else:
        p, emit = None, float(gold)
    if p is not None:
        resid = z_ - distances(s_, p[None, :])[0] / v
        if emit is None:  # best emission time: centre of the residual range
            emit = 0.5 * (resid.max() + resid.min())
        dev = resid - emit
    else:
        lo, hi = task.inputs.get("domain", [0.0, 10.0])

        def worst_excess(q):
            q = np.clip(q, lo, hi)
            return float(np.max(np.abs(z_ - emit - distances(s_, q[None, :])[0] / v) - bound))
        g = np.linspace(lo, hi, 81)
        pts = np.array(np.meshgrid(g, g)).reshape(2, -1).T
        vals = np.max(np.abs(z_[None, :] - emit - distances(s_, pts) / v) - bound[None, :], axis=1)
        if vals.min() <= 0:  # a grid point already explains every reading
            return AuditResult(task.id, step, True)
        best = pts[np.argsort(vals)[:5]]
        res = min((minimize(worst_excess, q0, method="Nelder-Mead",
                            options={"xatol": 1e-7, "fatol": 1e-9}) for q0 in best), key=lambda r: r.fun)
        q = np.clip(res.x, lo, hi)
        dev = z_ - emit - distances(s_, q[None, :])[0] / v
    excess = np.abs(dev) - bound
    j = int(np.argmax(excess))
    if excess[j] > 0:  # j counts the sensors that reported: named by its place among all of them
        return AuditResult(task.id, step, False, float(excess[j]),
                           f"{sensor_name(int(np.flatnonzero(ok)[j]))}: ToA reading off by {abs(dev[j]):.6g} "
                           f"(allowed {bound[j]:.6g})")
    return AuditResult(task.id, step, True)


def audit_task(task: Task) -> list[AuditResult]:
    """Audit one task: one result per item (per step for tracking); relation tasks by
    :mod:`.audit_relations`, QSTR questions by :mod:`.audit_qstr`, cardinal questions by their
    direction model (:func:`stsim.generators.cardinal.gold_direction`), tier-1 readings here; a
    family with no rule gives one skipped result.  A cardinal gold that disagrees is normally
    caught first by the family's validator (:class:`~stsim.records.GoldError`)."""
    from .audit_qstr import audit_qstr, is_qstr_task
    from .audit_relations import RELATION_FAMILIES, audit_relation
    if task.family in RELATION_FAMILIES:
        ok, reason = audit_relation(task)
        return [AuditResult(task.id, None, ok, 0.0 if ok else 1.0, reason)]
    if is_qstr_task(task):
        ok, reason = audit_qstr(task)
        return [AuditResult(task.id, None, ok, 0.0 if ok else 1.0, reason)]
    if task.family.startswith("cardinal."):   # the direction model of docs/cardinal.md
        from ..generators.cardinal import gold_direction
        want = gold_direction(task.inputs)
        ok = task.answer == want
        return [AuditResult(task.id, None, ok, 0.0 if ok else 1.0,
                            "" if ok else f"[label] gold {task.answer!r}, but the direction model gives {want!r}")]
    if "modality" not in task.inputs or "readings" not in task.inputs:
        return [AuditResult(task.id, None, True, skipped=True, reason="no audit rule")]
    if task.steps:
        # by position, as the validator pairs them: a step's index is a label (it may carry a
        # shot schedule: 0, 1, 2, 8, 9), not the row of inputs.readings (it gave an IndexError)
        return [_check_row(task, st.index, st.answer, row) for st, row in zip(task.steps, task.inputs["readings"])]
    return [_check_row(task, None, task.answer, task.inputs["readings"])]


def audit_tasks(tasks) -> list[AuditResult]:
    out = []
    for t in tasks:
        out.extend(audit_task(t))
    return out
