"""`stsim fidelity`: Benjamini-Hochberg, KS statistic, per-task features, CLI."""
import json
import math

import numpy as np
import pytest
from scipy.stats import ks_2samp

from stsim.benchmarks.fidelity import (bh_adjust, compare_features, feature_group, ks_statistic,
                                       task_features, trajectory_features)
from stsim.cli import main
from stsim.records import Step, Task


# ------------------------------------------------------------------------------ statistics
def test_bh_hand_computed():
    # sorted 0.005, 0.01, 0.03, 0.04 (m = 4): p*m/rank = 0.02, 0.02, 0.04, 0.04
    assert bh_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    # monotone step: 0.02*3/1 = 0.06 is lowered to the next 0.021*3/2 = 0.0315
    assert bh_adjust([0.02, 0.021, 0.9]) == pytest.approx([0.0315, 0.0315, 0.9])
    assert bh_adjust([0.5, 0.9]) == pytest.approx([0.9, 0.9])
    assert bh_adjust([0.8]) == pytest.approx([0.8])
    with pytest.raises(ValueError, match="p-values"):
        bh_adjust([0.1, 1.5])


def test_bh_against_definition_by_brute_force():
    """q_i = min over every p_j >= p_i of p_j * m / rank_j (capped at 1), an O(m^2) reading of
    the definition with ties ranked by their largest rank."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        p = np.round(rng.uniform(0, 0.2, rng.integers(1, 15)), 3)   # rounding makes ties
        m = p.size
        rank = np.array([np.sum(p <= v) for v in p])
        want = [min(1.0, min(p[j] * m / rank[j] for j in range(m) if p[j] >= p[i])) for i in range(m)]
        assert bh_adjust(p) == pytest.approx(want)


def test_ks_statistic_is_scipys():
    rng = np.random.default_rng(2)
    for _ in range(10):
        a = np.round(rng.normal(size=rng.integers(5, 60)), 1)
        b = np.round(rng.normal(0.3, 1.2, size=rng.integers(5, 200)), 1)
        assert ks_statistic(a, b) == pytest.approx(ks_2samp(a, b).statistic)


def test_compare_flags_a_shift_and_not_a_copy():
    rng = np.random.default_rng(3)
    rel = [{"x": v, "y": w} for v, w in zip(rng.normal(0, 1, 50), rng.normal(0, 1, 50))]
    gen = [{"x": v, "y": w} for v, w in zip(rng.normal(0, 1, 200), rng.normal(1.5, 1, 200))]
    rows = {r.feature: r for r in compare_features("fam", rel, gen, np.random.default_rng(0))}
    assert rows["y"].flagged and not rows["x"].flagged
    assert rows["y"].d_low <= rows["y"].d <= rows["y"].d_high + 0.05
    assert rows["x"].p == pytest.approx(ks_2samp([f["x"] for f in rel], [g["x"] for g in gen]).pvalue)


# ------------------------------------------------------------------------------- features
def test_trajectory_features_by_hand():
    # 0,0 -> 1,0 -> 2,0 -> 2,1 -> 2,2: a right-angle turn at the third point
    p = np.array([[0, 5], [1, 5], [2, 5], [2, 6], [2, 7]], dtype=float)
    f = trajectory_features(p)
    assert f["start_edge_dist"] == 0.0
    assert f["path_length"] == pytest.approx(4.0) and f["speed_scored"] == pytest.approx(4.0)
    assert f["displacement"] == pytest.approx(math.hypot(2, 2))
    assert f["turn_per_step"] == pytest.approx((0 + math.pi / 2 + 0) / 3)


def test_task_features_on_a_hand_built_range_tracking_task():
    sensors = [[0.0, 0.0], [4.0, 0.0], [4.0, 3.0], [0.0, 3.0]]
    golds = [[2.0, 1.0], [2.5, 1.0], [3.0, 1.0]]
    steps = []
    for k, g in enumerate(golds):
        d = [math.dist(g, s) for s in sensors]
        row = [d[0] * 1.005, None, d[2] * 0.995, None] if k != 1 else [None, d[1] * 1.005, None, None]
        steps.append(Step(k, "", {"time": 0.5 * k, "readings": row}, g))
    t = Task("x/1", "stark.tracking.range", "", {"modality": "range", "sensors": sensors,
             "readings": [s.inputs["readings"] for s in steps], "times": [0.0, 0.5, 1.0]},
             None, "point", steps, {})
    f = task_features(t)
    assert f["hull_area"] == pytest.approx(12.0)
    assert f["sensor_min_spacing"] == pytest.approx(3.0)
    assert f["sensor_mean_spacing"] == pytest.approx((4 + 5 + 3 + 3 + 5 + 4) / 6)
    assert (f["readings_min"], f["readings_max"], f["readings_mean"]) == (1.0, 2.0, 5 / 3)
    assert f["noise_range"] == pytest.approx(0.5)        # every error is half the 1 % bound
    assert f["time_step"] == pytest.approx(0.5) and f["n_steps"] == 3.0
    assert f["displacement"] == pytest.approx(1.0) and f["turn_per_step"] == pytest.approx(0.0)


def test_task_features_proximity_and_toa():
    # one detecting sensor in the middle, three far non-detecting ones: region = disk of r = 1
    prox = Task("p/1", "stark.localization.proximity", "", {
        "modality": "proximity", "sensors": [[5, 5], [40, 40], [40, -30], [-30, 40]],
        "readings": [1.0, 0.0, 0.0, 0.0], "radius": 1.0}, [5.2, 5.0], "point", [], {})
    f = task_features(prox)
    assert f["feasible_area"] == pytest.approx(math.pi, rel=2e-3)
    assert f["detections"] == 1.0 and f["gold_edge_dist"] == pytest.approx(4.8)
    # ToA with the emission time in the gold: readings t0 + d / v +- 0.005 -> 0.5 half-widths
    sensors = [[0, 0], [6, 0], [6, 8], [0, 8]]
    pos, t0, v = [3.0, 4.0], 2.0, 5.0
    reads = [t0 + 5.0 / v + e for e in (0.005, -0.005, 0.005, -0.005)]
    xyt = Task("e/1", "stark.localization.event_xyt", "", {"modality": "toa", "sensors": sensors,
               "readings": reads, "wave_speed": v}, [*pos, t0], "vector", [], {})
    g = task_features(xyt)
    assert g["noise_toa"] == pytest.approx(0.5) and g["emit_time"] == 2.0
    assert g["toa_spread"] == pytest.approx(0.01)
    with pytest.raises(ValueError, match="not a STARK tier-1 task"):
        task_features(Task("q/1", "qstr.x", "", {}, None, "label", [], {}))


def test_feature_groups():
    assert feature_group("stark.tracking.range", "readings_min") == "dropout"
    assert feature_group("stark.tracking.proximity", "readings_min") == ""
    assert feature_group("stark.localization.proximity", "hull_area") == "proximity scene"
    assert feature_group("stark.localization.range", "hull_area") == ""
    assert feature_group("stark.tracking.event", "displacement") == "trajectory"


# ------------------------------------------------------------------------------------ CLI
def test_cli_fidelity_smoke(stark_data, capsys):
    rc = main(["fidelity", "stark-tier1", "--data", str(stark_data), "--n", "12", "--seed", "1",
               "--family", "stark.tracking.range", "--json"])
    rep = json.loads(capsys.readouterr().out)
    rows = {r["feature"]: r for r in rep["families"]["stark.tracking.range"]}
    assert rc == (1 if rep["flagged"] else 0)
    assert rows["readings_min"]["n_released"] == 50 and rows["readings_min"]["n_generated"] == 12
    assert rows["readings_min"]["median_released"] == 1.0     # every released step keeps >= 1
    assert rows["n_steps"]["d"] == 0.0 and rows["n_steps"]["p"] == 1.0
    assert all(0 <= r["p"] <= r["p_bh"] <= 1 for r in rows.values())
    assert {"start_edge_dist", "displacement", "hull_area", "noise_range"} <= set(rows)
    main(["fidelity", "stark-tier1", "--data", str(stark_data), "--n", "5",
          "--family", "stark.localization.proximity"])
    text = capsys.readouterr().out
    assert "stark.localization.proximity" in text and "feasible_area" in text and "total flagged" in text


def test_cli_fidelity_bad_input(capsys, tmp_path):
    assert main(["fidelity", "stark-published", "--data", str(tmp_path)]) == 2
    assert "generated" in capsys.readouterr().err
    assert main(["fidelity", "qstrbench", "--data", str(tmp_path)]) == 2
    assert "no family with released counterparts" in capsys.readouterr().err
    assert main(["fidelity", "stark-tier1", "--data", str(tmp_path / "nope")]) == 2
    assert main(["fidelity", "stark-tier1", "--data", str(tmp_path), "--alpha", "2"]) == 2
    with pytest.raises(SystemExit) as e:
        main(["fidelity", "stark-tier1", "--data", str(tmp_path), "--n", "1"])
    assert e.value.code == 2


def test_ks_critical_value():
    from stsim.benchmarks.fidelity import ks_critical_d
    assert ks_critical_d(50, 200) == pytest.approx(1.3581 * math.sqrt(250 / 10000), rel=1e-4)
    # close to scipy's exact two-sided p = 0.05 point for large equal samples
    a, b = np.zeros(400), np.zeros(400)
    b[: int(round(ks_critical_d(400, 400) * 400))] = 1.0
    assert ks_2samp(a, b).pvalue == pytest.approx(0.05, abs=0.015)


def test_fidelity_help_lists_the_suites_it_takes(capsys):
    """The help said "(stark-tier1, quickstart)" while stark-mini and stark were taken too: it
    now ends with every generated suite that has released counterparts, and each is one
    :func:`released_loader` takes; a data suite is not among them."""
    from stsim.benchmarks.fidelity import fidelity_suites, released_loader
    names = fidelity_suites()
    assert {"stark-tier1", "quickstart", "stark-mini"} <= set(names) and "stark-published" not in names
    for name in names:
        released_loader(name)
    with pytest.raises(SystemExit) as exc:
        main(["fidelity", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out.replace("\n  ", " ")
    assert "suites with released counterparts: " + ", ".join(names) in out
