"""Sensors, noise, layouts, dropout and trajectories: hand-derived values and properties."""
import numpy as np
import pytest

from stsim.sim.motion import BASIS_MOTIONS, minmax_normalise, random_trajectory, sample_motion
from stsim.sim.noise import Gaussian, UniformAbsolute, UniformRelative
from stsim.sim.sensors import (BearingSensor, ProximitySensor, RangeBearingSensor, RangeSensor,
                               ToASensor, apply_dropout, bearings_deg, circle_layout, distances)


def test_distance_and_bearing_by_hand():
    s = np.array([[0.0, 0.0], [3.0, 4.0]])
    t = np.array([[3.0, 0.0]])
    assert distances(s, t)[0].tolist() == pytest.approx([3.0, 4.0])
    # CCW from +x at the sensor: from (0,0) to (3,0) is 0 deg; from (3,4) to (3,0) is 270 deg
    assert bearings_deg(s, t)[0].tolist() == pytest.approx([0.0, 270.0])
    assert bearings_deg(np.array([[5.0, 5.0]]), np.array([[4.0, 6.0]]))[0, 0] == pytest.approx(135.0)


def test_uniform_relative_range_noise_bound_table7():
    rng = np.random.default_rng(0)
    true = np.full(20000, 5.0)
    z = RangeSensor(UniformRelative(0.01)).noise.apply(true, rng)
    assert np.all(np.abs(z - 5.0) <= 0.05)
    assert np.abs(z - 5.0).max() > 0.049          # fills the +-1 % band
    assert np.std(z - 5.0) == pytest.approx(0.05 / np.sqrt(3), rel=0.03)


def test_bearing_noise_is_pm_3_6_degrees():
    rng = np.random.default_rng(1)
    s, t = np.array([[0.0, 0.0]]), np.array([[1.0, 1.0]])
    z = np.array([BearingSensor().measure(s, t, rng)[0, 0] for _ in range(3000)])
    dev = z - 45.0
    assert np.all(np.abs(dev) <= 3.6 + 1e-9) and np.abs(dev).max() > 3.5


def test_bearing_wraps_into_0_360():
    rng = np.random.default_rng(2)
    z = BearingSensor().measure(np.array([[0.0, 0.0]]), np.array([[1.0, -0.001]]), rng)
    assert 0.0 <= z[0, 0] < 360.0


def test_range_bearing_is_the_composition():
    rng1, rng2 = np.random.default_rng(3), np.random.default_rng(3)
    s, t = np.array([[1.0, 1.0], [9.0, 2.0]]), np.array([[4.0, 5.0], [2.0, 2.0]])
    rb = RangeBearingSensor().measure(s, t, rng1)
    r = RangeSensor().measure(s, t, rng2)
    b = BearingSensor().measure(s, t, rng2)
    assert rb.shape == (2, 2, 2)
    np.testing.assert_allclose(rb[..., 0], r)
    np.testing.assert_allclose(rb[..., 1], b)


def test_proximity_closed_disk_and_toa_model():
    s = np.array([[0.0, 0.0]])
    assert ProximitySensor(4.0).true(s, np.array([[4.0, 0.0], [4.0, 0.1]]))[:, 0].tolist() == [1.0, 0.0]
    toa = ToASensor(speed=5.0, noise=UniformAbsolute(0.0))
    # 10 km at 5 km/s emitted at t=3: arrives at 5 s (STARK Table 14's model)
    assert toa.measure(s, np.array([[6.0, 8.0]]), np.random.default_rng(0), [3.0])[0, 0] == pytest.approx(5.0)


def test_gaussian_noise_option():
    z = Gaussian(0.1).apply(np.zeros(50000), np.random.default_rng(4))
    assert np.std(z) == pytest.approx(0.1, rel=0.02)


def test_dropout_rate_and_pairs():
    rng = np.random.default_rng(5)
    r = apply_dropout(np.ones((400, 4, 2)), 0.5, rng)
    missing = np.isnan(r[..., 0])
    assert missing.mean() == pytest.approx(0.5, abs=0.03)
    assert np.array_equal(missing, np.isnan(r[..., 1]))   # a dropped pair loses both parts
    with pytest.raises(ValueError):
        apply_dropout(np.ones((2, 2)), 1.0, rng)


def test_circle_layout_is_regular():
    c = circle_layout(4, (5, 5), 4)
    assert np.allclose(np.hypot(*(c - 5).T), 4.0)
    assert c[0].tolist() == pytest.approx([9.0, 5.0])


def test_trajectory_properties():
    for seed in range(20):
        tr = random_trajectory(np.random.default_rng(seed), n_steps=50, duration=10.0, t0=2.0)
        assert tr.positions.shape == (50, 2) and tr.times.shape == (50,)
        assert tr.times[0] == 2.0 and tr.times[-1] == pytest.approx(12.0)
        assert np.allclose(tr.positions.min(axis=0), 0.0) and np.allclose(tr.positions.max(axis=0), 10.0)
        assert 1 <= len(tr.components) <= 3
        assert {c["kind"] for c in tr.components} <= set(BASIS_MOTIONS)


def test_basis_motions_by_hand():
    rng = np.random.default_rng(0)
    for kind in BASIS_MOTIONS:
        assert sample_motion(kind, rng).positions(np.linspace(0, 10, 5)).shape == (5, 2)
    circ = sample_motion("circular", rng)
    p = circ.positions(np.linspace(0, 20, 200))
    assert np.allclose(np.hypot(p[:, 0] - circ.cx, p[:, 1] - circ.cy), circ.radius)
    with pytest.raises(ValueError):
        sample_motion("teleport", rng)


def test_minmax_normalise():
    p = minmax_normalise(np.array([[1.0, 3.0], [3.0, 3.0], [2.0, 3.0]]))
    assert p[:, 0].tolist() == [0.0, 10.0, 5.0] and p[:, 1].tolist() == [5.0, 5.0, 5.0]
