"""STARK tier 2: geometry and interval rules, worked cases of Tables 19-21, degenerate input."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stsim.answers import get_format, parse_answer
from stsim.baselines import BASELINES
from stsim.records import Task
from stsim.sim import allen
from stsim.sim.event_interval import event_interval, satisfying_runs
from stsim.sim.interval_scenes import interval_with_relation
from stsim.sim.shapes import GeometryError, TABLE8, holds, relate, table8_combinations, to_shapely

from tests.conftest import shared_path


def _cases():
    data = json.loads(shared_path("cases", "stark_seed_examples.json").read_text())
    return {c["table"]: c for c in data["cases"]}


def _task(family, inputs, answer, fmt="binary"):
    return Task(f"t/{family}/0", family, "", inputs, answer, fmt)


# ------------------------------------------------------------------ worked cases (Tables 19-21)
def test_table19_line_intersects_polygon():
    c = _cases()[19]
    a = {"type": "LineString", "coords": c["a"]["coords"]}
    b = {"type": "Polygon", "coords": c["b"]["coords"]}
    assert int(holds(a, b, c["predicate"])) == c["published_answer"] == 1
    # the horizontal line y = 9.0467 passes through the polygon: it crosses it, is not within
    assert holds(a, b, "crosses") and not holds(a, b, "within")
    ans = BASELINES["stark.relation.spatial"](_task("stark.relation.spatial",
                                                    {"a": a, "b": b, "predicate": "intersects"}, 1))
    assert ans[0].value == 1


def test_table20_intervals_are_before_not_overlapping():
    c = _cases()[20]
    # (3.7558, 6.4075) ends long before (39.8870, 44.8131) starts
    assert allen.relation(c["a"], c["b"]) == "before"
    asked = allen.canonical(c["relation"])
    assert int(allen.relation(c["a"], c["b"]) == asked) == c["published_answer"] == 0


def test_table21_event_interval_rule():
    c = _cases()[21]
    geom = {"type": "Polygon", "coords": c["geometry"]["coords"]}
    runs = satisfying_runs(c["trajectory"], c["timestamps"], geom, c["spatial_predicate"])
    # segments 0..6 touch or enter the polygon (hand check: vertex 7 at (8.9822, 9.5463) lies
    # below the polygon's lowest vertex y = 9.4669 ... the run ends at vertex 7's time stamp)
    assert runs == [(1.9871, 9.1299)]
    assert allen.relation(runs[0], c["reference_interval"]) == "overlaps"
    inputs = {"trajectory": c["trajectory"], "times": c["timestamps"], "geometry": geom,
              "predicate": "intersects", "relation": "equals", "reference": c["reference_interval"]}
    ans = BASELINES["stark.relation.spatiotemporal"](_task("stark.relation.spatiotemporal", inputs, 0))
    assert ans[0].value == c["published_answer"] == 0


# ------------------------------------------------------------------ Table 8 and OGC semantics
def test_table8_has_34_combinations_and_point_point_only_equals():
    combos = table8_combinations()
    assert len(combos) == 34
    assert TABLE8[("Point", "Point")] == ("equals",)
    assert ("Polygon", "Polygon", "crosses") not in combos
    assert ("LineString", "Polygon", "contains") not in combos


def test_point_at_line_end_touches_but_interior_vertex_is_within():
    line = {"type": "LineString", "coords": [[0, 0], [1, 1], [2, 0]]}
    end = {"type": "Point", "coords": [[2, 0]]}
    mid = {"type": "Point", "coords": [[1, 1]]}
    assert holds(end, line, "touches") and not holds(end, line, "within")
    assert holds(mid, line, "within") and not holds(mid, line, "touches")
    assert not holds(line, end, "contains") and holds(line, mid, "contains")


def test_touching_versus_overlapping_squares():
    sq = {"type": "Polygon", "coords": [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]}
    right = {"type": "Polygon", "coords": [[1, 0], [2, 0], [2, 1], [1, 1], [1, 0]]}
    shifted = {"type": "Polygon", "coords": [[0.9, 0], [2, 0], [2, 1], [0.9, 1], [0.9, 0]]}
    assert holds(sq, right, "touches") and not holds(sq, right, "overlaps")
    assert holds(sq, shifted, "overlaps") and not holds(sq, shifted, "touches")
    # shared edge: interiors disjoint (F), boundaries meet in a line (1)
    assert relate(sq, right) == "FF2F11212"


def test_line_ending_on_boundary_touches_line_through_crosses():
    sq = {"type": "Polygon", "coords": [[0, 0], [1, 0], [1, 1], [0, 1], [0, 0]]}
    ends_on = {"type": "LineString", "coords": [[2, 0.5], [1, 0.5]]}
    through = {"type": "LineString", "coords": [[2, 0.5], [0.5, 0.5]]}
    assert holds(ends_on, sq, "touches") and not holds(ends_on, sq, "crosses")
    assert holds(through, sq, "crosses") and not holds(through, sq, "touches")


# ------------------------------------------------------------------ Allen's algebra
HAND = {  # a = (2, 5) against b
    "before": (6, 8), "meets": (5, 8), "overlaps": (4, 8), "starts": (2, 8), "during": (1, 8),
    "finishes": (1, 5), "equals": (2, 5), "after": (0, 1), "met_by": (0, 2),
    "overlapped_by": (0, 3), "started_by": (2, 3), "contains": (3, 4), "finished_by": (3, 5),
}


@pytest.mark.parametrize("rel", allen.RELATIONS)
def test_allen_hand_cases(rel):
    assert allen.relation((2, 5), HAND[rel]) == rel


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=4, max_size=4))
def test_allen_converse_and_exclusive(xs):
    a, b = sorted(xs[:2]), sorted(xs[2:])
    if a[0] == a[1] or b[0] == b[1]:
        return
    r = allen.relation(a, b)
    assert allen.relation(b, a) == allen.CONVERSE[r]
    assert sum(allen.relation(a, b) == q for q in allen.RELATIONS) == 1


@pytest.mark.parametrize("rel", allen.RELATIONS)
def test_constructed_intervals_share_exact_endpoints(rel):
    rng = np.random.default_rng(7)
    a = (12.3456, 17.0001)
    b = interval_with_relation(rng, a, rel)
    assert allen.relation(a, b) == rel
    if rel in ("meets", "starts", "equals", "started_by"):
        assert a[1] == b[0] or a[0] == b[0]


def test_stark_relation_names_map_to_ours():
    assert allen.canonical("precedes") == "before"
    assert allen.canonical("is_overlapped_by") == "overlapped_by"
    assert allen.canonical("overlaps with".replace(" ", "_")) == "overlaps"
    assert allen.canonical("Is-equal-to") == "equals"
    with pytest.raises(KeyError, match="unknown Allen relation"):
        allen.canonical("sometimes")


# ------------------------------------------------------------------ degenerate input
@pytest.mark.parametrize("geom, msg", [
    ({"type": "LineString", "coords": [[1, 1], [1, 1]]}, "zero-length"),
    ({"type": "Polygon", "coords": [[0, 0], [1, 1], [1, 0], [0, 1], [0, 0]]}, "self-intersecting|Self-intersection"),
    ({"type": "Polygon", "coords": [[0, 0], [1, 0], [1, 1], [0, 1]]}, "unclosed"),
    ({"type": "Polygon", "coords": [[0, 0], [1, 0], [2, 0], [0, 0]]}, "zero area"),
    ({"type": "Point", "coords": [[0, 0], [1, 1]]}, "exactly one"),
    ({"type": "Circle", "coords": [[0, 0]]}, "unknown geometry type"),
])
def test_degenerate_geometries_rejected(geom, msg):
    with pytest.raises(GeometryError, match=msg):
        to_shapely(geom)


def test_interval_end_before_start_rejected():
    with pytest.raises(allen.IntervalError, match="does not follow"):
        allen.relation((5.0, 4.0), (1.0, 2.0))
    with pytest.raises(allen.IntervalError, match="does not follow"):
        allen.check_interval((3.0, 3.0))


def test_event_rule_rejects_bad_trajectories_and_multiple_runs():
    geom = {"type": "Polygon", "coords": [[0, -1], [1, -1], [1, 1], [0, 1], [0, -1]]}
    with pytest.raises(GeometryError, match="increase"):
        satisfying_runs([[0, 0], [1, 0]], [2.0, 1.0], geom, "intersects")
    with pytest.raises(GeometryError, match="zero-length segment"):
        satisfying_runs([[0, 0], [0, 0], [1, 0]], [0, 1, 2], geom, "intersects")
    # the path enters, leaves, and re-enters: two runs -> no single event interval
    zig = [[-1, 0], [0.5, 0], [3, 0], [3, 3], [0.5, 3], [0.5, 0.5], [0.6, 0.6]]
    assert satisfying_runs(zig, range(7), geom, "intersects") == [(0, 2), (4, 6)]
    with pytest.raises(GeometryError, match="2 disjoint"):
        event_interval(zig, range(7), geom, "intersects")


def test_cli_rejects_degenerate_task(tmp_path, capsys):
    from stsim.cli import main
    task = Task("x/stark.relation.spatial/000000", "stark.relation.spatial", "p",
                {"a": {"type": "Polygon", "coords": [[0, 0], [1, 0], [1, 1], [0, 1]]},
                 "b": {"type": "Point", "coords": [[0.5, 0.5]]}, "predicate": "contains"}, 1, "binary")
    tasks = tmp_path / "t.jsonl"
    tasks.write_text(json.dumps(task.to_dict()) + "\n")
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"task_id": task.id, "text": "[RESULTS_START] [1] [RESULTS_END]"}) + "\n")
    assert main(["score", str(tasks), str(answers)]) == 2
    assert "unclosed Polygon ring" in capsys.readouterr().err
    assert main(["audit", str(tasks)]) == 1
    assert "[degenerate]" in capsys.readouterr().out


# ------------------------------------------------------------------ DE-9IM answer format
def test_de9im_format_parse_and_partial_credit():
    fmt = get_format("de9im")
    a = parse_answer("[RESULTS_START] ff2 f11 212 [RESULTS_END]", task_id="t", step=None,
                     answer_format="de9im")
    assert a.status == "ok" and a.value == "FF2F11212"
    assert fmt.correct("FF2F11212", "FF2F11212") == 1
    assert fmt.partial("FF2F11212", "FF2F1121F") == pytest.approx(8 / 9)
    bad = parse_answer("[RESULTS_START] FF2F1121 [RESULTS_END]", task_id="t", step=None,
                       answer_format="de9im")
    assert bad.status == "format_failure"


def test_breakdown_counts_failures_as_wrong_and_chance_is_reported():
    from stsim.scoring.score import score_answers, summarise
    from stsim.records import Answer
    tasks = [Task(f"s/f/{k}", "f", "", {}, y, "binary", meta={"breakdown": {"relation": r}})
             for k, (y, r) in enumerate([(1, "meets"), (0, "meets"), (1, "before")])]
    answers = [Answer("s/f/0", None, "ok", value=1), Answer("s/f/1", None, "ok", value=1)]  # 2 missing
    row = summarise(score_answers(tasks, answers))["f"]
    assert row["accuracy"] == pytest.approx(1 / 3)
    assert row["chance"] == 0.5 and row["failures"] == 1
    assert row["breakdown"]["relation"] == {"before": {"n": 1, "accuracy": 0.0},
                                            "meets": {"n": 2, "accuracy": 0.5}}
