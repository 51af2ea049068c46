"""The proximity / ToA particle filter (stsim.baselines.particle_tracking): hand-derived
Rao-Blackwellised emission intervals, the generator's truth inside the model, the prior
library against random_trajectory, and the new default against the old one on generated tasks."""
import numpy as np
import pytest

from stsim.baselines import ALTERNATIVES, BASELINES
from stsim.baselines.particle_tracking import _Model
from stsim.baselines.prior_motion import ROUNDING, motion_library
from stsim.registry import generate_task
from stsim.sim.motion import STARK_RELEASE_RANGES, random_trajectory
from stsim.sim.readings import readings_to_array

H = 0.01 + ROUNDING


def test_emission_interval_hand_derived():
    # one sensor at the origin, source 10 km east, sound at 20 km/min: d / v = 0.5 min
    z = np.array([[1.0], [1.205], [1.3]])
    m = _Model("toa", np.array([[0.0, 0.0]]), z, speed=20.0, half=0.01, t_rel=np.array([0.0, 0.2, 0.4]))
    p = np.array([[10.0, 0.0]])
    viol, fac, itv = m.step(0, p, None, None)            # first step: t_emit(0) on its own
    L, U = itv(0.0)
    assert viol[0] == 0 and fac(0.0)[0] == pytest.approx(1.0)
    assert (L[0], U[0]) == pytest.approx((0.5 - H, 0.5 + H))
    # step 1 fired 0.2 min later: implied t_start 1.205 - 0.5 - 0.2 = 0.505
    viol, fac, itv = m.step(1, p, L, U)
    L1, U1 = itv(0.0)
    assert (L1[0], U1[0]) == pytest.approx((0.505 - H, 0.5 + H))
    assert fac(0.0)[0] == pytest.approx((0.5 + H - 0.505 + H) / (2 * H))
    # step 2 implies t_start 1.3 - 0.5 - 0.4 = 0.4: below L1 by 0.105 - H, i.e. a violation
    # of (0.105 - H) / H - 1 noise bounds; widening by that much leaves a single point
    viol, fac, itv = m.step(2, p, L1, U1)
    assert viol[0] == pytest.approx((L1[0] - 0.4) / H - 1.0)
    assert fac(0.0)[0] == 0.0
    lo, hi = itv(viol[0])
    assert hi[0] - lo[0] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("family", ["stark.tracking.event", "stark.temporal_tracking.event",
                                    "stark.tracking.event_xyt", "stark.tracking.proximity"])
def test_generator_truth_satisfies_the_model(family):
    """The true path, fired on the schedule, meets every reading's bound: the filter's model is
    the generator's (speed, Table 7 noise with print rounding, schedule, exact disks)."""
    for i in range(3):
        task = generate_task(family, i, suite="stark-tier1", suite_seed=7)
        z = readings_to_array(task.inputs["readings"], pairs=False, stepped=True)
        s = np.asarray(task.inputs["sensors"], float)
        cfg = task.meta["config"]
        t_rel = np.linspace(0.0, cfg["duration"], cfg["n_steps"])
        if family.endswith("proximity"):
            pos = np.array([st.answer for st in task.steps], float)
            m = _Model("proximity", s, z, radius=float(task.inputs["radius"]))
        else:
            pos = np.array(task.meta["truth"]["positions"], float)
            emit = task.inputs.get("times")
            m = _Model("toa", s, z, speed=float(task.inputs["wave_speed"]), half=0.01,
                       emit=None if emit is None else np.asarray(emit, float), t_rel=t_rel)
        L = U = None
        for k in range(len(z)):
            viol, fac, itv = m.step(k, pos[k:k + 1], L, U)
            assert viol[0] == 0.0, (i, k)
            if m.kind == "toa" and m.emit is None:
                L, U = itv(0.0)
                if k == 0:
                    L, U = L - t_rel[0], U - t_rel[0]
                t_start = task.meta["truth"]["emit_times"][0]
                assert L[0] <= t_start <= U[0]


def test_motion_library_matches_random_trajectory():
    lib = motion_library(50, 10.0, 3, "stark_release")
    assert lib.pos.min() >= 0.0 and lib.pos.max() <= 10.0
    spans = lib.pos.max(axis=1) - lib.pos.min(axis=1)           # min-max normalised per axis
    assert np.allclose(spans, 10.0)
    rng = np.random.default_rng(3)
    ref = np.array([np.hypot(*np.diff(random_trajectory(rng, 50, 10.0, ranges=STARK_RELEASE_RANGES)
                                       .positions[:2], axis=0)[0]) for _ in range(600)])
    ours = np.hypot(*lib.vel[:, 0].T)
    # first-step speed: same law (two-sample means within 4 standard errors)
    se = np.sqrt(ref.var() / len(ref) + ours.var() / len(ours))
    assert abs(ref.mean() - ours.mean()) < 4 * se


@pytest.mark.parametrize("family", ["stark.temporal_tracking.event", "stark.tracking.event_xyt"])
def test_default_beats_per_step_fits(family):
    """Averaged over generated tasks, the particle filter's first-10-step RMS error is below the
    per-step least-squares tracker's (baseline:ls; 30 tasks of suite seed 7: temporal 0.0095
    vs 0.0300 min, x-y-t 0.320 vs 0.576).  8 tasks: on task 2 of suite seed 11 (three readings
    at step 0, two modes) the filter keeps the wrong mode for filter seeds 0-2 (temporal RMS
    0.049-0.061 min against least squares' 0.032, 0.029 for seed 3), enough to outweigh the
    other tasks' gains when only 4 are averaged."""
    new, old = [], []
    for i in range(8):
        task = generate_task(family, i, suite="stark-tier1", suite_seed=11)
        gold = np.array([st.answer for st in task.steps[:10]], float).reshape(10, -1)
        for out, solver in ((new, BASELINES[family]), (old, ALTERNATIVES[family]["ls"])):
            est = np.array([a.value for a in solver(task)[:10]], float).reshape(10, -1)
            out.append(np.mean(np.sum((est - gold) ** 2, axis=1)))
    assert np.sqrt(np.mean(new)) < np.sqrt(np.mean(old))


def test_proximity_default_beats_grid_filter():
    """The particle filter on the prior's own transitions against the grid Bayes filter with a
    random-walk motion (baseline:grid), first 10 steps over generated tasks (30 tasks of suite
    seed 7: 1.339 vs 1.597 trimmed RMSE)."""
    fam = "stark.tracking.proximity"
    new, old = [], []
    for i in range(6):
        task = generate_task(fam, i, suite="stark-tier1", suite_seed=11)
        gold = np.array([st.answer for st in task.steps[:10]], float)
        for out, solver in ((new, BASELINES[fam]), (old, ALTERNATIVES[fam]["grid"])):
            est = np.array([a.value for a in solver(task)[:10]], float)
            out.append(np.mean(np.sum((est - gold) ** 2, axis=1)))
    assert np.sqrt(np.mean(new)) < np.sqrt(np.mean(old))


@pytest.mark.parametrize("family,config", [
    ("stark.temporal_tracking.event", {"noise": "gaussian"}),          # unbounded noise
    ("stark.tracking.event_xyt", {"readings_per_step": [1, 2]}),      # under-determined steps
    ("stark.tracking.proximity", {"n_steps": 3, "duration": 1.0}),    # shorter than the library
])
def test_other_configs_answer_every_step(family, config):
    task = generate_task(family, 0, suite_seed=3, config=config)
    answers = BASELINES[family](task)
    assert [a.status for a in answers] == ["ok"] * len(task.steps)
    assert np.all(np.isfinite(np.array([a.value for a in answers], float)))


def _tolerance_brute(viol, logw, min_ess):
    """Independent second computation: the smallest distinct live ``viol`` whose subset keeps
    the target ESS, by trying every candidate in order."""
    w = np.exp(logw - logw.max())
    target = min(min_ess, w.sum() ** 2 / (w ** 2).sum())
    for e in np.concatenate([[0.0], np.unique(viol[w > 0])]):
        we = w * (viol <= e)
        if (we ** 2).sum() > 0 and we.sum() ** 2 / (we ** 2).sum() >= target:
            return float(e)
    return float(np.max(viol[w > 0]))


def test_tolerance_matches_brute_force_search():
    from stsim.baselines.prior_motion import adaptive_tolerance as _tolerance
    rng = np.random.default_rng(3)
    for trial in range(40):
        n = int(rng.integers(60, 400))
        viol = np.where(rng.random(n) < 0.7, rng.exponential(2.0, n).round(1), 0.0)
        uniform = trial % 2 == 0
        logw = np.zeros(n) if uniform else np.log(rng.random(n)) * 0.3
        got = _tolerance(viol, logw, 50.0, uniform)
        assert got == _tolerance_brute(viol, logw, 50.0)
        assert _tolerance(viol, logw, 50.0) == got    # the general path agrees with the fast one


def test_reflect_contiguous_and_strided_paths_agree():
    from stsim.baselines.prior_motion import reflect as _reflect
    rng = np.random.default_rng(4)
    p = rng.uniform(-3.0, 13.0, (2, 500))
    v = rng.normal(size=(2, 500))
    p1, v1 = p.copy(), v.copy()
    _reflect(p1, v1, 0.0, 10.0)                           # contiguous: flat-index path
    p2, v2 = p.T.copy().T, v.T.copy().T                   # (2, N) views of (N, 2): strided path
    _reflect(p2, v2, 0.0, 10.0)
    assert np.array_equal(p1, p2) and np.array_equal(v1, v2)
    out = (p < 0) | (p > 10)
    assert np.all((p1 >= 0) & (p1 <= 10))
    assert np.array_equal(v1[out], -v[out]) and np.array_equal(v1[~out], v[~out])
    inside = (p > -10) & (p < 20)                          # single reflections: mirror images
    lo_side = out & (p < 0) & inside
    assert np.allclose(p1[lo_side], -p[lo_side])


def test_cell_lookup_lands_near_the_nearest_library_state():
    from stsim.baselines.particle_tracking import CELLS_PER_AXIS, _state_cells, _state_tree
    lib = motion_library(20, 10.0, 3, "default")
    tree = _state_tree(lib, 5, 3.0)
    rng = np.random.default_rng(5)
    q = tree.data[rng.integers(0, len(tree.data), 300)] + rng.normal(scale=0.2, size=(300, 4))
    got = _state_cells(lib, 5, 3.0)(q)
    d_exact = tree.query(q, k=1)[0]
    d_cell = np.linalg.norm(tree.data[got] - q, axis=1)
    half_diag = 0.5 * np.linalg.norm((tree.data.max(0) - tree.data.min(0)) / CELLS_PER_AXIS)
    # the triangle inequality bounds the look-up's miss by a cell diagonal
    assert np.all(d_cell <= d_exact + 2 * half_diag + 1e-9)
    assert np.median(d_cell) < 2.5 * np.median(d_exact) + half_diag


def test_knn_query_modes_and_bad_value():
    from stsim.baselines.particle_tracking import track_task
    task = generate_task("stark.tracking.proximity", 0, suite="stark-tier1", suite_seed=7)
    gold = np.array([s.answer for s in task.steps], float)
    centre = np.sqrt(np.mean(np.sum((gold - 5.0) ** 2, axis=1)))   # 4.12: the domain-centre guess
    for mode in ("exact", "graph", "cell"):
        pos, t = track_task(task, knn_query=mode)
        assert t is None and pos.shape == gold.shape
        assert np.all((pos >= 0) & (pos <= 10))
        # a hard task (the limit's RMS is 1.51; filter seeds 0-2 give 1.9-3.3 in every mode)
        assert np.sqrt(np.mean(np.sum((pos - gold) ** 2, axis=1))) < 0.85 * centre
    with pytest.raises(ValueError, match="knn_query"):
        track_task(task, knn_query="kdtree")


# ------------------------------------------------- proximity: the extent of the path (issue 20)
def test_library_extent_hand_derived_and_full_at_the_last_step():
    """The running extent of a library trajectory, by hand on a 4-step path, and the premise of
    the terminal weight: every prior trajectory (min-max normalised over all its steps) has
    touched the four edges of the domain by its last step."""
    from stsim.baselines.particle_tracking import _lib_extent
    from stsim.baselines.prior_motion import MotionLibrary
    pos = np.array([[[3.0, 4.0], [1.0, 6.0], [2.0, 9.0], [5.0, 5.0]]])
    d = np.diff(pos, axis=1)
    ext = _lib_extent(MotionLibrary(pos, d, np.diff(d, axis=1), np.diff(d, 2, axis=1)))
    # rows min x, min y, max x, max y through each step
    assert ext[:, :, 0].tolist() == [[3, 4, 3, 4], [1, 4, 3, 6], [1, 4, 3, 9], [1, 4, 5, 9]]
    lib = motion_library(20, 10.0, 3, "default")
    last = _lib_extent(lib)[-1]
    assert np.allclose(last, np.array([[0.0], [0.0], [10.0], [10.0]]), atol=1e-5)


def test_extent_pick_follows_the_kernel():
    """The kernel draw among candidates: a candidate whose extent equals the particle's is
    drawn with probability 1 / (1 + (K-1) exp(-d^2 / 2h^2)) when the K-1 others are at distance
    d; here d = 1, h = 0.5: 1 / (1 + 3 e^-2) = 0.711 (100,000 draws, 4 standard errors)."""
    from stsim.baselines.particle_tracking import _extent_pick
    n = 100_000
    lib_ext = np.array([[0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [0, 0, 0, 0]], np.float32)
    cand = np.tile(np.arange(4)[:, None], (1, n))                     # (K=4, N)
    got = _extent_pick(cand, lib_ext, np.zeros((4, n)), 0.5, np.random.default_rng(6))
    p = 1 / (1 + 3 * np.exp(-2.0))
    assert abs(np.mean(got == 0) - p) < 4 * np.sqrt(p * (1 - p) / n)
    assert np.bincount(got, minlength=4)[1:].std() < 0.05 * np.mean(got != 0) * n / 3


def test_extent_settings_run_with_every_knn_query():
    task = generate_task("stark.tracking.proximity", 1, suite="stark-tier1", suite_seed=7)
    gold = np.array([s.answer for s in task.steps], float)
    from stsim.baselines.particle_tracking import PROXIMITY_SETTINGS, track_task
    assert PROXIMITY_SETTINGS["extent"] > 0 and PROXIMITY_SETTINGS["terminal"] > 0
    for mode in ("exact", "graph"):
        pos, _ = track_task(task, knn_query=mode, lib_size=4000)
        assert np.all((pos >= 0) & (pos <= 10))
        assert np.sqrt(np.mean(np.sum((pos - gold) ** 2, axis=1))) < 3.0


@pytest.mark.slow
def test_proximity_default_beats_previous_default():
    """The extent-aware default against the previous one (no extent or terminal weight, 4,000
    prior trajectories, 1200 particles) on 12 tasks of suite seed 11 (not the seed it was tuned
    on): trimmed RMSE over all 20 steps 1.316 vs 1.591, first 10 steps 1.487 vs 1.648."""
    from stsim.baselines.particle_tracking import track_task
    from stsim.scoring.metrics import trimmed_rmse
    previous = dict(lib_size=4000, n_particles=1200, extent=0.0, terminal=0.0)
    errs = {"new": [], "old": []}
    for i in range(12):
        task = generate_task("stark.tracking.proximity", i, suite="stark-tier1", suite_seed=11)
        gold = np.array([s.answer for s in task.steps], float)
        for name, kw in (("new", {}), ("old", previous)):
            errs[name].append(np.hypot(*(track_task(task, **kw)[0] - gold).T))
    new, old = np.array(errs["new"]), np.array(errs["old"])
    assert trimmed_rmse(new.ravel()) < 0.9 * trimmed_rmse(old.ravel())
    assert trimmed_rmse(new[:, :10].ravel()) < trimmed_rmse(old[:, :10].ravel())


def test_aligned_start_moves_by_the_library_first_step():
    """``aligned_start``: with no jerk and no jitter, every particle's first move is the first
    step ``p1 - p0`` of a prior trajectory of the library (and its velocity after step 1 is that
    step); without it the move is one acceleration ahead, ``v0 + a0``."""
    from stsim.baselines.particle_tracking import particle_track
    from stsim.baselines.prior_motion import on_step_grid as _on_step_grid
    task = generate_task("stark.tracking.event", 2, suite="stark-tier1", suite_seed=7)
    z = readings_to_array(task.inputs["readings"], pairs=False, stepped=True)
    _, full, lib = _on_step_grid(task, z)
    emit = np.asarray(task.inputs["times"], float)
    first = {tuple(np.round(v, 12)) for v in lib.vel[:, 0]}
    for aligned in (True, False):
        trace = []
        model = _Model("toa", np.asarray(task.inputs["sensors"], float), full,
                       speed=float(task.inputs["wave_speed"]), half=0.01, emit=emit)
        particle_track(model, lib, 2, n_particles=300, jerk_scale=0.0, jitter=0.0, seed=1,
                       aligned_start=aligned, _trace=trace)
        (p0, v0, a0, w0, _), (p1, v1, _, _, _) = trace
        inside = np.all((p1 > 0.01) & (p1 < 9.99), axis=1)          # not reflected
        assert inside.sum() > 100
        if not (1.0 / np.sum(w0 ** 2) < 150):                        # not resampled after step 0
            step = (p1 - p0)[inside]
            assert np.allclose(step, v1[inside], atol=1e-12)
        hits = np.mean([tuple(np.round(v, 12)) in first for v in v1[inside]])
        assert hits == (1.0 if aligned else 0.0)
