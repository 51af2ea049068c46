"""Generated STARK tier-1 tasks drawn like the released ones (issue 15): dropout structure,
proximity scenes, trajectory shape."""
import numpy as np
import pytest
import shapely
from scipy.stats import ks_2samp

from stsim.registry import generate_task, get_family
from stsim.sim.motion import DEFAULT_RANGES, STARK_RELEASE_RANGES, random_trajectory, scaled_ranges
from stsim.sim.sensors import ProximitySensor, apply_count_dropout, count_dropout_rate, detection_region


def _counts(task) -> list[int]:
    return [sum(r is not None for r in s.inputs["readings"]) for s in task.steps]


# ------------------------------------------------------------------------------ (a) dropout
@pytest.mark.parametrize("family,allowed,rate", [
    ("stark.tracking.range", {1, 2, 3}, 0.5), ("stark.tracking.bearing", {1, 2, 3}, 0.5),
    ("stark.tracking.range_bearing", {1, 2, 3}, 0.5), ("stark.tracking.event", {3, 4}, 0.125),
    ("stark.temporal_tracking.event", {3, 4}, 0.125), ("stark.tracking.event_xyt", {3, 4}, 0.125)])
def test_readings_per_step_as_released(family, allowed, rate):
    counts = np.concatenate([_counts(generate_task(family, i, suite_seed=3)) for i in range(16)])
    assert set(counts.tolist()) == allowed        # released: never 0 (or 4) of 4 for range/bearing
    shares = np.array([np.mean(counts == c) for c in sorted(allowed)])
    # about equal shares (released 34/33/32 % and 49/51 %); 640-800 steps: sd of a share < 0.02
    assert np.all(np.abs(shares - 1 / len(allowed)) < 0.06), shares
    assert 1 - counts.mean() / 4 == pytest.approx(rate, abs=0.03)   # the mean rate is kept
    assert generate_task(family, 0, suite_seed=3).inputs["dropout_rate"] == rate


def test_count_dropout_by_hand():
    rng = np.random.default_rng(0)
    out = apply_count_dropout(np.ones((500, 4, 2)), [1, 3], rng)
    kept = (~np.isnan(out[..., 0])).sum(axis=1)
    assert set(kept.tolist()) == {1, 3}
    assert np.array_equal(np.isnan(out[..., 0]), np.isnan(out[..., 1]))   # a pair drops whole
    # every sensor is dropped equally often (a uniform choice of which readings survive)
    per_sensor = (~np.isnan(out[..., 0])).mean(axis=0)
    assert np.allclose(per_sensor, 0.5, atol=0.06)
    assert count_dropout_rate([1, 2, 3], 4) == 0.5 and count_dropout_rate([3, 4], 4) == 0.125
    with pytest.raises(ValueError, match="0..4"):
        apply_count_dropout(np.ones((3, 4)), [5], rng)


def test_independent_dropout_still_available():
    t = generate_task("stark.tracking.range", 0, suite_seed=1,
                      config={"readings_per_step": None, "dropout_rate": 0.0})
    assert set(_counts(t)) == {4} and t.inputs["dropout_rate"] == 0.0


def test_versions_bumped():
    for fam in ("stark.tracking.range", "stark.tracking.event", "stark.temporal_tracking.event",
                "stark.tracking.proximity", "stark.localization.proximity"):
        assert get_family(fam).version == "2"
    assert get_family("stark.localization.range").version == "1"   # unchanged output


# --------------------------------------------------------------------- (b) proximity scenes
def test_detection_region_by_hand():
    # three sensors on top of each other and one far away: the >= 3 region is one disk
    s = np.array([[5.0, 5.0], [5.0, 5.0], [5.0, 5.0], [50.0, 50.0]])
    assert detection_region(s, 2.0, 3).area == pytest.approx(np.pi * 4, rel=1e-3)
    assert detection_region(s, 2.0, 4).is_empty
    # clipped to the domain: a disk centred on a corner keeps a quarter
    c = np.array([[0.0, 0.0]] * 3 + [[9.0, 9.0]])
    assert detection_region(c, 2.0, 3).area == pytest.approx(np.pi, rel=1e-3)


def test_proximity_sensors_are_uniform_not_clustered():
    """Sensors drawn first, uniformly: their convex-hull area follows that of 4 uniform points
    (reference drawn here independently), not the clustered layouts that redrawing sensors and
    target together favours (median hull released 14.2, old generator 9.3)."""
    gen = [generate_task("stark.localization.proximity", i, suite_seed=2) for i in range(150)]
    hull = [shapely.MultiPoint([tuple(p) for p in t.inputs["sensors"]]).convex_hull.area for t in gen]
    rng = np.random.default_rng(9)
    ref = [shapely.MultiPoint([tuple(p) for p in rng.uniform(0, 10, (4, 2))]).convex_hull.area
           for _ in range(2000)]
    assert ks_2samp(hull, ref).pvalue > 0.01
    for t in gen:
        hits = ProximitySensor(4.0).true(np.array(t.inputs["sensors"]), np.array([t.answer])).sum()
        assert hits >= 3 and t.inputs["readings"].count(1.0) == hits


def test_proximity_target_uniform_inside_region():
    """With the layout fixed, the target is uniform in the >= 3-detection region: its mean is
    the region's centroid and it lies in the 4-detection part as often as that part's area
    share (shapely, an independent computation)."""
    layout = [[3.0, 3.0], [7.0, 3.0], [5.0, 7.0], [9.0, 9.0]]
    pts = np.array([generate_task("stark.localization.proximity", i, suite_seed=4,
                                  config={"layout": layout}).answer for i in range(400)])
    region = detection_region(np.array(layout), 4.0, 3)
    c = region.centroid
    spread = np.sqrt(region.area / 12)  # sd of a uniform coordinate, roughly
    assert pts.mean(axis=0) == pytest.approx([c.x, c.y], abs=4 * spread / np.sqrt(400))
    share4 = detection_region(np.array(layout), 4.0, 4).area / region.area
    in4 = (ProximitySensor(4.0).true(np.array(layout), pts).sum(axis=1) == 4).mean()
    assert in4 == pytest.approx(share4, abs=4 * np.sqrt(share4 * (1 - share4) / 400))


# ------------------------------------------------------------------------ (c) trajectories
def test_scaled_ranges_and_defaults():
    r = scaled_ranges(linear_speed=0.5, omega=2.0)
    assert r["linear"]["vx"] == (-0.5, 0.5) and r["circular"]["omega"] == (0.4, 2.4)
    assert DEFAULT_RANGES["linear"]["vx"] == (-1, 1)          # the base table is not modified
    assert STARK_RELEASE_RANGES["figure_eight"]["theta"] == (0, 0)


def test_tier2_trajectories_unchanged_by_the_range_table():
    """random_trajectory without ``ranges`` draws exactly as before (tier 2 keeps its bytes)."""
    a = random_trajectory(np.random.default_rng(3))
    b = random_trajectory(np.random.default_rng(3), ranges=DEFAULT_RANGES)
    assert np.array_equal(a.positions, b.positions)


def _in_table(comp, table) -> bool:
    lo_hi = table[comp["kind"]]
    return all(lo - 1e-12 <= (abs(comp[k]) if k == "omega" and comp["kind"] in ("circular", "spiral")
                              else comp[k]) <= hi + 1e-12 for k, (lo, hi) in lo_hi.items())


def test_tracking_families_draw_from_their_motion_table():
    from stsim.sim.motion import MOTION_RANGES
    for fam in ("stark.tracking.range", "stark.tracking.event_xyt", "stark.tracking.proximity"):
        table = MOTION_RANGES[get_family(fam).defaults["motion_ranges"]]
        for i in range(25):
            comps = generate_task(fam, i, suite_seed=8).meta["trajectory_components"]
            assert all(_in_table(c, table) for c in comps), (fam, comps)
    assert get_family("stark.tracking.range").defaults["motion_ranges"] == "stark_release"
    with pytest.raises(ValueError, match="motion_ranges"):
        generate_task("stark.tracking.range", 0, config={"motion_ranges": "fast"})


def test_trajectory_medians_within_release_bootstrap_interval(stark_data):
    """Start-edge distance, scored-steps speed, turn per step, displacement and path length of
    the 50-step tracking trajectories: the generated median (2000 trajectories from the table the
    families use) lies inside the 95 % bootstrap interval of the released median (the 200
    released 50-step trajectories); the old (default) table misses all five."""
    from stsim.benchmarks.fidelity import bootstrap_median, trajectory_features
    from stsim.benchmarks.stark_release.tier1 import load_published
    fams = ["stark.tracking.range", "stark.tracking.bearing", "stark.tracking.range_bearing",
            "stark.tracking.event_xyt"]
    rel = [trajectory_features(np.array([s.answer[:2] for s in t.steps]))
           for t in load_published(stark_data, options={"families": fams})]
    assert len(rel) == 200
    rng = np.random.default_rng(21)
    outside = {}
    for name, table in (("fitted", STARK_RELEASE_RANGES), ("default", DEFAULT_RANGES)):
        gen = [trajectory_features(random_trajectory(rng, ranges=table).positions) for _ in range(2000)]
        outside[name] = []
        for k in rel[0]:
            lo, hi = bootstrap_median(np.array([f[k] for f in rel]), np.random.default_rng(0))
            med = float(np.median([g[k] for g in gen]))
            if not lo <= med <= hi:
                outside[name].append((k, round(med, 3), (round(lo, 3), round(hi, 3))))
    assert outside["fitted"] == []
    assert len(outside["default"]) == 5
