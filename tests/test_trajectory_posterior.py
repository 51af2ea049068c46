"""The trajectory-prior posterior (perf/bayes_floor.py's reference for tracking, issue 20)."""
import numpy as np
import pytest

from stsim.baselines.trajectory_posterior import (PriorLayout, smc_posterior, task_readings,
                                                  trajectories, violations)
from stsim.registry import generate_task
from stsim.sim.motion import MOTION_RANGES, STARK_RELEASE_RANGES, random_trajectory

FAMILIES = ["stark.tracking.range", "stark.tracking.bearing", "stark.tracking.range_bearing",
            "stark.tracking.proximity", "stark.tracking.event", "stark.temporal_tracking.event",
            "stark.tracking.event_xyt"]


def _truth(task):
    cfg = task.meta["config"]
    t_rel = np.linspace(0.0, cfg["duration"], cfg["n_steps"])
    emit = tuple(cfg["emit_time_range"]) if task.inputs["modality"] == "toa" else None
    lay = PriorLayout(MOTION_RANGES[cfg.get("motion_ranges", "stark_release")], emit=emit)
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
            v, ld = violations(r, pos[k:k + 1], None if emit is None else emit[k:k + 1], k)
            assert v.size == 0 or v.max() <= 0.0
            assert np.isfinite(ld).all()   # inside the exact likelihood's support, not on its edge


@pytest.mark.parametrize("family", FAMILIES)
def test_generated_truth_has_zero_violation_at_every_step(family):
    # the sampler's model (step_violations: every step at once) against the generator on 10
    # tasks per family: the true trajectory meets every printed reading exactly
    from stsim.baselines.trajectory_posterior import step_violations
    for i in range(10):
        task = generate_task(family, i, suite="stark-tier1", suite_seed=7)
        lay, u, m, t_rel = _truth(task)
        pos = trajectories(lay, u[None], m[None], t_rel)
        emit = lay.physical(u[None])[:, -1:] + t_rel[None] if lay.emit is not None else None
        vm, ld = step_violations(task_readings(task), pos, emit, len(t_rel))
        assert np.all(vm <= 0.0), (i, vm.max())
        assert np.all(np.isfinite(ld)), i


def test_reading_likelihood_is_the_rounded_uniform_noise():
    # brute force: a reading x + U(-a, a) printed to 4 decimals; the probability of each printed
    # value, counted over a fine grid of noise values, equals exp(loglik) * 2h (reading_terms)
    from stsim.baselines.trajectory_posterior import ROUNDING, reading_terms
    for x, a in [(3.14159265, 0.0123456), (0.5, 0.01), (7.77777, 2.2e-4), (1.0, 3e-5)]:
        noise = (np.arange(2_000_000) + 0.5) / 2_000_000 * 2 * a - a
        printed, counts = np.unique(np.round(x + noise, 4), return_counts=True)
        p_brute = counts / len(noise)
        v, ld = reading_terms(np.abs(printed - x), np.full(len(printed), a))
        assert np.all(v <= 0)
        assert np.allclose(np.exp(ld) * 2 * ROUNDING, p_brute, atol=2e-6), (x, a)
        # a printed value one rounding unit beyond the reach of the noise is impossible
        v_out, _ = reading_terms(np.array([a + 3 * ROUNDING]), np.array([a]))
        assert v_out[0] > 0


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


@pytest.mark.slow
def test_smc_posterior_brackets_the_truth_on_a_range_task():
    task = generate_task("stark.tracking.range_bearing", 0, suite="stark-tier1", suite_seed=7)
    _, _, _, t_rel = _truth(task)
    res = smc_posterior(task_readings(task), t_rel, 3, n_particles=300, seed=1)
    gold = np.array([s.answer for s in task.steps[:3]])
    err = np.hypot(*(res.pos - gold).T)
    # range+bearing fixes a point to ~0.1 units: the posterior mean is near it, its spread small
    assert np.all(err < 0.5), err
    assert np.all(np.sqrt(res.pos_var) < 0.5)
    assert np.all(res.ess > 20)


def test_structures_enumerate_the_prior_with_its_weights():
    # 5 kinds, 1..3 active: 5 + 10 + 10 = 25 structures; P(k) = 1/3 split over C(5, k) subsets
    from stsim.baselines.trajectory_posterior import _log_struct_prior, structures
    S = structures(5, 3)
    assert S.shape == (25, 5)
    assert len({tuple(m) for m in S}) == 25
    p = np.exp(_log_struct_prior(S, 3, 5))
    assert abs(p.sum() - 1.0) < 1e-12
    assert abs(p[0] - 1 / 15) < 1e-12 and abs(p[-1] - 1 / 30) < 1e-12


def _prior_importance_means(r, t_rel, n: int, K: int, seed: int):
    """Independent reference: plain importance sampling of ``n`` whole prior trajectories
    (weight = the exact likelihood of the readings of steps 0..k); the (K, 2) posterior means
    and the (K,) effective sample sizes of steps 0..K-1."""
    from stsim.baselines.trajectory_posterior import (_log_struct_prior, step_violations,
                                                      structures)
    lay = PriorLayout(STARK_RELEASE_RANGES)
    rng = np.random.default_rng(seed)
    S = structures(5, 3)
    u = rng.random((n, lay.dim))
    mask = S[rng.choice(len(S), size=n, p=np.exp(_log_struct_prior(S, 3, 5)))]
    full = trajectories(lay, u, mask, t_rel)
    vm, ld = step_violations(r, full, None, K)
    ld = np.where(np.isfinite(ld), ld, -np.inf)
    mean_is, ess_is = np.empty((K, 2)), np.empty(K)
    for k in range(K):   # the step-k posterior conditions on the readings of steps 0..k
        w = np.where(np.all(vm[:, :k + 1] <= 0, axis=1), np.exp(ld[:, :k + 1].sum(axis=1)), 0.0)
        ess_is[k] = w.sum() ** 2 / (w ** 2).sum()
        mean_is[k] = w @ full[:, k] / w.sum()
    return mean_is, ess_is

@pytest.mark.slow
def test_smc_posterior_matches_prior_importance_sampling():
    # independent second computation: plain importance sampling of prior draws (weight = the
    # readings' bounded likelihood) on the first 3 steps of a proximity task, where the
    # detection disks are wide enough for prior draws to hit them
    task = generate_task("stark.tracking.proximity", 0, suite="stark-tier1", suite_seed=7)
    _, _, _, t_rel = _truth(task)
    r = task_readings(task)
    K = 3
    mean_is, ess_is = _prior_importance_means(r, t_rel, 60000, K, seed=5)
    res = smc_posterior(r, t_rel, K, n_particles=2500, seed=2)
    sd = np.sqrt(res.pos_var)
    assert np.all(ess_is > 200)
    # both Monte-Carlo errors: sd / sqrt(ESS) for each (the SMC's particles are correlated,
    # so its ESS is read as a tenth of the reported one)
    tol = 4 * sd * np.sqrt(1 / ess_is + 10 / res.ess)
    assert np.all(np.hypot(*(res.pos - mean_is).T) < tol), (res.pos, mean_is, tol)


def test_next_tolerance_keeps_the_requested_share_of_the_ess():
    # hand-derived: equal weights, violations 0, 1, 2, 3 -> ESS 4; keeping half (ESS >= 2)
    # needs the two particles with v <= 1; keeping a quarter, v <= 0 alone
    from stsim.baselines.trajectory_posterior import _next_eps
    w, v = np.ones(4), np.array([0.0, 1.0, 2.0, 3.0])
    assert _next_eps(w, v, np.inf, 0.5) == 1.0
    assert _next_eps(w, v, np.inf, 0.25) == 0.0
    assert _next_eps(w, np.zeros(4), 5.0) == 0.0   # every particle consistent: exact posterior
    # slow progress (the halving tolerance above 0.9 eps): the nearest few percent are kept
    v = np.r_[np.linspace(0.95, 1.0, 200), 0.2]
    assert _next_eps(np.ones(201), v, 1.0, 0.5) < 0.96


def test_task_posterior_uses_the_family_motion_table(monkeypatch):
    """Proximity tracking draws its trajectories from the wider ``default`` table (generator
    config ``motion_ranges``); the limit must use the same prior, the other families the
    release table."""
    from stsim.baselines import trajectory_posterior as tp
    from stsim.registry import generate_task, load_families
    from stsim.sim.motion import DEFAULT_RANGES, STARK_RELEASE_RANGES
    load_families()
    seen = {}
    monkeypatch.setattr(tp, "smc_posterior", lambda *a, **kw: seen.setdefault(len(seen), kw["ranges"]))
    tp.task_posterior(generate_task("stark.tracking.proximity", 0))
    tp.task_posterior(generate_task("stark.tracking.range", 0))
    assert seen[0] is DEFAULT_RANGES and seen[1] is STARK_RELEASE_RANGES
    assert DEFAULT_RANGES != STARK_RELEASE_RANGES


@pytest.mark.slow
def test_known_time_event_task_is_not_lost():
    # stark.tracking.event task 0: after step 8 every particle of the true structure
    # (linear + spiral) sat in a mode the step's readings rule out (the tolerance stalled at
    # 1.41 noise bounds and the run was lost).  The stalled structure is now restarted from the
    # prior over steps 0..8; the run converges and the posterior mean is near the truth.
    from stsim.baselines.trajectory_posterior import task_posterior
    task = generate_task("stark.tracking.event", 0, suite="stark-tier1", suite_seed=7)
    res = task_posterior(task, n_steps=10, n_particles=1000, max_levels=40, ess_keep=0.3,
                         max_sweeps=8, seed=0)
    gold = np.array([s.answer for s in task.steps[:10]])
    err = np.hypot(*(res.pos - gold).T)
    assert res.restarts >= 1
    assert res.dropped < 1e-3   # no structure of weight cut at the level budget
    # ToA with known emission: about +-0.2 units of range per reading.  The posterior is
    # calibrated: the squared error is on the order of the posterior variance (their ratio
    # averages 1 over the generator; 4 allows for one task), no step beyond 4 sd
    assert np.mean(err ** 2) < 4 * np.mean(res.pos_var), (err, np.sqrt(res.pos_var))
    assert np.all(err < 4 * np.sqrt(res.pos_var) + 0.02), (err, np.sqrt(res.pos_var))


@pytest.mark.slow
def test_smc_posterior_matches_importance_sampling_on_two_bearing_steps():
    # independent second computation on a 2-step problem: a bearing task cut to one reading per
    # step (a wedge of +-3.6 degrees), posterior mean by plain importance sampling of 100,000
    # prior draws (weight = the exact reading likelihood) against the SMC sampler
    task = generate_task("stark.tracking.bearing", 3, suite="stark-tier1", suite_seed=7)
    _, _, _, t_rel = _truth(task)
    r = task_readings(task)
    z = np.full_like(r.z, np.nan)
    for k in range(len(z)):
        j = np.flatnonzero(np.isfinite(r.z[k, :, 0]))[0]
        z[k, j] = r.z[k, j]
    r.z = z
    K = 2
    mean_is, ess_is = _prior_importance_means(r, t_rel, 100_000, K, seed=11)
    res = smc_posterior(r, t_rel, K, n_particles=2500, seed=4)
    assert np.all(ess_is > 1000), ess_is
    for k in range(K):
        sd = np.sqrt(res.pos_var[k])
        tol = 4 * sd * np.sqrt(1 / ess_is[k] + 10 / res.ess[k])
        assert np.hypot(*(res.pos[k] - mean_is[k])) < tol, (k, res.pos[k], mean_is[k], tol)

def test_posterior_crlb_grows_with_the_noise_and_refuses_proximity():
    # property: ten times the range noise (Table 7 sigma 0.01 -> 0.1) raises the bound at every
    # step; binary detections carry no Fisher information
    import copy

    from stsim.baselines.trajectory_posterior import posterior_crlb
    task = generate_task("stark.tracking.range", 1, suite="stark-tier1", suite_seed=7)
    b1 = posterior_crlb(task, n_steps=4, n_draws=40)
    noisy = copy.deepcopy(task)
    noisy.inputs["sensor_model"]["noise"]["sigma"] = 0.1
    b10 = posterior_crlb(noisy, n_steps=4, n_draws=40)
    assert np.all(b1 > 0) and np.all(np.isfinite(b1))
    assert np.all(b10 > 1.5 * b1), (b1, b10)
    with pytest.raises(ValueError, match="Fisher"):
        posterior_crlb(generate_task("stark.tracking.proximity", 0, suite="stark-tier1", suite_seed=7))


def test_metric_proposal_converges_to_a_known_target_on_a_thin_periodic_band():
    # property of the move (symmetric mixture proposal, plain Metropolis ratio): on a toy target
    # with an exact answer -- x0 periodic with density 1 + 0.8 cos(2 pi x0), x1 uniform within
    # +-0.02 of the curve 0.5 + 0.1 sin(2 pi x0) -- chains started from the wrong x0 law
    # (uniform) reach the target's: Kolmogorov-Smirnov against its exact CDF
    # F(x) = x + 0.8 sin(2 pi x) / (2 pi), and the offset from the curve stays uniform
    from scipy.stats import kstest

    from stsim.baselines.trajectory_posterior import metric_proposal
    rng = np.random.default_rng(3)
    n = 4000
    centre = lambda x0: 0.5 + 0.1 * np.sin(2 * np.pi * x0)  # noqa: E731

    def logt(x):
        inside = np.abs(x[:, 1] - centre(x[:, 0])) < 0.02
        with np.errstate(divide="ignore"):
            return np.where(inside, np.log(1 + 0.8 * np.cos(2 * np.pi * x[:, 0])), -np.inf)
    x = np.column_stack([rng.random(n), np.zeros(n)])
    x[:, 1] = centre(x[:, 0]) + rng.uniform(-0.02, 0.02, n)
    lt = logt(x)
    Ls = np.array([np.diag([0.2, 0.01]), [[0.05, 0.0], [0.03, 0.004]], [[0.05, 0.0], [-0.03, 0.004]]])
    periodic = np.array([True, False])
    acc = []
    for _ in range(400):
        prop = metric_proposal(x, Ls, 1.0, periodic, rng)
        lp = logt(prop)
        a = np.log(rng.random(n)) < lp - lt
        x[a], lt[a] = prop[a], lp[a]
        acc.append(a.mean())
    assert 0.05 < np.mean(acc) < 0.9
    assert np.all((x[:, 0] >= 0) & (x[:, 0] < 1))
    cdf = lambda v: v + 0.8 * np.sin(2 * np.pi * v) / (2 * np.pi)  # noqa: E731
    assert kstest(x[:, 0], cdf).pvalue > 1e-3
    assert kstest(x[:, 0], "uniform").pvalue < 1e-6          # it did move away from the start
    off = (x[:, 1] - centre(x[:, 0]) + 0.02) / 0.04
    assert kstest(off, "uniform").pvalue > 1e-3


def test_gauss_newton_covariance_is_the_inverse_of_the_reading_information():
    # independent second computation: the range readings' Jacobian by central differences of
    # the distances from positions built here, W = 3 / ((sigma d)^2 + h^2); the factor must
    # satisfy (L L^T)^-1 = J^T W J + 12 I; widen = inf leaves the prior's 12 I alone
    from stsim.baselines.trajectory_posterior import ROUNDING, _move_blocks, gauss_newton_chol
    task = generate_task("stark.tracking.range", 2, suite="stark-tier1", suite_seed=7)
    lay, u, m, t_rel = _truth(task)
    r = task_readings(task)
    blocks, kinds = _move_blocks(lay, False)
    dims = np.concatenate([b for b, k in zip(blocks, kinds) if m[k]])
    K = 3
    L = gauss_newton_chol(r, lay, u[None], m[None], t_rel, dims, np.ones(K))[0]

    def dists(v):
        p = trajectories(lay, v[None], m[None], t_rel)[0, :K]
        d = np.hypot(p[:, None, 0] - r.sensors[None, :, 0], p[:, None, 1] - r.sensors[None, :, 1])
        return d[np.isfinite(r.z[:K, :, 0])]
    h = 1e-6
    J = np.column_stack([(dists(u + h * np.eye(lay.dim)[c]) - dists(u - h * np.eye(lay.dim)[c])) / (2 * h)
                         for c in dims])
    d = dists(u)
    W = 3.0 / ((r.range_sigma * d) ** 2 + ROUNDING ** 2)
    info = J.T @ (W[:, None] * J) + 12 * np.eye(len(dims))
    np.testing.assert_allclose(np.linalg.inv(L @ L.T), info, rtol=2e-3, atol=1e-3 * np.abs(info).max())
    L0 = gauss_newton_chol(r, lay, u[None], m[None], t_rel, dims, np.full(K, np.inf))[0]
    np.testing.assert_allclose(L0 @ L0.T, np.eye(len(dims)) / 12, rtol=1e-9)


@pytest.mark.slow
def test_range_task_lost_before_is_no_longer_lost():
    # stark.tracking.range task 9 (suite seed 7; truth linear + circular + figure-eight, four
    # sensors within 3.3 units of each other): with perf/bayes_floor.py's settings of
    # 2026-11-30 both runs were lost at step 4 (the true structure pruned at step 2 on an
    # evidence estimate far too low, every structure left abandoned: "no particle consistent
    # with the readings").  task_posterior's defaults now revive pruned structures when every
    # other one fails and give the broad first steps more particles; the run converges and is
    # calibrated against the truth (squared error on the order of the posterior variance)
    from stsim.baselines.trajectory_posterior import task_posterior
    task = generate_task("stark.tracking.range", 9, suite="stark-tier1", suite_seed=7)
    kw = dict(n_steps=10, n_particles=1000, max_levels=40, ess_keep=0.3, max_sweeps=8, seed=1)
    with pytest.raises(ValueError, match="no particle consistent"):
        task_posterior(task, revive=False, broad_sd=None, **kw)
    res = task_posterior(task, **kw)
    gold = np.array([s.answer for s in task.steps[:10]])
    err = np.hypot(*(res.pos - gold).T)
    assert np.mean(err ** 2) < 4 * np.mean(res.pos_var) + 1e-4, (err, np.sqrt(res.pos_var))
    assert np.all(err < 4 * np.sqrt(res.pos_var) + 0.05), (err, np.sqrt(res.pos_var))
