"""First-principle baselines for STARK tier 1 (Appendix 7.6, Table 9): ``Task -> [Answer]``.

Each solver reads only ``task.inputs`` (never the gold).  A solver that cannot estimate
(fewer usable readings than unknowns) returns an explicit ``no_estimate`` answer saying why;
scoring counts it as a failure.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..records import Answer, Task
from ..sim.readings import readings_to_array
from .geometry import (multilaterate, proximity_estimate, proximity_grid_search, range_bearing_fix,
                       toa_fit, triangulate)
from .posterior import bearing_loglik, grid_posterior_mean, range_loglik, toa_marginal
from .tracking import ekf_track, proximity_track, proximity_track_bayes, toa_track


def _readings(task: Task) -> np.ndarray:
    return readings_to_array(task.inputs["readings"], pairs=task.inputs["modality"] == "range_bearing",
                             stepped=bool(task.steps))


def _noise_levels(task: Task) -> tuple[float, float]:
    """(relative range half-width, bearing half-width in rad) from the task's sensor model."""
    sm = task.inputs.get("sensor_model", {})
    rng_model = sm.get("range", sm) if sm.get("modality") == "range_bearing" else sm
    brg_model = sm.get("bearing", sm) if sm.get("modality") == "range_bearing" else sm
    rs = (rng_model.get("noise") or {}).get("sigma", 0.01)
    bs = (brg_model.get("noise_rad") or {}).get("half_width", (brg_model.get("noise_rad") or {}).get("sigma", 2 * np.pi * 0.01))
    return float(rs), float(bs)


def _one(task: Task, value, solver: str, why: str) -> list[Answer]:
    if value is None:
        return [Answer(task.id, None, "no_estimate", detail=why, solver=solver)]
    return [Answer(task.id, None, "ok", value=value, solver=solver)]


def _usable(r: np.ndarray) -> int:
    return int(np.all(np.isfinite(r.reshape(len(r), -1)), axis=1).sum())


# ------------------------------------------------------------------------------- localisation
def _least_squares_fix(task: Task):
    """``(estimate or None, readings needed, reason when None)``."""
    m = task.inputs["modality"]
    s = np.asarray(task.inputs["sensors"], float)
    z = _readings(task)
    rs, bs = _noise_levels(task)
    if m == "proximity":
        est, why = proximity_estimate(s, z, float(task.inputs["radius"]))
        return est, 1, why
    need = 1 if m == "range_bearing" else 2
    why = f"{_usable(z)} usable {m} reading(s); need at least {need}"
    if m == "range":
        return multilaterate(s, z), need, why
    if m == "bearing":
        return triangulate(s, z), need, why
    if m == "range_bearing":
        return range_bearing_fix(s, z, rs, bs), need, why
    raise ValueError(f"{task.id}: unknown modality {m!r}")


def solve_localization_ls(task: Task, solver: str = "baseline:ls") -> list[Answer]:
    """STARK Table 9 estimators: multilateration (NLS), triangulation (linear LS + NLS),
    range+bearing fusion (NLS); proximity: MMSE centroid of the feasible region, always inside
    it (:func:`stsim.baselines.geometry.proximity_estimate`; ``no_estimate`` when the readings
    are inconsistent)."""
    est, _, why = _least_squares_fix(task)
    return _one(task, None if est is None else [float(est[0]), float(est[1])], solver, why)


def position_loglik(task: Task):
    """(N, 2) -> (N,) log-likelihood of a range, bearing or range+bearing task's readings
    under its stated sensor model (:mod:`stsim.baselines.posterior`)."""
    m = task.inputs["modality"]
    s = np.asarray(task.inputs["sensors"], float)
    z = _readings(task)
    sm = task.inputs.get("sensor_model", {})
    if m == "range":
        return range_loglik(s, z, sm.get("noise"))
    if m == "bearing":
        return bearing_loglik(s, z, sm.get("noise_rad"))
    lr = range_loglik(s, z[:, 0], sm["range"].get("noise"))
    lb = bearing_loglik(s, z[:, 1], sm["bearing"].get("noise_rad"))
    return lambda pts: lr(pts) + lb(pts)


def solve_localization(task: Task, solver: str = "baseline") -> list[Answer]:
    """Default localisation baseline: the Bayes (MMSE) posterior mean under the task's stated
    noise model (:mod:`stsim.baselines.posterior`), started from the Table 9 least-squares fix;
    for proximity the MMSE is the feasible region's centroid, always inside the exact feasible
    set; a degenerate set (tangent disks) gives its point, inconsistent readings ``no_estimate``
    (:func:`stsim.baselines.geometry.proximity_estimate`)."""
    est, _, why = _least_squares_fix(task)
    m = task.inputs["modality"]
    if est is not None and m != "proximity":
        post = grid_posterior_mean(position_loglik(task), est)
        if post is not None:
            est = post[0]
    return _one(task, None if est is None else [float(est[0]), float(est[1])], solver, why)


def solve_proximity_grid(task: Task, solver: str = "baseline:grid") -> list[Answer]:
    """STARK's own proximity baseline: grid search over mismatch counts."""
    s = np.asarray(task.inputs["sensors"], float)
    est = proximity_grid_search(s, _readings(task), float(task.inputs["radius"]))
    return _one(task, None if est is None else est.tolist(), solver, "no usable reading")


def _event_value(task: Task, p, t0):
    if task.answer_format == "time":
        return float(t0)
    if task.answer_format == "vector":
        return [float(p[0]), float(p[1]), float(t0)]
    return [float(p[0]), float(p[1])]


def solve_event_localization_ls(task: Task, solver: str = "baseline:ls") -> list[Answer]:
    """STARK Table 9: nonlinear least squares over position and emission time."""
    s = np.asarray(task.inputs["sensors"], float)
    z = _readings(task)
    fit = toa_fit(s, z, float(task.inputs["wave_speed"]))
    if fit is None:
        return _one(task, None, solver, f"{_usable(z)} usable ToA reading(s); need 3 for (x, y, t0)")
    return _one(task, _event_value(task, *fit), solver, "")


def solve_event_localization(task: Task, solver: str = "baseline") -> list[Answer]:
    """Default ToA baseline: posterior means of position and emission time (emission time
    integrated out analytically, :func:`stsim.baselines.posterior.toa_marginal`), started from
    the least-squares fit."""
    s = np.asarray(task.inputs["sensors"], float)
    z = _readings(task)
    fit = toa_fit(s, z, float(task.inputs["wave_speed"]))
    if fit is None:
        return _one(task, None, solver, f"{_usable(z)} usable ToA reading(s); need 3 for (x, y, t0)")
    ll, t0 = toa_marginal(s, z, float(task.inputs["wave_speed"]),
                          task.inputs.get("sensor_model", {}).get("noise"))
    post = grid_posterior_mean(ll, fit[0], extra=t0)
    p, t = (post[0], post[1]) if post is not None and post[1] is not None else fit
    return _one(task, _event_value(task, p, t), solver, "")


# ----------------------------------------------------------------------------------- tracking
def _per_step(task: Task, values, solver: str) -> list[Answer]:
    out = []
    for st, v in zip(task.steps, values):
        if v is None or not np.all(np.isfinite(v)):
            out.append(Answer(task.id, st.index, "no_estimate", detail="no reading yet", solver=solver))
        else:
            out.append(Answer(task.id, st.index, "ok", value=v, solver=solver))
    return out


#: modalities whose default tracker is the trajectory-prior particle filter with the
#: parametric refit (:func:`solve_tracking_pf`) rather than the EKF bank (issue 20, 30 tasks of
#: suite seed 7, filter seed 0, trimmed RMSE first 10 / all 50 steps, ``perf/vs_stonesoup.py
#: --n 30 --variant ekf filter``: range 0.127 / 0.067 against the filter alone's 0.138 / 0.099
#: and the EKF bank's 0.213 / 0.115, bearing 0.281 / 0.240 against 0.291 / 0.282 and 0.346 /
#: 0.328, range+bearing 0.055 / 0.043 against 0.058 / 0.059 and 0.070 / 0.067; the EKF bank
#: stays as ``baseline:ekf``, the filter alone as ``baseline:filter``).
PF_TRACKING = ("range", "bearing", "range_bearing")


def _uniform_noise(task: Task) -> bool:
    sm = task.inputs.get("sensor_model", {})
    parts = [sm.get("range", {}), sm.get("bearing", {})] if sm.get("modality") == "range_bearing" else [sm]
    return not any((p.get(k) or {}).get("kind") == "gaussian" for p in parts for k in ("noise", "noise_rad"))


def solve_tracking(task: Task, solver: str = "baseline") -> list[Answer]:
    """Default tracking: for proximity and for the modalities in :data:`PF_TRACKING` (range,
    bearing, range+bearing) the particle filter whose motion follows the generator's own prior
    trajectories (:mod:`stsim.baselines.particle_tracking`,
    :mod:`stsim.baselines.sensor_particle_tracking`; issue 20, proximity on 30 tasks of suite
    seed 7: trimmed RMSE 1.292 / 1.292 over the first 10 / all 20 steps, ``perf/pf_accuracy.py``,
    against 1.597 / 1.793 for the grid Bayes filter, now ``baseline:grid``; proximity's later
    steps since session 23 by the resample-move sampler, :func:`default_track`); else, and for
    Gaussian noise (the filter needs bounded noise), the bank of SCAAT-style EKFs
    (:func:`solve_tracking_ekf`)."""
    m = task.inputs["modality"]
    if m in PF_TRACKING and _uniform_noise(task):
        return solve_tracking_pf(task, solver)
    return solve_tracking_ekf(task, solver)


def solve_tracking_ekf(task: Task, solver: str = "baseline:ekf") -> list[Answer]:
    """Bank of SCAAT-style EKFs (:func:`stsim.baselines.tracking.ekf_track`) for range,
    bearing and range+bearing; proximity goes to its particle filter."""
    m = task.inputs["modality"]
    if m == "proximity":
        est = default_track(task)[0]
    else:
        s = np.asarray(task.inputs["sensors"], float)
        z = _readings(task)
        times = np.asarray(task.inputs["times"], float)
        rs, bs = _noise_levels(task)
        est = ekf_track(m, s, times, z, range_sigma=rs, bearing_sigma_rad=bs)
    return _per_step(task, [[float(a), float(b)] for a, b in est], solver)


def solve_tracking_pf(task: Task, solver: str = "baseline:pf") -> list[Answer]:
    """Range, bearing or range+bearing tracking (the default): the particle filter under the
    generator's own trajectory prior and bounded Table 7 noise
    (:func:`stsim.baselines.sensor_particle_tracking.track_sensor_task`), its answers replaced
    from step 8 on, where it holds, by the generator's parametric trajectory fitted to all
    readings so far (:mod:`stsim.baselines.trajectory_refit`, settings
    :data:`~stsim.baselines.trajectory_refit.REFIT_SETTINGS`; issue 20); for the families of
    :data:`SMOOTHED_DEFAULTS` the filter's answers go through the MAP smoother over the steps seen
    so far first (:mod:`stsim.baselines.trajectory_smoother`).

    Raises ``ValueError`` for Gaussian noise (the filter needs bounded noise)."""
    est, _ = default_track(task)
    return _per_step(task, [[float(a), float(b)] for a, b in est], solver)


def default_track(task: Task, seed: int = 0) -> tuple[np.ndarray, np.ndarray | None]:
    """The particle-filter default tracker of a range, bearing, range+bearing, proximity or ToA
    tracking task with bounded noise: for proximity the filter
    (:func:`stsim.baselines.particle_tracking.track_task`) with its answers from step 8 on
    replaced by the resample-move sampler over the trajectory's parameters
    (:mod:`stsim.baselines.trajectory_smc`) where it holds a population; for ToA and for range,
    bearing and range+bearing (:func:`stsim.baselines.sensor_particle_tracking.track_sensor_task`) the filter
    with the parametric refit (:data:`~stsim.baselines.trajectory_refit.REFIT_SETTINGS`) and,
    for the families of :data:`SMOOTHED_DEFAULTS`, the MAP smoother between the two (issue 20).
    What :func:`solve_tracking_pf` and :func:`solve_event_tracking` answer, and what
    :func:`stsim.baselines.posterior_tracking.posterior_track` falls back to.

    ``seed``: the filter's random draws (0: the default baseline's answers; another seed
    gives another draw of the same tracker, for measuring how much of its error is luck:
    ``perf/refit_accuracy.py --filter-seeds``).

    Returns positions (k, 2), plane units, inside the task's domain (the trackers project their
    answers onto it, :func:`~stsim.baselines.prior_motion.in_domain`), and emission times (k,),
    the task's time unit, for ToA (None otherwise, and for ToA when the filter gives none), for
    the task's k steps.

    Raises ``ValueError`` for Gaussian noise (the filters need bounded noise), another modality
    or a negative ``seed`` (numpy's generators)."""
    m = task.inputs["modality"]
    if m in ("proximity", "toa"):
        from .particle_tracking import track_task
        return track_task(task, seed=seed, **default_track_settings(task))
    from .sensor_particle_tracking import track_sensor_task
    return track_sensor_task(task, seed=seed, **default_track_settings(task)), None


#: The default's filter settings where they differ from the filter's own
#: (:data:`~stsim.baselines.sensor_particle_tracking.SENSOR_SETTINGS`).  Range+bearing (session
#: 19): 1000 particles instead of 2000 and a lost track never redrawn (``lost`` None; the refit
#: answers nearly every step, and searches from its own answers after step 1).  Ratio to the
#: limit, first 10 steps, filter draws 0 and 1, suite seeds 7 / 5 / 9: 1.133 / 1.072 / 1.228 with
#: 2000 particles, 1.133 / 1.071 / 1.224 with 1000, the same to 0.001 without redraws; tuning
#: seeds 11-23 (30 tasks, draw 0, geometric means first 10 / all steps) the same to 1e-5; 0.93 of
#: the time without redraws, 0.90-0.94 with 1000 particles (in-process medians of alternating
#: runs, 20-30 tasks of seed 7), spent on the refit's wider early searches
#: (:data:`~stsim.baselines.trajectory_refit.REFIT_SETTINGS`).  500 particles: 1.108 / 1.039 /
#: 1.190 against 1.106 / 1.029 / 1.188 with those searches; 121 cells: 1.110 / 1.041 / 1.193.  Not
#: on bearing (1.071 -> 1.084).  Range (session 32): 1000 particles too (the filter's redraws
#: kept), which pays for the refit's wider lost-track searches (``lost_union``, the range entry of
#: :data:`~stsim.baselines.trajectory_refit.REFIT_SETTINGS`): alone, tuning seeds first 10 / all
#: steps 0.062358 / 0.019192 -> 0.063069 / 0.019462 at -6 % CPU; 1500 particles 0.061432 /
#: 0.018321 with the union but held-out 0.066178 against 1000's 0.065383.  Seed 7's first 10
#: steps against its limit run again (perf/limits/, 39 tasks, four draws): 1.00x -> 1.01x (1.00x
#: -> 1.07x for draw 0; session 19 measured 0.993 -> 1.039 for 1000 particles then).  Event
#: (session 34): 1000 particles instead of the ToA filter's 1500, which pays for the refit's
#: ``path_fit`` over 80 draws instead of 40 (the event entry of
#: :data:`~stsim.baselines.trajectory_refit.REFIT_SETTINGS`): tuning / held-out seeds, first 10 /
#: all steps, 0.102877 / 0.050562 -> 0.102682 / 0.049499 and 0.102999 / 0.049873 -> 0.103127 /
#: 0.049672 at -1.5 % CPU (in-process medians of 3 alternating rounds, 20 tasks of seed 7; the
#: particles alone -5 %, 0.102682 / 0.050949); seed 7's first 10 steps against its limit 1.09x
#: -> 1.09x, seed 5's all steps 1.27x -> 1.27x (four draws).  With 121 cells too: -6 %, 0.103032
#: / 0.050664 (particles alone), held-out with the 80 draws 0.102909 / 0.049540; not taken.
#: Event (session 36): 500 particles, which pays for the refit's ``late_reservoir``: the particles
#: alone -7.4 % CPU, seed 5's limit set (draws 0-3 pooled) first 10 / all steps 1.099x / 1.229x ->
#: 1.102x / 1.231x, seed 7's first 10 steps 1.092x -> 1.092x (100 particles 1.090x on draw 0: the
#: refit answers nearly every step); 300 with the reservoir cost more than 500 (the refit's
#: searches), 700 the same accuracy.
DEFAULT_FILTER: dict = {"stark.tracking.range_bearing": {"n_particles": 1000, "lost": None},
                        "stark.tracking.range": {"n_particles": 1000},
                        "stark.tracking.event": {"n_particles": 500}}


def default_track_settings(task: Task) -> dict:
    """The keyword arguments :func:`default_track` gives the filter of a tracking task: for
    proximity ``late``, the resample-move sampler's settings
    (:data:`~stsim.baselines.trajectory_smc.SMC_SETTINGS`); else ``refit``
    (:func:`~stsim.baselines.trajectory_refit.refit_settings`: the family's or its modality's, ToA's for the event families), ``smooth`` (the smoother's
    settings for the families of :data:`SMOOTHED_DEFAULTS`, else None) and the filter's own
    settings of :data:`DEFAULT_FILTER`.  One place for them, so that ``perf/pf_vs_limit.py``
    scores the default itself."""
    from .trajectory_refit import refit_settings
    m = task.inputs["modality"]
    if m == "proximity":
        from .trajectory_smc import SMC_SETTINGS
        return {"late": SMC_SETTINGS}
    return {"refit": refit_settings(task.family, m), "smooth": _default_smoother(task),
            **DEFAULT_FILTER.get(task.family, {})}


#: tracking families whose default runs the MAP smoother under the prior's Gaussian
#: approximation between the filter and the refit (:mod:`stsim.baselines.trajectory_smoother`;
#: issue 20).  Chosen per family on tuning suite seeds 11 and 13 (20 tasks each, trimmed RMSE
#: first 10 / all steps; a setting must beat the others on both seeds over both horizons, within
#: the cost target of 5x below Stone Soup's particle filter with a 6 % margin for timing noise),
#: refit alone -> smoother and refit: range 0.091 / 0.039 -> 0.071 / 0.038 (seed 11), 0.098 /
#: 0.040 -> 0.080 / 0.033 (seed 13), with the range refit from step 3 (``REFIT_SETTINGS``; the
#: refit from step 0 after the smoother, 0.060 / 0.031 and 0.072 / 0.029, measured 4.6-4.9x
#: cheaper than Stone Soup's particle filter); event (steps 0-13) 0.163 / 0.146 -> 0.163 /
#: 0.145, 0.129 / 0.098 -> 0.125 / 0.096 (also smoothing the later steps the refit leaves,
#: 0.163 / 0.128 and 0.125 / 0.088, measured 5.2-5.9x).  x-y-t (emission times unknown:
#: ``SMOOTHER_SETTINGS["toa_schedule"]``, then steps 0-13; 0-19 since session 6) joined once the refit's
#: Levenberg-Marquardt was made cheaper (same answers): 0.2620 / 0.1441 -> 0.2600 / 0.1437 (seed
#: 11), 0.2622 / 0.1042 -> 0.2474 / 0.1031 (seed 13), measured 6.3x cheaper than Stone Soup's
#: particle filter in ``perf/pf_cost.py`` and 6.5-6.7x in four runs of ``perf/smoothed_cost.py``
#: (before the cheaper refit: 4.8x in ``perf/pf_cost.py``); with the later steps the refit
#: leaves smoothed too 0.2600 / 0.1199 and 0.2474 / 0.1008, but 4.8-5.4x in ``perf/pf_cost.py``.
#: Temporal and range+bearing joined once the smoother was made about 2x cheaper (session 6:
#: Gauss-Newton from the filter's path in place of scipy's Levenberg-Marquardt, leaner residuals;
#: trajectory_smoother.SMOOTHER_SETTINGS): temporal (``toa_time``: the later steps the refit
#: leaves smoothed too) 0.0058 / 0.0019 -> 0.0047 / 0.0014 (seed 11), 0.0053 / 0.0024 -> 0.0050
#: / 0.0019 (seed 13), 5.7-6.3x cheaper than Stone Soup's particle filter in six runs of
#: ``perf/smoothed_cost.py`` (before: 5.25-5.7x; steps 0-13 only, as x-y-t: worse over all
#: steps, 0.0022 and 0.0026); range+bearing (``refit_from`` 4, restarts on step 0 only, ``ftol``
#: 0.01) 0.0467 / 0.0467 -> 0.0392 / 0.0375 (seed 11), 0.0529 / 0.0429 -> 0.0389 / 0.0294 (seed
#: 13), and on a third tuning seed, 17 (added because seed 7 had been worse with the smoother,
#: 1.52 -> 1.59 of the limit), 0.0445 / 0.0238 -> 0.0387 / 0.0210; 5.34-5.48x in four runs of
#: ``perf/smoothed_cost.py --family stark.tracking.range_bearing`` but 5.19-5.22x in two runs of
#: all five families (the default without the smoother 5.7-5.8x there; with the smoother's
#: general settings 5.0-5.3x; before session 6: 4.2-4.8x).  Re-measured in session 7 with the
#: refit's range+bearing settings (a search at step 1 and on loss, trajectory_refit.REFIT_SETTINGS):
#: kept, without -> with the smoother 0.0422 / 0.0422 -> 0.0405 / 0.0360 (seed 11), 0.0405 /
#: 0.0403 -> 0.0363 / 0.0302 (13), 0.0377 / 0.0225 -> 0.0383 / 0.0207 (17), 6.3x in two runs of
#: ``perf/smoothed_cost.py --family stark.tracking.range_bearing`` (without: 6.4-7.6x).  Not in the default: bearing (seed 11 worse
#: over the first 10 steps, 0.209 -> 0.211).  All but bearing have it as ``baseline:smoother``.
#: Scripts in docs/stark-tier1.md.
SMOOTHED_DEFAULTS = ("stark.tracking.range", "stark.tracking.range_bearing", "stark.tracking.event",
                     "stark.temporal_tracking.event", "stark.tracking.event_xyt")


def _default_smoother(task: Task) -> dict | None:
    """The smoother settings of the task (:func:`stsim.baselines.trajectory_smoother.settings_for`)
    when its family is in :data:`SMOOTHED_DEFAULTS`, else None."""
    from .trajectory_smoother import settings_for
    return settings_for(task) if task.family in SMOOTHED_DEFAULTS else None


def solve_tracking_smoother(task: Task, solver: str = "baseline:smoother") -> list[Answer]:
    """Range, bearing, range+bearing or ToA tracking by the particle filter followed by the MAP
    smoother over the steps seen so far under the Gaussian approximation of the generator's
    trajectory prior (:mod:`stsim.baselines.trajectory_smoother`, settings
    :data:`~stsim.baselines.trajectory_smoother.SMOOTHER_SETTINGS`), without the parametric refit.

    Raises ``ValueError`` for range / bearing readings with Gaussian noise (the filter needs
    bounded noise); ToA with Gaussian noise keeps the filter's answers."""
    from .trajectory_smoother import settings_for
    m = task.inputs["modality"]
    settings = settings_for(task) or {"from_step": 1}
    if m == "toa":
        from .particle_tracking import track_task
        return _event_tracking(task, solver, *track_task(task, smooth=settings))
    from .sensor_particle_tracking import track_sensor_task
    est = track_sensor_task(task, smooth=settings)
    return _per_step(task, [[float(a), float(b)] for a, b in est], solver)


def solve_tracking_filter(task: Task, solver: str = "baseline:filter") -> list[Answer]:
    """Range, bearing or range+bearing tracking by the particle filter alone (the default
    before the parametric refit; :func:`solve_tracking_pf` without it).

    Raises ``ValueError`` for Gaussian noise (the filter needs bounded noise)."""
    from .sensor_particle_tracking import track_sensor_task
    est = track_sensor_task(task)
    return _per_step(task, [[float(a), float(b)] for a, b in est], solver)


def solve_proximity_tracking_filter(task: Task, solver: str = "baseline:filter") -> list[Answer]:
    """Proximity tracking by the particle filter alone (the default before the resample-move
    sampler of its later steps, :mod:`stsim.baselines.trajectory_smc`)."""
    from .particle_tracking import track_task
    est = track_task(task)[0]
    return _per_step(task, [[float(a), float(b)] for a, b in est], solver)


def solve_proximity_tracking_grid(task: Task, solver: str = "baseline:grid") -> list[Answer]:
    """Grid Bayes (histogram) filter, random-walk sd 1.6 units per step on 61 x 61 cells (the
    proximity default before the particle filter)."""
    s = np.asarray(task.inputs["sensors"], float)
    est = proximity_track_bayes(s, _readings(task), float(task.inputs["radius"]), step_sigma=1.6, cells=61)
    return _per_step(task, [[float(a), float(b)] for a, b in est], solver)


def solve_proximity_tracking_zones(task: Task, solver: str = "baseline:zones") -> list[Answer]:
    """Detection zones intersected with the previous feasible set grown by the largest
    plausible step (STARK Table 9's proximity tracking)."""
    s = np.asarray(task.inputs["sensors"], float)
    est = proximity_track(s, _readings(task), float(task.inputs["radius"]))
    return _per_step(task, [[float(a), float(b)] for a, b in est], solver)


def solve_proximity_tracking_bayes(task: Task, solver: str = "baseline:bayes") -> list[Answer]:
    """Grid Bayes (histogram) filter for proximity tracking."""
    s = np.asarray(task.inputs["sensors"], float)
    est = proximity_track_bayes(s, _readings(task), float(task.inputs["radius"]))
    return _per_step(task, [[float(a), float(b)] for a, b in est], solver)


def _event_values(task: Task, pos, t0) -> list:
    if task.answer_format == "point":
        return [[float(a), float(b)] for a, b in pos]
    if task.answer_format == "time":
        return [None if not np.isfinite(t) else float(t) for t in t0]
    return [None if not np.isfinite(t) else [float(p[0]), float(p[1]), float(t)] for p, t in zip(pos, t0)]


def solve_event_tracking_ls(task: Task, solver: str = "baseline:ls") -> list[Answer]:
    """ToA tracking step by step (the default before issue 20): position with known emission
    times by the EKF bank over ranges; otherwise per-step least squares over ``(x, y, t0)``
    with the previous position as a prior (:func:`stsim.baselines.tracking.toa_track`)."""
    s = np.asarray(task.inputs["sensors"], float)
    z = _readings(task)
    emit = task.inputs.get("times")
    sigma = float((task.inputs.get("sensor_model", {}).get("noise") or {}).get("half_width", 0.01))
    pos, t0 = toa_track(s, z, float(task.inputs["wave_speed"]),
                        emit_times=None if emit is None else np.asarray(emit, float), toa_sigma=sigma)
    return _per_step(task, _event_values(task, pos, t0), solver)


def solve_event_tracking(task: Task, solver: str = "baseline") -> list[Answer]:
    """Default ToA tracking: a particle filter under the generator's motion prior with the
    unknown shot time integrated out exactly (Rao-Blackwellised), position, time or both by
    family (:mod:`stsim.baselines.particle_tracking`), its answers replaced from step 8 on,
    where it holds, by the generator's parametric trajectory and first emission time fitted to
    all readings so far (:mod:`stsim.baselines.trajectory_refit`,
    :data:`~stsim.baselines.trajectory_refit.REFIT_SETTINGS`; issue 20); for the families of
    :data:`SMOOTHED_DEFAULTS` (all three) the MAP smoother over the steps seen so far
    runs between the two (:mod:`stsim.baselines.trajectory_smoother`; :func:`default_track`)."""
    return _event_tracking(task, solver, *default_track(task))


def solve_event_tracking_filter(task: Task, solver: str = "baseline:filter") -> list[Answer]:
    """ToA tracking by the particle filter alone (the default before the parametric refit)."""
    from .particle_tracking import track_task
    return _event_tracking(task, solver, *track_task(task))


def _event_tracking(task: Task, solver: str, pos, t0) -> list[Answer]:
    if t0 is None:
        t0 = np.asarray(task.inputs.get("times") or [np.nan] * len(pos), float)
    return _per_step(task, _event_values(task, pos, t0), solver)


def solve_tracking_posterior(task: Task, solver: str = "baseline:posterior") -> list[Answer]:
    """Any tracking family (range, bearing, range+bearing, proximity, ToA position / time /
    both) by the tracker that learns the trajectory prior's parameters: the limit's SMC
    sampler at a smaller budget, step by step
    (:func:`stsim.baselines.posterior_tracking.posterior_track`, budget
    :data:`~stsim.baselines.posterior_tracking.DEFAULT_BUDGET`; seconds per task; issue 20).

    Raises ``ValueError`` for Gaussian noise (the sampler needs bounded noise)."""
    from .posterior_tracking import posterior_track
    r = posterior_track(task)
    if task.inputs["modality"] == "toa":
        return _per_step(task, _event_values(task, r.pos, r.emit), solver)
    return _per_step(task, [[float(a), float(b)] for a, b in r.pos], solver)


#: family -> (default baseline, {alternative name: solver})
BASELINES: dict[str, Callable[[Task], list[Answer]]] = {}
ALTERNATIVES: dict[str, dict[str, Callable[[Task], list[Answer]]]] = {
    "stark.localization.proximity": {"grid": solve_proximity_grid},
    "stark.tracking.proximity": {"bayes": solve_proximity_tracking_bayes,
                                 "filter": solve_proximity_tracking_filter,
                                 "grid": solve_proximity_tracking_grid,
                                 "zones": solve_proximity_tracking_zones},
}
for _m in ("range", "bearing", "range_bearing"):
    ALTERNATIVES[f"stark.localization.{_m}"] = {"ls": solve_localization_ls}
    ALTERNATIVES[f"stark.tracking.{_m}"] = ({"ekf": solve_tracking_ekf, "filter": solve_tracking_filter}
                                           if _m in PF_TRACKING else {"pf": solve_tracking_pf})
for _f in ("stark.localization.event", "stark.temporal_localization.event", "stark.localization.event_xyt"):
    ALTERNATIVES[_f] = {"ls": solve_event_localization_ls}
for _f in ("stark.tracking.event", "stark.temporal_tracking.event", "stark.tracking.event_xyt"):
    ALTERNATIVES[_f] = {"ls": solve_event_tracking_ls, "filter": solve_event_tracking_filter}
for _f in ("stark.tracking.range", "stark.tracking.bearing", "stark.tracking.range_bearing",
           "stark.tracking.proximity", "stark.tracking.event", "stark.temporal_tracking.event",
           "stark.tracking.event_xyt"):
    ALTERNATIVES[_f]["posterior"] = solve_tracking_posterior
for _f in ("stark.tracking.range", "stark.tracking.range_bearing", "stark.tracking.event",
           "stark.temporal_tracking.event", "stark.tracking.event_xyt"):
    ALTERNATIVES[_f]["smoother"] = solve_tracking_smoother
for _m in ("range", "bearing", "range_bearing", "proximity"):
    BASELINES[f"stark.localization.{_m}"] = solve_localization
    BASELINES[f"stark.tracking.{_m}"] = solve_tracking
for _f in ("stark.localization.event", "stark.temporal_localization.event", "stark.localization.event_xyt"):
    BASELINES[_f] = solve_event_localization
for _f in ("stark.tracking.event", "stark.temporal_tracking.event", "stark.tracking.event_xyt"):
    BASELINES[_f] = solve_event_tracking
