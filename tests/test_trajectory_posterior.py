"""The trajectory-prior posterior (perf/bayes_floor.py's reference for tracking, issue 20)."""
import numpy as np
import pytest

from stsim.baselines.trajectory_posterior import (PriorLayout, smc_posterior, task_readings,
                                                  trajectories, violations)
from stsim.registry import generate_task
from stsim.sim.motion import STARK_RELEASE_RANGES, random_trajectory

FAMILIES = ["stark.tracking.range", "stark.tracking.bearing", "stark.tracking.range_bearing",
            "stark.tracking.proximity", "stark.tracking.event", "stark.temporal_tracking.event",
            "stark.tracking.event_xyt"]


def _truth(task):
    cfg = task.meta["config"]
    t_rel = np.linspace(0.0, cfg["duration"], cfg["n_steps"])
    emit = tuple(cfg["emit_time_range"]) if task.inputs["modality"] == "toa" else None
    lay = PriorLayout(STARK_RELEASE_RANGES, emit=emit)
    t_start = task.meta.get("truth", {}).get("emit_times", [None])[0]
    u, m = lay.to_u(task.meta["trajectory_components"], t_start)
    return lay, u, m, t_rel


@pytest.mark.parametrize("family", FAMILIES)
def test_prior_parameters_rebuild_the_generated_trajectory(family):
    # an independent second computation of the generator's trajectory (stsim.sim.motion)
    for i in range(3):
        task = generate_task(family, i, suite="stark-tier1", suite_seed=7)
        lay, u, m, t_rel = _truth(task)
        pos = trajectories(lay, u[None], m[None], t_rel)[0]
        gold = np.array(task.meta["truth"]["positions"]) if "truth" in task.meta else \
            np.array([s.answer for s in task.steps])
        assert np.abs(pos - gold).max() < 1e-9
        # ... and the true trajectory satisfies every reading's noise bound (violation <= 0)
        r = task_readings(task)
        emit = lay.physical(u[None])[0, -1] + t_rel if lay.emit is not None else None
        for k in range(len(t_rel)):
            v, _ = violations(r, pos[k:k + 1], None if emit is None else emit[k:k + 1], k)
            assert v.size == 0 or v.max() <= 0.0


def test_prior_draws_match_the_generator_distribution():
    # positions of the u-vector prior vs random_trajectory: same mean x at step 0 and 25
    rng = np.random.default_rng(0)
    lay = PriorLayout(STARK_RELEASE_RANGES)
    t_rel = np.linspace(0, 10, 50)
    n = 4000
    u = rng.random((n, lay.dim))
    mask = np.zeros((n, 5), bool)
    for i in range(n):
        mask[i, rng.choice(5, size=rng.integers(1, 4), replace=False)] = True
    ours = trajectories(lay, u, mask, t_rel)
    ref = np.array([random_trajectory(rng, ranges=STARK_RELEASE_RANGES).positions for _ in range(n)])
    for k in (0, 25):
        se = np.hypot(ours[:, k].std(), ref[:, k].std()) / np.sqrt(n)
        assert abs(ours[:, k, 0].mean() - ref[:, k, 0].mean()) < 4 * se
        assert abs(ours[:, k].std() - ref[:, k].std()) < 0.1


def test_smc_posterior_brackets_the_truth_on_a_range_task():
    task = generate_task("stark.tracking.range_bearing", 0, suite="stark-tier1", suite_seed=7)
    _, _, _, t_rel = _truth(task)
    res = smc_posterior(task_readings(task), t_rel, 3, n_particles=300, seed=1)
    gold = np.array([s.answer for s in task.steps[:3]])
    err = np.hypot(*(res.pos - gold).T)
    # range+bearing fixes a point to ~0.1 units: the posterior mean is near it, its spread small
    assert np.all(err < 0.5), err
    assert np.all(np.sqrt(res.pos_var) < 0.5)
    assert np.all(res.ess > 30)
