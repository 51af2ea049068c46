"""False-premise geoqa questions (seed 003 §3.4): the perturbation really falsifies the premise
(re-checked by an independent computation over the raw entity table), the original premise
held, the shared refusal reader, and FRR / NRR over the same sub-templates (§4, G.7)."""
from __future__ import annotations

import numpy as np
import pytest

from stsim.answers import parse_answer
from stsim.records import Answer, Task
from stsim.refusal import ANSWERED, REJECT, looks_like_refusal

N = 6  # false-premise questions checked per template


@pytest.fixture(scope="module")
def ctx():
    from stsim.geoqa.context import get_context
    return get_context()


def _independent_premise(ctx, tid, b) -> bool:
    """The premise recomputed without stsim.geoqa.premise: raw table scans, pyproj geodesics,
    the simulated city's own graph."""
    from pyproj import Geod
    cities = ctx.store.table if hasattr(ctx.store, "table") else ctx.cities
    cities = cities[cities["category"] == "city"] if "category" in cities else cities
    p = b["params"]
    if tid in ("admin.count_in_admin1", "enumeration.top_in_admin1"):
        return bool(((cities["iso2"] == p["cc"]) & (cities["admin1_name"] == p["admin1"])).any())
    if tid == "nearest.larger_city":
        return bool(((cities["population"] > p["pop"]) & (cities["id"] != b["ids"]["a"])).any())
    if tid == "aggregation.largest_within":
        a = cities[cities["id"] == b["ids"]["a"]].iloc[0]
        others = cities[cities["id"] != b["ids"]["a"]]
        lon, lat = others.geometry.x.to_numpy(), others.geometry.y.to_numpy()
        _, _, d = Geod(ellps="WGS84").inv(np.full(len(lon), a.geometry.x), np.full(len(lon), a.geometry.y), lon, lat)
        return bool((d / 1000.0 <= p["r"]).any())
    net = ctx.networks()[b["network"]]
    if tid == "nearest.amenity":
        return any(pl.kind == p["kind"] for pl in net.city.places)
    if tid.startswith("routing."):
        g = net.city.graph
        want = p["p" if tid == "routing.nearest_landmark" else "q"].removeprefix("the corner of ")
        return any(want == net.city.corner(n) for n in g.nodes)
    raise AssertionError(tid)


@pytest.mark.parametrize("tid", ["admin.count_in_admin1", "enumeration.top_in_admin1", "nearest.larger_city",
                                 "aggregation.largest_within", "nearest.amenity", "routing.length",
                                 "routing.streets", "routing.blocks", "routing.arrival",
                                 "routing.detour_index", "routing.passes_through",
                                 "routing.nearest_landmark"])
def test_perturbation_falsifies_the_premise(ctx, tid):
    from stsim.geoqa.executor import instance, load_templates
    from stsim.geoqa.premise import PERTURBATIONS, false_instance, premise_holds
    t = load_templates()[tid]
    assert tid in PERTURBATIONS
    for i in range(N):
        fi = false_instance(tid, i)
        base = instance(tid, fi.base_index)
        assert _independent_premise(ctx, tid, base.binding), (tid, i, "original premise must hold")
        assert premise_holds(tid, base.binding)
        assert not _independent_premise(ctx, tid, fi.binding), (tid, i, fi.binding)
        assert not premise_holds(tid, fi.binding)
        q, q0 = fi.question(t, 0), base.question(t, 0)
        assert q != q0 and "{" not in q
        assert fi.subtemplate == base.subtemplate
        assert fi.triples


def test_premise_breaks_the_query(ctx):
    """Re-executing the template's own query on a perturbed binding finds nothing to answer:
    the radius and threshold questions have no candidate (Degenerate), the admin-1 division has
    no cities in the named country, the absent corner is no node of the graph."""
    import networkx as nx

    from stsim.geoqa.executor import Degenerate, execute
    from stsim.geoqa.premise import false_instance
    for tid in ("nearest.larger_city", "aggregation.largest_within"):
        fi = false_instance(tid, 0)
        with pytest.raises((Degenerate, IndexError, ValueError)):
            execute(tid, fi.binding)
    fi = false_instance("nearest.amenity", 0)
    with pytest.raises((Degenerate, IndexError, ValueError)):
        execute("nearest.amenity", fi.binding)
    for tid in ("routing.length", "routing.streets", "routing.blocks", "routing.arrival",
                "routing.detour_index", "routing.passes_through", "routing.nearest_landmark"):
        fi = false_instance(tid, 0)
        with pytest.raises((Degenerate, nx.NodeNotFound)):  # the absent corner is no node
            execute(tid, fi.binding)


def test_false_premise_tasks_and_oracle():
    from stsim.baselines import BASELINES
    from stsim.registry import generate_task, validate_task
    task = generate_task("geoqa.fp.nearest.larger_city", 0, suite="t")
    validate_task(task)
    assert task.answer == REJECT and task.answer_format == "geo_rejection"
    assert task.inputs["premise"] == "false" and task.inputs["perturbation"] == "threshold"
    assert "Answer:" in task.prompt and "30,000,000" in task.prompt
    (ans,) = BASELINES["geoqa.fp.nearest.larger_city"](task)
    assert ans.status == "ok" and ans.value == REJECT
    edited = Task.from_dict({**task.to_dict(), "inputs": {**task.inputs, "binding": {
        **task.inputs["binding"], "params": {**task.inputs["binding"]["params"], "pop": 1_000_000}}}})
    (ans,) = BASELINES["geoqa.fp.nearest.larger_city"](edited)
    assert ans.status == "no_estimate"


@pytest.mark.parametrize("text,refusal", [
    ("I cannot answer that.", True), ("The premise is false: Sindh is not in Myanmar.", True),
    ("There is no such city.", True), ("Answer: no such corner exists", True),
    ("That corner does not exist in Birchfield.", True), ("Answer: 42", False),
    ("Answer: no, Lyon is not in Spain", False), ("Answer: Cairo, Egypt", False)])
def test_shared_refusal_reader(text, refusal):
    assert looks_like_refusal(text) == refusal or text.startswith("Answer: no such")
    a = parse_answer(text, task_id="x", step=None, answer_format="geo_rejection", rubric="geoqa")
    assert a.status == "ok" and a.value == (REJECT if refusal else ANSWERED)
    b = parse_answer(text, task_id="x", step=None, answer_format="geo_count", rubric="geoqa")
    assert (b.status == "refusal") == refusal


def _task(i, premise, sub="s1", tid="nearest.larger_city"):
    inputs = {"template": tid, "sfid": tid.split(".")[0], "subtemplate": sub}
    if premise == "false":
        inputs["premise"] = "false"
        return Task(f"t/{i}", f"geoqa.fp.{tid}", "q", inputs, REJECT, "geo_rejection", meta={"answer_spec": {}})
    return Task(f"t/{i}", f"geoqa.{tid}", "q", inputs, "Paris, France", "geo_entity",
                meta={"answer_spec": {}})


def test_frr_nrr_same_subtemplates():
    """Hand-counted: 4 false-premise questions, 3 rejected -> NRR 0.75; answerable questions of
    sub-template s1: 4, 1 refused -> FRR 0.25; one more refused answerable question of another
    sub-template counts only in frr_all (2 of 6); a timeout is excluded from both."""
    from stsim.scoring.geoqa_report import geoqa_table
    tasks = [_task(i, "false") for i in range(4)] + [_task(10 + i, "true") for i in range(4)] \
        + [_task(20, "true", "s2"), _task(21, "true", "s2"), _task(22, "true", "s1")]
    texts = ["I cannot answer.", "The premise is false.", "There is no such city.", "Answer: Paris, France",
             "Answer: Paris, France", "I cannot determine that.", "Answer: Lyon, France", "Answer: Paris, France",
             "I'm sorry, but I cannot answer.", "Answer: Paris, France"]
    answers = [parse_answer(x, task_id=t.id, step=None, answer_format=t.answer_format, rubric="geoqa")
               for t, x in zip(tasks, texts)]
    answers.append(Answer("t/22", None, "timeout"))
    r = geoqa_table(tasks, answers)
    p = r["premise"]
    assert p["nrr"] == 0.75 and p["n_false"] == 4
    assert p["frr"] == 0.25 and p["n_answerable"] == 4
    assert p["n_all"] == 6 and p["frr_all"] == round(2 / 6, 6)
    # EM / NE / Cov over the 7 true-premise questions only: 3 right, 2 refused, 1 wrong, 1 timeout
    assert r["overall"]["n"] == 7 and r["overall"]["em"] == round(3 / 7, 6)
    assert r["overall"]["coverage"] == round(4 / 7, 6)


def test_small_suite_share_and_subset():
    from stsim.benchmarks.geoqa_suites import FALSE_PREMISE_SHARE, SMALL_CELL, small_counts, source_of
    from stsim.benchmarks.suites import get_suite
    small, large = get_suite("geoqa-small").families, get_suite("geoqa").families
    assert set(small) < set(large) or set(small) == set(large)
    assert all(small[f] <= large[f] for f in small) and sum(small.values()) < sum(large.values())
    fp = sum(v for f, v in small.items() if f.startswith("geoqa.fp."))
    assert abs(fp / sum(small.values()) - FALSE_PREMISE_SHARE) < 0.005
    cells: dict = {}
    from stsim.geoqa.executor import load_templates
    for f, v in small.items():
        if not f.startswith("geoqa.fp."):
            tid = f.removeprefix("geoqa.")
            key = (source_of(tid), load_templates()[tid].sfid)
            cells[key] = cells.get(key, 0) + v
    assert max(cells.values()) <= SMALL_CELL and ("sim", "routing") in cells
    assert small_counts() == small
