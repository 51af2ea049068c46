"""A tracker that learns the trajectory's parameters: the SMC sampler of the limit
(:func:`stsim.baselines.trajectory_posterior.smc_posterior`) run step by step over a whole task
at a smaller, named budget (issue 20).

The generic particle filters (:mod:`stsim.baselines.particle_tracking`,
:mod:`stsim.baselines.sensor_particle_tracking`) move their particles by a motion model and
never learn the ~20 parameters of the generator's prior (STARK Appendix 7.3: 1-3 summed basis
motions, min-max normalised over all steps): their error levels off at their motion noise.
This tracker samples those parameters instead, so its error falls as the readings pin them
down.  Step ``t``'s answer is the posterior mean given the readings of steps ``0..t`` only
(the sampler is sequential: it never reads a later step).

Budgets (:data:`BUDGETS`) set the sampler's particles (shared over the prior's 25
structures, with a floor per structure), tolerance levels per step, MH sweeps per level and
the share of effective sample size a tolerance level keeps; ``"limit"`` is the particle and
level budget of ``perf/bayes_floor.py`` (without its reference options).  When the sampler fails at a step (no structure reaches the exact
posterior within the level budget, or every particle dies), the steps from there on are
answered by the family's default tracker (particle filter and parametric refit), which never fails; the number of such steps
is returned.  Cost: seconds per task (``perf/limit_frontier.py`` measures the frontier of
error ratio against CPU time): a reference-grade variant, not a fast default.
"""
from __future__ import annotations

import dataclasses
import time

import numpy as np

from .prior_motion import prior_config
from .trajectory_posterior import NotConverged, smc_posterior, task_readings

#: name -> :func:`smc_posterior` keyword arguments.  ``"limit"`` = ``perf/bayes_floor.py``'s
#: particle and level budget (1000 particles, 40 levels, 2-8 sweeps, ESS share 0.3), without the
#: reference options :func:`~stsim.baselines.trajectory_posterior.task_posterior` adds
#: (``revive``, ``broad_sd``, ``gn_moves``): not the limit itself.
BUDGETS: dict[str, dict] = {
    "tiny": {"n_particles": 100, "min_per_structure": 4, "max_levels": 30, "n_moves": 1,
             "max_sweeps": 2, "ess_keep": 0.2, "prune_nats": 15.0},
    "small": {"n_particles": 250, "min_per_structure": 10, "max_levels": 40, "n_moves": 1,
              "max_sweeps": 3, "ess_keep": 0.3, "prune_nats": 20.0},
    "medium": {"n_particles": 500, "min_per_structure": 20, "max_levels": 40, "n_moves": 1,
               "max_sweeps": 4, "ess_keep": 0.3},
    "limit": {"n_particles": 1000, "max_levels": 40, "n_moves": 2, "max_sweeps": 8,
              "ess_keep": 0.3},
}
#: budgets in increasing cost: a failed run is repeated at the next one (:func:`posterior_track`).
_LADDER = ("tiny", "small", "medium", "limit")
#: the budget of ``baseline:posterior`` (chosen on seed-11 tasks, ``perf/limit_frontier.py``).
DEFAULT_BUDGET = "small"


@dataclasses.dataclass
class PosteriorTrack:
    """Answers per task step: ``pos`` (k, 2) plane units, ``emit`` (k,) emission time (s) or
    None (no ToA), ``pos_var`` (k,) posterior variance of the position (units^2; NaN on the
    fallback steps), ``cpu`` (k,) process CPU seconds from the call's start until each step's
    answer was ready (the cost of answering the first ``i + 1`` steps), ``fallback`` how many
    (final) steps the default tracker answered, ``error`` the sampler's message when it failed."""
    pos: np.ndarray
    emit: np.ndarray | None
    pos_var: np.ndarray
    cpu: np.ndarray
    fallback: int = 0
    error: str = ""


def posterior_track(task, budget: str | dict = DEFAULT_BUDGET, seed: int = 0,
                    n_steps: int | None = None, escalate: bool = True) -> PosteriorTrack:
    """Posterior-mean answers of a range, bearing, range+bearing, proximity or ToA tracking
    task, step by step, by :func:`smc_posterior` at ``budget`` (a :data:`BUDGETS` name or
    its keyword arguments).

    The readings (one row per task step) are placed on the prior's step grid
    (``task.steps[i].index``; a task may hold a subset of a trajectory's steps); ``n_steps``
    limits the answers to the first ``n_steps`` task steps (default: all).

    When the sampler fails at step ``t`` (:class:`NotConverged`, or every particle died) and
    ``escalate`` is set, it is run once more from step 0 at the next larger named budget
    (:data:`_LADDER`, seed + 1) and answers the steps from ``t`` on (the steps answered
    already keep their answers); when that fails too, the default tracker answers
    the rest.  ``cpu`` counts every run.

    Raises: ValueError for Gaussian noise (the sampler needs bounded noise), an unknown
    modality or an unknown budget name.
    """
    c0 = time.process_time()
    name = budget if isinstance(budget, str) else None
    if isinstance(budget, str):
        if budget not in BUDGETS:
            raise ValueError(f"unknown posterior budget {budget!r} (choices: {', '.join(BUDGETS)})")
        budget = BUDGETS[budget]
    from ..sim.motion import MOTION_RANGES
    cfg = prior_config(task)
    r = task_readings(task)
    k = len(r.z) if n_steps is None else min(n_steps, len(r.z))
    index = np.arange(len(r.z))
    if task.steps and len(task.steps) == len(r.z):
        cand = np.array([st.index for st in task.steps])
        if cand[0] >= 0 and np.all(np.diff(cand) > 0):
            index = cand
    n_grid = max(cfg["n_steps"], int(index[-1]) + 1)
    full = np.full((n_grid,) + r.z.shape[1:], np.nan)
    full[index] = r.z
    t_rel = np.linspace(0.0, cfg["duration"] * (n_grid - 1) / max(cfg["n_steps"] - 1, 1), n_grid)
    toa = r.modality == "toa"
    last = int(index[k - 1]) + 1
    got: dict[int, tuple] = {}
    errors = []
    ladder = [budget] + ([BUDGETS[b] for b in _LADDER[_LADDER.index(name) + 1:][:1]]
                         if escalate and name in _LADDER else [])
    for j, kw in enumerate(ladder):
        def keep(t, p, v, e, ev):
            if t not in got:   # answers already given stay (the earlier run's)
                got[t] = (p, v, e, time.process_time() - c0)
        try:
            smc_posterior(dataclasses.replace(r, z=full), t_rel, last,
                          ranges=MOTION_RANGES[cfg["motion_ranges"]],
                          max_components=cfg["max_components"],
                          emit_range=cfg["emit_time_range"] if toa else None, seed=seed + j,
                          on_step=keep, **kw)
            break
        except (NotConverged, ValueError) as exc:
            errors.append(str(exc))
    error = "; ".join(errors)
    pos, var, cpu = np.full((k, 2), np.nan), np.full(k, np.nan), np.full(k, np.nan)
    emit = np.full(k, np.nan) if toa else None
    done = 0
    for i, st in enumerate(index[:k]):
        if st not in got:
            break
        pos[i], var[i], cpu[i] = got[st][0], got[st][1], got[st][3]
        if toa:
            emit[i] = got[st][2]
        done = i + 1
    if done < k:
        from .stark_tier1 import default_track
        fp, fe = default_track(task)
        pos[done:] = np.asarray(fp, float)[done:k]
        if toa:
            emit[done:] = (np.asarray(fe, float)[done:k] if fe is not None
                           else np.asarray(task.inputs.get("times") or [np.nan] * k, float)[done:k])
        cpu[done:] = time.process_time() - c0
    return PosteriorTrack(pos, emit, var, cpu, k - done, error)
