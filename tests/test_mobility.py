"""Simulated person: context effects, exact visit probabilities, POI/intent families, baselines."""
from __future__ import annotations

import numpy as np
import pytest

from stsim.baselines import ALTERNATIVES, BASELINES
from stsim.baselines.mobility import markov_matrix
from stsim.registry import generate_task
from stsim.sim.mobility import POIS, DayContext, transition_matrix, visit_probability

HOME, OFFICE, MALL, GYM, PARK, CINEMA = (POIS.index(k) for k in
                                         ("home", "office", "shopping mall", "gym", "park", "cinema"))


def _day(**kw):
    base = dict(date="2024-03-06", weekday="Wednesday", weather="sunny", air="good", traffic_busy=[],
                fatigue=[], event=None)
    base.update(kw)
    return DayContext(**base)


def test_rows_are_distributions():
    m = transition_matrix(14, _day())
    assert m.shape == (len(POIS), len(POIS))
    assert np.allclose(m.sum(axis=1), 1.0) and np.all(m > 0)


@pytest.mark.parametrize("change, hour, frm, poi, direction", [
    ({"weather": "rainy"}, 11, HOME, PARK, -1),          # rain keeps people out of parks
    ({"air": "unhealthy"}, 11, HOME, PARK, -1),
    ({"event": "a big sales event"}, 11, HOME, MALL, +1),
    ({"event": "a popular movie premiere"}, 19, HOME, CINEMA, +1),
    ({"fatigue": [18]}, 18, OFFICE, HOME, +1),            # tired -> home
    ({"fatigue": [18]}, 18, OFFICE, GYM, -1),
    ({"traffic_busy": [17]}, 17, OFFICE, OFFICE, +1),     # busy traffic -> stay put
])
def test_context_factors_change_transitions(change, hour, frm, poi, direction):
    before = transition_matrix(hour, _day())[frm, poi]
    after = transition_matrix(hour, _day(**change))[frm, poi]
    assert np.sign(after - before) == direction


def test_fatigue_logit_is_the_documented_factor():
    # +1.5 logit on home and -1.5 on gym: the home/gym odds ratio grows by exp(3)
    a, b = transition_matrix(18, _day())[OFFICE], transition_matrix(18, _day(fatigue=[18]))[OFFICE]
    assert (b[HOME] / b[GYM]) / (a[HOME] / a[GYM]) == pytest.approx(np.exp(3.0))


def test_visit_probability_matches_monte_carlo():
    day = _day(weekday="Saturday", event="a big sales event")
    mats = [transition_matrix(h, day) for h in range(11, 16)]
    p = visit_probability(mats, HOME, [MALL])
    rng = np.random.default_rng(0)
    n = 40000
    cur, seen = np.full(n, HOME), np.zeros(n, bool)
    for m in mats:  # 40,000 chains stepped together by inverse-CDF sampling
        cur = (rng.random(n)[:, None] > np.cumsum(m[cur], axis=1)).sum(axis=1)
        seen |= cur == MALL
    assert p == pytest.approx(seen.mean(), abs=0.01)


def test_markov_matrix_by_hand():
    m = markov_matrix([{"trajectory": [0, 0, 1]}, {"trajectory": [1, 0]}], 2, alpha=0.0)
    assert m.tolist() == [[0.5, 0.5], [0.5, 0.5]]


@pytest.fixture(scope="module")
def tasks():
    return {f: [generate_task(f, i, suite_seed=11) for i in range(60)]
            for f in ("stark.knowledge.poi", "stark.knowledge.intent")}


@pytest.mark.parametrize("family", ["stark.knowledge.poi", "stark.knowledge.intent"])
def test_gold_from_simulated_future_and_bayes_beats_markov(tasks, family):
    ts = tasks[family]
    for t in ts:
        assert t.answer == t.meta["label_drawn"] == int(any(p in t.inputs["targets"] for p in t.meta["future"]))
        assert t.inputs["days"][-1]["trajectory"][-1] == int(t.prompt.split("Hourly locations from 00:00: ")[-1]
                                                             .split(".")[0].split(", ")[-1])
    assert 0.3 <= np.mean([t.answer for t in ts]) <= 0.7
    markov = np.mean([BASELINES[family](t)[0].value == t.answer for t in ts])
    bayes = np.mean([ALTERNATIVES[family]["bayes"](t)[0].value == t.answer for t in ts])
    assert bayes > 0.7 and bayes >= markov > 0.5
