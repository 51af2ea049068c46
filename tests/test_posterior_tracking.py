"""The tracker that learns the trajectory prior's parameters (issue 20):
:mod:`stsim.baselines.posterior_tracking` and its variant ``baseline:posterior``."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from stsim.baselines import ALTERNATIVES, BASELINES
from stsim.baselines import posterior_tracking as pt
from stsim.baselines.prior_motion import prior_config
from stsim.baselines.trajectory_posterior import NotConverged
from stsim.registry import generate_task, load_families

TRACKING = ["stark.tracking.range", "stark.tracking.bearing", "stark.tracking.range_bearing",
            "stark.tracking.proximity", "stark.tracking.event", "stark.temporal_tracking.event",
            "stark.tracking.event_xyt"]


def test_variant_is_registered_on_every_tracking_family():
    from stsim.baselines.stark_tier1 import solve_tracking_posterior
    for fam in TRACKING:
        assert ALTERNATIVES[fam]["posterior"] is solve_tracking_posterior, fam
        assert BASELINES[fam] is not solve_tracking_posterior     # a variant, not the default


def test_prior_config_of_a_task_read_from_a_file_is_the_family_default():
    load_families()
    task = generate_task("stark.tracking.proximity", 0, suite="stark-tier1", suite_seed=11)
    generated = prior_config(task)
    read = prior_config(dataclasses.replace(task, meta={}))   # a released task: no config
    assert read == generated
    assert (read["n_steps"], read["motion_ranges"]) == (20, "default")


def _fake_sampler(fail_at: dict, calls: list):
    """An smc_posterior stand-in: answers step t with position (t, run) and raises
    NotConverged at step ``fail_at[run]`` (run = the call's number)."""
    def fake(r, t_rel, n, *, on_step, seed, **kw):
        run = len(calls)
        calls.append({"seed": seed, **kw})
        for t in range(n):
            if t == fail_at.get(run):
                raise NotConverged(f"step {t}: stalled")
            on_step(t, np.array([float(t), float(run)]), 0.5, None, None)
    return fake


def test_failed_run_escalates_once_then_the_default_tracker_answers(monkeypatch):
    task = generate_task("stark.tracking.range", 1, suite="stark-tier1", suite_seed=11)
    calls = []
    # the "tiny" run fails at step 3, the "small" rerun at step 7: steps 0-2 come from the
    # first run, 3-6 from the second, 7.. from the family's default tracker
    monkeypatch.setattr(pt, "smc_posterior", _fake_sampler({0: 3, 1: 7}, calls))
    r = pt.posterior_track(task, "tiny", seed=5)
    assert [c["seed"] for c in calls] == [5, 6]
    assert calls[0]["n_particles"] == pt.BUDGETS["tiny"]["n_particles"]
    assert calls[1]["n_particles"] == pt.BUDGETS["small"]["n_particles"]
    assert r.pos[:3].tolist() == [[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]
    assert r.pos[3:7].tolist() == [[float(t), 1.0] for t in range(3, 7)]
    dflt = np.array([a.value for a in BASELINES[task.family](task)], float)  # the family default's
    np.testing.assert_allclose(r.pos[7:], dflt[7:])
    assert r.fallback == len(task.steps) - 7 and "step 3" in r.error and "step 7" in r.error
    assert np.all(np.isnan(r.pos_var[7:])) and np.all(np.diff(r.cpu) >= 0)
    # without escalation the default tracker answers from the first failure on
    calls.clear()
    r = pt.posterior_track(task, "tiny", escalate=False)
    assert len(calls) == 1 and r.fallback == len(task.steps) - 3
    with pytest.raises(ValueError, match="unknown posterior budget"):
        pt.posterior_track(task, "huge")


@pytest.mark.parametrize("fam", ["stark.tracking.event_xyt", "stark.tracking.proximity"])
def test_the_fallback_answers_as_the_family_default_for_toa_and_proximity(monkeypatch, fam):
    # the default tracker's wiring has one home (stark_tier1.default_track): a sampler failing
    # at step 0 leaves every step to it, and its answers are the family default's, for x-y-t
    # (refit and smoother, emission times too) and proximity (the filter alone) as for range
    from stsim.baselines.stark_tier1 import default_track
    task = generate_task(fam, 1, suite="stark-tier1", suite_seed=11)
    monkeypatch.setattr(pt, "smc_posterior", _fake_sampler({0: 0}, []))
    r = pt.posterior_track(task, "tiny", escalate=False)
    assert r.fallback == len(task.steps)
    got = r.pos if r.emit is None else np.column_stack([r.pos, r.emit])
    np.testing.assert_allclose(got, [a.value for a in BASELINES[fam](task)])
    pos, emit = default_track(task)
    np.testing.assert_allclose(pos, r.pos)
    assert (emit is None) == (fam == "stark.tracking.proximity")


def test_step_answers_match_importance_sampling_of_the_generator():
    # independent second computation: 60,000 trajectories drawn by the generator's own
    # random_trajectory (not the sampler's parameterisation), weighted by the exact bounded
    # bearing likelihood (half-width + print rounding), on the first two steps of a bearing
    # task with one reading at step 0 and two at step 1.  Posterior sd: 2.45 units at step 0
    # (one bearing: a ray), 0.30 at step 1; the importance sampler's own Monte-Carlo error
    # 0.02 sd (step 0, ~2900 accepted) and 0.15 sd (step 1, ~40 accepted).  The default budget
    # must land within 0.25 sd (step 0) and 0.6 sd (step 1) of it.
    from stsim.sim.motion import MOTION_RANGES, random_trajectory
    from stsim.sim.readings import readings_to_array
    task = generate_task("stark.tracking.bearing", 2, suite="stark-tier1", suite_seed=11)
    cfg = task.meta["config"]
    s = np.asarray(task.inputs["sensors"], float)
    z = readings_to_array(task.inputs["readings"], pairs=False, stepped=True)
    assert np.isfinite(z[0]).sum() == 1 and np.isfinite(z[1]).sum() == 2
    half = task.inputs["sensor_model"]["noise_rad"]["half_width"] + np.radians(5e-5)
    rng = np.random.default_rng(1)
    P = np.array([random_trajectory(rng, cfg["n_steps"], cfg["duration"],
                                    max_components=cfg["max_components"],
                                    ranges=MOTION_RANGES[cfg["motion_ranges"]]).positions[:2]
                  for _ in range(60_000)])
    keep = np.ones(len(P), bool)
    r = pt.posterior_track(task, n_steps=2)
    for k in range(2):
        for j in np.flatnonzero(np.isfinite(z[k])):
            b = np.arctan2(P[:, k, 1] - s[j, 1], P[:, k, 0] - s[j, 0])
            keep &= np.abs(np.angle(np.exp(1j * (np.radians(z[k, j]) - b)))) <= half
        assert keep.sum() >= 30
        mean, sd = P[keep, k].mean(axis=0), np.linalg.norm(P[keep, k].std(axis=0))
        assert np.hypot(*(r.pos[k] - mean)) < (0.25, 0.6)[k] * sd, (k, r.pos[k], mean, sd)


@pytest.mark.slow
def test_no_worse_than_the_default_filter_on_seed_11_tasks():
    # property (issue 20): learning the parameters beats the generic motion model once a few
    # steps have pinned them down; trimmed RMSE over the first 20 steps of 3 range and 3
    # bearing tasks of suite seed 11 (not the test seed 7 of the saved limits), against the
    # particle filter alone (``baseline:filter``; the family defaults add the smoother and the
    # parametric refit's posterior mean approximation, which beat this budget there)
    from stsim.scoring.metrics import trimmed_rmse
    for fam in ("stark.tracking.range", "stark.tracking.bearing"):
        ours, dflt = [], []
        for i in range(3):
            task = generate_task(fam, i, suite="stark-tier1", suite_seed=11)
            gold = np.array([st.answer for st in task.steps[:20]], float)
            ours += np.hypot(*(pt.posterior_track(task, n_steps=20).pos - gold).T).tolist()
            d = np.array([a.value for a in ALTERNATIVES[fam]["filter"](task)[:20]], float)
            dflt += np.hypot(*(d - gold).T).tolist()
        assert trimmed_rmse(ours) <= trimmed_rmse(dflt), (fam, trimmed_rmse(ours), trimmed_rmse(dflt))


@pytest.mark.slow
@pytest.mark.parametrize("fam", ["stark.tracking.proximity", "stark.temporal_tracking.event",
                                 "stark.tracking.event_xyt"])
def test_variant_answers_every_step(fam):
    task = generate_task(fam, 0, suite="stark-tier1", suite_seed=11)
    ans = ALTERNATIVES[fam]["posterior"](task)
    assert [a.step for a in ans] == [st.index for st in task.steps]
    assert all(a.status == "ok" and a.solver == "baseline:posterior" for a in ans)
    gold = [st.answer for st in task.steps]
    assert all(np.shape(a.value) == np.shape(g) for a, g in zip(ans, gold))


@pytest.mark.slow
def test_answers_never_read_a_later_step():
    # the task asks for the current position given the readings so far: changing every
    # reading after step 5 (proximity detections flipped) leaves the answers of steps 0-5
    # bit-identical (same seed), and changes later ones
    import copy
    task = generate_task("stark.tracking.proximity", 1, suite="stark-tier1", suite_seed=11)
    other = copy.deepcopy(task)
    for k, step in enumerate(other.inputs["readings"]):
        if k > 5:
            other.inputs["readings"][k] = [1 - v for v in step]
    a, b = pt.posterior_track(task, "tiny"), pt.posterior_track(other, "tiny")
    np.testing.assert_array_equal(a.pos[:6], b.pos[:6])
    assert np.abs(a.pos[6:] - b.pos[6:]).max() > 0.1
