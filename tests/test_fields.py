"""Synthetic fields, field families, baselines and the kriging reference."""
from __future__ import annotations

import math

import numpy as np
import pytest

from stsim.baselines import ALTERNATIVES, BASELINES
from stsim.baselines.fields import extrapolate, idw, interpolate_in_time
from stsim.scoring.score import score_answers, summarise
from stsim.registry import generate_task
from stsim.sim.fields import FieldModel, correlation, geodesic_distances, krige, sample_readings

FIELD_FAMILIES = ["stark.field.spatial_impute", "stark.field.temporal_impute",
                  "stark.field.spatiotemporal_impute", "stark.field.spatiotemporal_forecast"]


def _haversine(a, b, r=6_371_008.8):
    (lo1, la1), (lo2, la2) = np.radians(a), np.radians(b)
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * r * math.asin(math.sqrt(h))


def test_geodesic_distance_agrees_with_haversine():
    a, b = [-118.25, 34.05], [-118.10, 34.20]
    d = geodesic_distances([a], [b])[0, 0]
    assert d == pytest.approx(_haversine(a, b), rel=3e-3)  # ellipsoid vs sphere: < 0.3 %


def test_correlations_at_one_length_scale():
    assert correlation("exponential", 1.0) == pytest.approx(math.exp(-1))
    assert correlation("squared_exponential", 1.0) == pytest.approx(math.exp(-0.5))
    assert correlation("matern32", 1.0) == pytest.approx((1 + math.sqrt(3)) * math.exp(-math.sqrt(3)))
    assert correlation("matern52", 0.0) == 1.0
    with pytest.raises(ValueError, match="unknown covariance kind"):
        correlation("cubic", 1.0)


def _flat(**kw):
    base = dict(kind="squared_exponential", variance=4.0, length_scale_m=1000.0, time_scale_h=3.0,
                noise_sd=0.1, mean=20.0, diurnal_amplitude=0.0, trend_per_hour=0.0)
    base.update(kw)
    return FieldModel(**base)


def test_kriging_one_observation_closed_form():
    m = _flat()
    a, b = [-118.25, 34.05], [-118.25, 34.06]
    d = geodesic_distances([a], [b])[0, 0]
    pred, var = krige(m, [a], [0.0], [23.0], [b], [0.0])
    k = 4.0 * math.exp(-0.5 * (d / 1000.0) ** 2)
    assert pred[0] == pytest.approx(20.0 + k / (4.0 + 0.01) * 3.0, rel=1e-6)
    assert var[0] == pytest.approx(4.0 - k * k / 4.01 + 0.01, rel=1e-6)


def test_kriging_in_time_two_observations_closed_form():
    # one site, readings at t = -1 and t = +1, target t = 0: symmetric, so the weights are equal
    m = _flat(noise_sd=0.0)
    s = [[-118.25, 34.05]] * 2
    pred, _ = krige(m, s, [-1.0, 1.0], [22.0, 26.0], [s[0]], [0.0])
    r1, r2 = math.exp(-0.5 / 9), math.exp(-0.5 * 4 / 9)
    w = r1 / (1 + r2)  # each weight: k* / (K row sum) for the symmetric 2x2 system
    assert pred[0] == pytest.approx(20.0 + w * (2.0 + 6.0), rel=1e-6)


def test_kriging_interpolates_noise_free_observation():
    m = _flat(noise_sd=0.0)
    pts = [[-118.25, 34.05], [-118.20, 34.07]]
    pred, var = krige(m, pts, [0.0, 0.0], [21.0, 19.5], pts[:1], [0.0])
    assert pred[0] == pytest.approx(21.0, abs=1e-5)
    assert var[0] == pytest.approx(0.0, abs=1e-5)


def test_mean_function_diurnal_and_trend():
    m = FieldModel(mean=10.0, diurnal_amplitude=2.0, diurnal_peak_hour=15.0, trend_per_hour=0.5, start_hour=3.0)
    assert m.mean_at(12.0) == pytest.approx(10.0 + 2.0 + 6.0)   # 15:00 -> peak
    assert m.mean_at(0.0) == pytest.approx(10.0 + 2.0 * math.cos(2 * math.pi * (3 - 15) / 24))


def test_sampled_field_has_stated_variance_and_noise():
    m = _flat(variance=4.0, noise_sd=0.5, length_scale_m=1.0)  # sites far apart: independent
    rng = np.random.default_rng(1)
    sites = np.column_stack([np.linspace(-118.4, -118.1, 200), np.full(200, 34.05)])
    truth, reads = sample_readings(m, rng, sites, [0.0])
    assert np.var(truth) == pytest.approx(4.0, rel=0.25)
    assert np.std(reads - truth) == pytest.approx(0.5, rel=0.2)


def test_idw_and_time_baselines_by_hand():
    sites = [[-118.25, 34.05], [-118.25, 34.07]]
    tgt = [-118.25, 34.055]
    d = geodesic_distances(sites, [tgt])[:, 0]
    assert idw(sites, [10.0, 20.0], tgt) == pytest.approx((10 / d[0] + 20 / d[1]) / (1 / d[0] + 1 / d[1]))
    assert idw(sites, [10.0, 20.0], sites[1]) == 20.0
    assert interpolate_in_time([-2, -1, 1, 2], [0.0, 1.0, 3.0, 9.0], 0.0) == 2.0
    assert extrapolate([-3, -2, -1], [5.0, 1.0, 2.0], 0.0) == 3.0
    with pytest.raises(ValueError):
        idw(sites, [math.nan, math.nan], tgt)


@pytest.mark.parametrize("family", FIELD_FAMILIES)
def test_prompt_carries_the_inputs_and_task_is_deterministic(family):
    t = generate_task(family, 3, suite_seed=7)
    assert t.to_dict() == generate_task(family, 3, suite_seed=7).to_dict()
    vals = np.ravel(t.inputs["values"])
    for v in vals[:5]:
        assert f"{v:.2f}" in t.prompt
    for s in t.inputs["sites"]:
        assert f"lat {s[1]:.5f}, lon {s[0]:.5f}" in t.prompt
    fm = t.inputs["field_model"]
    assert f"length scale {fm['length_scale_m'] / 1000:g} km" in t.prompt
    assert t.meta["error_scale"] == pytest.approx(np.linalg.norm(np.atleast_1d(t.answer)))


def _rmspe(tasks, solve):
    answers = [a for t in tasks for a in solve(t)]
    return summarise(score_answers(tasks, answers))


def test_kriging_beats_idw_on_spatial_imputation():
    tasks = [generate_task("stark.field.spatial_impute", i) for i in range(150)]
    base = _rmspe(tasks, BASELINES["stark.field.spatial_impute"])["stark.field.spatial_impute"]
    krig = _rmspe(tasks, ALTERNATIVES["stark.field.spatial_impute"]["kriging"])["stark.field.spatial_impute"]
    assert base["metric"] == krig["metric"] == "rmspe"
    assert krig["failures"] == base["failures"] == 0
    assert krig["rmse"] < base["rmse"]


@pytest.mark.parametrize("family", FIELD_FAMILIES[1:])
def test_kriging_is_no_worse_than_the_time_baselines(family):
    tasks = [generate_task(family, i) for i in range(60)]
    base = _rmspe(tasks, BASELINES[family])[family]["rmse"]
    krig = _rmspe(tasks, ALTERNATIVES[family]["kriging"])[family]["rmse"]
    assert krig <= base * 1.02


def test_error_scale_turns_errors_into_percentages():
    from stsim.records import Answer, Task
    t = Task("x/0", "stark.field.spatiotemporal_forecast", "p", {}, [3.0, 4.0], "vector", [],
             {"error_scale": 5.0})
    s = score_answers([t], [Answer("x/0", None, "ok", value=[3.0, 5.0])])[0]
    assert s.error == pytest.approx(0.2) and s.extra == {"relative": True}
    plain = Task("y/0", "f", "p", {}, [3.0, 4.0], "vector", [], {})
    assert score_answers([plain], [Answer("y/0", None, "ok", value=[3.0, 5.0])])[0].error == pytest.approx(1.0)
