"""The generated ``stark-tier2`` suite (2,000 items): coverage, balance, oracle = 100 %, and an
independent recomputation of every gold answer from the printed prompt text."""
from __future__ import annotations

import itertools
import re
from collections import Counter

import pytest
from shapely.geometry import LineString, Point, Polygon

from stsim.scoring.score import score_answers, summarise
from stsim.solvers.base import get_solver
from stsim.benchmarks.suites import get_suite
from stsim.sim.shapes import table8_combinations

BINARY = ("stark.relation.spatial", "stark.relation.temporal", "stark.relation.spatiotemporal")


@pytest.fixture(scope="module")
def suite_tasks():
    tasks = list(get_suite("stark-tier2").tasks(seed=0))
    assert len(tasks) == 2000
    return tasks


def test_every_table8_combination_appears(suite_tasks):
    seen = Counter((t.inputs["a"]["type"], t.inputs["b"]["type"], t.inputs["predicate"])
                   for t in suite_tasks if t.family == "stark.relation.spatial")
    assert set(seen) == set(table8_combinations())
    # both labels appear for every combination
    labels = {(t.meta["breakdown"]["combination"], t.answer) for t in suite_tasks
              if t.family == "stark.relation.spatial"}
    assert len(labels) == 2 * 34


@pytest.mark.parametrize("family", BINARY)
def test_positive_rate_is_balanced(suite_tasks, family):
    ys = [t.answer for t in suite_tasks if t.family == family]
    assert 0.45 <= sum(ys) / len(ys) <= 0.55


def test_all_13_allen_relations_asked_and_true(suite_tasks):
    temporal = [t for t in suite_tasks if t.family == "stark.relation.temporal"]
    asked = {t.inputs["relation"] for t in temporal}
    true = {t.meta["true_relation"] for t in temporal}
    choice = {t.answer for t in suite_tasks if t.family == "stark.relation.temporal_choice"}
    assert len(asked) == len(true) == len(choice) == 13
    st_asked = {t.inputs["relation"] for t in suite_tasks if t.family == "stark.relation.spatiotemporal"}
    assert len(st_asked) == 13


def test_hard_negatives_present(suite_tasks):
    neg = Counter(t.meta["scene"] for t in suite_tasks
                  if t.family == "stark.relation.spatial" and t.answer == 0)
    far = neg.get("far", 0)
    assert far / sum(neg.values()) < 0.25  # most negatives are near-contacts, not far-apart shapes


def test_oracle_scores_100_and_random_near_chance(suite_tasks):
    oracle = get_solver("baseline")
    answers = [a for t in suite_tasks for a in oracle.solve(t)]
    summ = summarise(score_answers(suite_tasks, answers))
    for fam, row in summ.items():
        assert row["accuracy"] == 1.0, fam
        assert row["failures"] == 0
    assert summ["stark.relation.de9im"]["partial_accuracy"] == 1.0
    spatial = summ["stark.relation.spatial"]["breakdown"]
    assert len(spatial["combination"]) == 34 and len(spatial["predicate"]) == 7
    assert len(summ["stark.relation.temporal"]["breakdown"]["relation"]) == 13

    rnd = get_solver("random")
    r_answers = [a for t in suite_tasks for a in rnd.solve(t)]
    assert r_answers == [a for t in suite_tasks for a in rnd.solve(t)]  # deterministic
    r = summarise(score_answers(suite_tasks, r_answers))
    for fam in BINARY:
        assert r[fam]["chance"] == 0.5
        assert 0.40 <= r[fam]["accuracy"] <= 0.60, fam
    assert r["stark.relation.temporal_choice"]["accuracy"] < 0.2
    assert 0.15 <= r["stark.relation.de9im"]["partial_accuracy"] <= 0.40


# ------------------------------------------------------------------ independent recomputation
# Written apart from stsim.sim: numbers are read back from the *prompt text*, geometries built
# with plain shapely, Allen relations from an endpoint-comparison table.  Coordinates are
# scaled by 10^4 to integers (every printed number has 4 decimals): a similarity, so DE-9IM is
# unchanged, and integers are exact binary floats, on which GEOS's orientation tests are
# exact -- a second exact computation, independent of stsim's rational arithmetic.
_NUM = r"-?\d+\.\d{4}"
_WORD = {"point": Point, "line string": LineString, "polygon": Polygon}


def _int(text) -> int:
    return int(text.replace(".", ""))


def _pairs(text):
    return [(_int(a), _int(b)) for a, b in re.findall(rf"\(({_NUM}), ({_NUM})\)", text)]


def _geom(word, text):
    pts = _pairs(text)
    return Point(pts[0]) if word == "point" else _WORD[word](pts)


def _allen(a, b):
    if a[1] < b[0]:
        return "before"
    if b[1] < a[0]:
        return "after"
    if a[1] == b[0]:
        return "meets"
    if b[1] == a[0]:
        return "met_by"
    cmp = lambda x, y: (x > y) - (x < y)  # noqa: E731
    return {(0, 0): "equals", (0, -1): "starts", (0, 1): "started_by", (1, 0): "finishes",
            (-1, 0): "finished_by", (1, -1): "during", (-1, 1): "contains", (-1, -1): "overlaps",
            (1, 1): "overlapped_by"}[(cmp(a[0], b[0]), cmp(a[1], b[1]))]


_G = r"the (point|line string|polygon) (\[[^\]]*\])"


def _independent_gold(t):
    p = t.prompt
    if t.family == "stark.relation.spatial":
        m = re.search(rf"does {_G} satisfy \*\*(\w+)\*\* with respect to {_G}\?", p)
        a, b = _geom(m.group(1), m.group(2)), _geom(m.group(4), m.group(5))
        return int(getattr(a, m.group(3))(b))
    if t.family == "stark.relation.de9im":
        m = re.search(rf"A = {_G} against B = {_G}", p)
        return _geom(m.group(1), m.group(2)).relate(_geom(m.group(3), m.group(4)))
    if t.family == "stark.relation.temporal":
        m = re.search(rf"A = \(({_NUM}), ({_NUM})\) stand in the relation \*\*(\w+)\*\* to the "
                      rf"interval B = \(({_NUM}), ({_NUM})\)", p)
        a, b = (float(m.group(1)), float(m.group(2))), (float(m.group(4)), float(m.group(5)))
        return int(_allen(a, b) == m.group(3))
    if t.family == "stark.relation.temporal_choice":
        m = re.search(rf"from A = \(({_NUM}), ({_NUM})\) to B = \(({_NUM}), ({_NUM})\)", p)
        return _allen((float(m.group(1)), float(m.group(2))), (float(m.group(3)), float(m.group(4))))
    # spatiotemporal
    traj = _pairs(re.search(r"Object trajectory \(vertices\): (\[[^\]]*\])", p).group(1))
    times = [float(v) for v in re.findall(_NUM, re.search(r"Time stamps of the vertices: (\[[^\]]*\])", p).group(1))]
    m = re.search(rf"satisfies \*\*(\w+)\*\* with respect to {_G}", p)
    pred, geom = m.group(1), _geom(m.group(2), m.group(3))
    m = re.search(rf"relation \*\*(\w+)\*\* to the reference interval \(({_NUM}), ({_NUM})\)", p)
    rel, ref = m.group(1), (float(m.group(2)), float(m.group(3)))
    flags = [getattr(LineString(traj[k:k + 2]), pred)(geom) for k in range(len(traj) - 1)]
    runs, k = [], 0
    for sat, grp in itertools.groupby(flags):
        n = len(list(grp))
        if sat:
            runs.append((times[k], times[k + n]))
        k += n
    assert len(runs) <= 1, "generated items have at most one run"
    return int(bool(runs) and _allen(runs[0], ref) == rel)


def test_independent_recomputation_agrees_on_every_item(suite_tasks):
    disagree = [t.id for t in suite_tasks if _independent_gold(t) != t.answer]
    assert disagree == []


def test_prompt_numbers_equal_inputs(suite_tasks):
    for t in suite_tasks:
        if t.family == "stark.relation.spatial":
            printed = _pairs(t.prompt.split("Question:")[1])
            assert printed == [(round(x * 10**4), round(y * 10**4))
                               for x, y in t.inputs["a"]["coords"] + t.inputs["b"]["coords"]]


def test_intervals_non_negative_and_generation_deterministic(suite_tasks):
    from stsim.registry import generate_task
    for t in suite_tasks:
        for key in ("a", "b", "reference"):
            iv = t.inputs.get(key)
            if isinstance(iv, list) and len(iv) == 2 and not isinstance(iv[0], list):
                assert 0 <= iv[0] < iv[1]
    again = generate_task("stark.relation.spatiotemporal", 7, suite="stark-tier2", suite_seed=0)
    first = next(t for t in suite_tasks if t.id == again.id)
    assert again.to_dict() == first.to_dict()


def test_run_reports_oracle_and_random_side_by_side(tmp_path):
    import json as _json

    from stsim.scoring.report import format_table
    from stsim.benchmarks.runner import run
    summ = run("stark-tier2", n=20, out_dir=tmp_path, progress=False)
    row = summ["families"]["stark.relation.temporal"]
    assert row["accuracy"] == 1.0 and 0.0 <= row["random_accuracy"] <= 1.0
    assert "rnd.part" in format_table(summ["families"])
    on_disk = _json.loads((tmp_path / "summary.json").read_text())
    assert on_disk["families"]["stark.relation.spatial"]["breakdown"]["predicate"]
    assert "random_partial_accuracy" in on_disk["families"]["stark.relation.de9im"]
