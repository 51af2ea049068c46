"""STARK's own per-item convention (stark_trimmed) and its legacy reader (rubric stark-legacy):
hand-computed values, and value-for-value agreement with STARK's released distance.py (a test
oracle in ../shared/oracle/readers/, never imported by the package)."""
from __future__ import annotations

import importlib.util
import json
import math
import random
from types import SimpleNamespace

import numpy as np
import pytest

from stsim.answers import parse_answer, stark_legacy_array
from stsim.scoring.stark_metric import (STARK_DATASETS, StarkItem, Unusable, stark_item, stark_item_error,
                                           stark_track_error, stark_trimmed_mean, summarise_stark)
from stsim.records import Answer, Step, Task

from .conftest import shared_path


# ------------------------------------------------------------------ hand-computed per-item values
def test_point_is_root_mean_square_over_coordinates():
    # pred (3, 4) against (0, 0): Euclidean 5, STARK sqrt((9 + 16) / 2) = sqrt(12.5)
    assert stark_item_error("loc_range", [3.0, 4.0], [0.0, 0.0]) == pytest.approx(math.sqrt(12.5))
    assert stark_item_error("loc_range", [3.0, 4.0], [0.0, 0.0]) == pytest.approx(5 / math.sqrt(2))


def test_extra_numbers_are_cut_and_too_few_are_unusable():
    assert stark_item_error("loc_bearing", [3.0, 4.0, 99.0], [0.0, 0.0]) == pytest.approx(math.sqrt(12.5))
    with pytest.raises(Unusable):
        stark_item_error("spatiotemporal_impute", [1.0], [1.0, 2.0])


def test_xyt_event_gives_a_spatial_and_a_temporal_value():
    # dx = dy = 1 km -> sqrt((1 + 1) / 2) = 1; dt = 3 s -> 3
    assert stark_item_error("loc_event_spatio_temp", [1.0, 1.0, 10.0], [0.0, 0.0, 7.0]) == (1.0, 3.0)


def test_temporal_event_is_absolute_difference():
    assert stark_item_error("loc_event_temp", 2.5, 4.0) == pytest.approx(1.5)


def test_ten_step_track_pools_steps_and_coordinates():
    golds = [[float(k), 10.0 - k] for k in range(10)]
    preds = [[g[0] + (2.0 if k % 2 else 0.0), g[1]] for k, g in enumerate(golds)]
    # five steps off by 2 in x: sum of squares 5 * 4 = 20 over 10 steps x 2 coordinates -> sqrt(1) = 1
    assert stark_track_error("track_range_online", preds, golds) == pytest.approx(1.0)
    # our per-step Euclidean RMS over the same steps is sqrt(20 / 10)
    eucl = [math.dist(p, g) for p, g in zip(preds, golds)]
    assert math.sqrt(np.mean(np.square(eucl))) == pytest.approx(math.sqrt(2.0))


def test_field_vector_is_relative_l2_and_plain_rms_near_zero_gold():
    assert stark_item_error("spatiotemporal_forecast", [3.0, 5.0], [3.0, 4.0]) == pytest.approx(1 / 5)
    assert stark_item_error("spatiotemporal_impute", [2.0, 0.0, 0.0, 0.0], [0.0] * 4) == pytest.approx(1.0)
    assert stark_item_error("temporal_impute", 11.0, 10.0) == pytest.approx(0.1)


def test_huge_and_tiny_finite_answers_give_finite_non_zero_stark_values():
    """Squares of errors above ~1.3e154 overflowed (an answer near 1e155 gave inf, a field item
    inf / inf = NaN, 'unusable') and below ~1e-162 underflowed to 0: the values, hand-derived,
    are those of the small-number formulas scaled up or down."""
    # (3, 4) x 1e155 against (0, 0): sqrt(12.5) x 1e155 (the x-y point of the first test)
    assert stark_item_error("loc_range", [3e155, 4e155], [0.0, 0.0]) == pytest.approx(math.sqrt(12.5) * 1e155)
    assert stark_item_error("loc_range", [3e-170, 4e-170], [0.0, 0.0]) == pytest.approx(math.sqrt(12.5) * 1e-170)
    assert stark_item_error("loc_event_temp", 2.5e200, 4e200) == pytest.approx(1.5e200)
    assert stark_item_error("loc_event_spatio_temp", [1e160, 1e160, 3e160], [0.0, 0.0, 0.0]) == (
        pytest.approx(1e160), pytest.approx(3e160))
    # the track of test_ten_step_track_pools_steps_and_coordinates, every number x 1e160
    golds = [[1e160 * k, 1e160 * (10.0 - k)] for k in range(10)]
    preds = [[g[0] + (2e160 if k % 2 else 0.0), g[1]] for k, g in enumerate(golds)]
    assert stark_track_error("track_range_online", preds, golds) == pytest.approx(1e160)
    # the field items of the test above, x 1e200: relative errors unchanged, the near-zero rule too
    assert stark_item_error("spatiotemporal_forecast", [3e200, 5e200], [3e200, 4e200]) == pytest.approx(1 / 5)
    assert stark_item_error("spatiotemporal_impute", [2e200, 0.0, 0.0, 0.0], [0.0] * 4) == pytest.approx(1e200)
    # their mean (the family's 'STARK trim') is finite too: (1e308 + 1.5e308) / 2, not an overflow
    assert stark_trimmed_mean([1e308, 1.5e308], trim=0.0) == pytest.approx(1.25e308)
    assert stark_trimmed_mean([1.0, math.inf], trim=0.0) == math.inf
    # an infinite error stays infinite; ordinary values are computed as before, bit for bit
    assert stark_item_error("loc_range", [1.7e308, 0.0], [-1.7e308, 0.0]) == math.inf
    assert stark_item_error("loc_range", [0.1, 0.7], [0.3, 0.2]) == math.sqrt(((0.1 - 0.3) ** 2 + (0.7 - 0.2) ** 2) / 2)


def test_trimmed_mean_drops_ten_percent_each_side_and_counts_failures():
    items = [StarkItem(f"t{i}", "stark.localization.range", float(i)) for i in range(1, 11)]
    items.append(StarkItem("bad", "stark.localization.range", None, reason="missing"))
    row = summarise_stark(items)["stark.localization.range"]
    assert row == {"stark_trimmed": 5.5, "stark_n": 10, "stark_failures": 1}  # mean of 2..9
    assert stark_trimmed_mean([1.0, 2.0, 3.0]) == 2.0  # floor(0.3) = 0 dropped


def _track(family: str, n: int = 12) -> Task:
    steps = [Step(k, "", {}, [float(k), 1.0]) for k in range(n)]
    return Task(f"x/{family}/0", family, "", {}, None, "point", steps, {"rubric": "stark"})


def test_tracking_item_needs_every_scored_step_under_our_reader():
    t = _track("stark.tracking.range")
    answers = [Answer(t.id, k, "ok", value=[k + 1.0, 1.0]) for k in range(10)]
    item = stark_item(t, answers, max_steps=10)
    assert item.error == pytest.approx(math.sqrt(10 / 20))  # 10 steps off by 1 in x
    answers[3] = Answer(t.id, 3, "format_failure", text="no idea")
    item = stark_item(t, answers, max_steps=10)
    assert item.error is None and "step 3" in item.reason


def test_legacy_item_uses_starks_guess_for_unreadable_steps():
    t = _track("stark.tracking.range")
    answers = [Answer(t.id, k, "ok", text=f"[RESULTS_START] [{k}, 1] [RESULTS_END]") for k in range(10)]
    answers[0] = Answer(t.id, 0, "format_failure", text="I cannot tell.")
    item = stark_item(t, answers, max_steps=10, legacy=True)
    # step 0 guessed [5, 5] against [0, 1]: (25 + 16) over 20 values
    assert item.error == pytest.approx(math.sqrt(41 / 20))


# ------------------------------------------------------------------------- the oracle reader
@pytest.fixture(scope="module")
def oracle():
    path = shared_path("oracle", "readers", "stark_distance.py")
    spec = importlib.util.spec_from_file_location("stark_distance_oracle", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _oracle_single(oracle, dataset, reply, gold):
    """main.py execute_llm_solver: NaN when compute_mse raises."""
    args = SimpleNamespace(dataset=dataset)
    try:
        d, _ = oracle.compute_mse(args, reply, np.atleast_1d(np.asarray(gold, float)),
                                  rmspe=dataset in ("spatial_impute", "temporal_impute",
                                                    "spatiotemporal_impute", "spatiotemporal_forecast"))
    except Exception:  # noqa: BLE001 - as main.py does
        return math.nan
    return d


def _oracle_track(oracle, dataset, replies, golds):
    """main.py execute_llm_solver_online over the first len(replies) steps."""
    args = SimpleNamespace(dataset=dataset)
    out = [oracle.string_to_np_array(r) for r in replies]
    try:
        d, _ = oracle.compute_mse(args, out, np.asarray(golds, float).squeeze(), string_to_array=False)
    except Exception:  # noqa: BLE001
        return math.nan
    return d


def _fmt(v: float, rng: random.Random) -> str:
    return rng.choice(["{:.2f}", "{:.4f}", "{}", "{:.1f}"]).format(v)


def _reply(value, rng: random.Random) -> str:
    vals = value if isinstance(value, list) else [value]
    body = ", ".join(_fmt(v, rng) for v in vals)
    kind = rng.random()
    if kind < 0.5:
        body = f"[{body}]"
    elif kind < 0.6:
        body = body.replace(", ", " ")
    elif kind < 0.7:
        return "I cannot determine the position."
    elif kind < 0.75:
        return f"[RESULTS_START] [{_fmt(vals[0], rng)}] [RESULTS_END]"  # too short
    elif kind < 0.8:
        body = f"x = {body}"
    return f"Reasoning ... [RESULTS_START]\n{body}\n[RESULTS_END]"


def _perturb(value, rng):
    if isinstance(value, list):
        return [v + rng.uniform(-2, 2) for v in value]
    return value + rng.uniform(-2, 2)


def _same(ours, theirs):
    if ours is None:
        return theirs is None or (not isinstance(theirs, tuple) and np.isnan(theirs))
    if isinstance(theirs, tuple):
        return isinstance(ours, tuple) and all(a == pytest.approx(b, abs=1e-12) for a, b in zip(ours, theirs))
    return ours == pytest.approx(float(theirs), abs=1e-12)


@pytest.fixture(scope="module")
def released(stark_data):
    from stsim.benchmarks.stark_release.tier1 import load_published
    from stsim.benchmarks.stark_release.fields import load_published_fields
    tier1 = [t for t in load_published(stark_data, n=3) if t.family in STARK_DATASETS]
    return tier1 + list(load_published_fields(stark_data, n=3))


def test_released_instances_match_distance_py_value_for_value(released, oracle, capsys):
    """Our stark_trimmed per-item values (ok answers) and the stark-legacy reader both equal
    distance.py's values on generated replies to released instances."""
    rng = random.Random(13)
    checked = 0
    for task in released:
        ds = STARK_DATASETS[task.family]
        rubric_fmt = task.answer_format
        spec = task.meta.get("answer_spec")
        for _ in range(6):
            if task.steps:
                steps = task.steps[:10]
                replies = [_reply(_perturb(s.answer, rng), rng) for s in steps]
                theirs = _oracle_track(oracle, ds, replies, [s.answer for s in steps])
                legacy = [parse_answer(r, task_id=task.id, step=s.index, answer_format=rubric_fmt,
                                       rubric="stark-legacy", spec=spec) for r, s in zip(replies, steps)]
                ours_item = stark_item(task, legacy, 10, legacy=True)
            else:
                reply = _reply(_perturb(task.answer, rng), rng)
                theirs = _oracle_single(oracle, ds, reply, task.answer)
                a = parse_answer(reply, task_id=task.id, step=None, answer_format=rubric_fmt,
                                 rubric="stark-legacy", spec=spec)
                ours_item = stark_item(task, [a], legacy=True)
            ours = ours_item.error if ours_item.time_error is None else (ours_item.error, ours_item.time_error)
            assert _same(ours, theirs), (task.id, ours, theirs, ours_item.reason)
            checked += 1
        # our strict reader on a well-formed reply: same value as distance.py on the same reply
        gold = [s.answer for s in task.steps[:10]] if task.steps else task.answer
        if task.steps:
            preds = [_perturb(g, rng) for g in gold]
            replies = [f"[RESULTS_START] {json.dumps([abs(v) for v in p] if isinstance(p, list) else abs(p))} "
                       "[RESULTS_END]" for p in preds]
            theirs = _oracle_track(oracle, ds, replies, gold)
            answers = [parse_answer(r, task_id=task.id, step=s.index, answer_format=rubric_fmt, spec=spec)
                       for r, s in zip(replies, task.steps[:10])]
        else:
            p = _perturb(gold, rng)
            reply = f"[RESULTS_START] {json.dumps([abs(v) for v in p] if isinstance(p, list) else abs(p))} [RESULTS_END]"
            theirs = _oracle_single(oracle, ds, reply, gold)
            answers = [parse_answer(reply, task_id=task.id, step=None, answer_format=rubric_fmt, spec=spec)]
        assert all(a.status == "ok" for a in answers), answers[0].detail
        it = stark_item(task, answers, 10)
        ours = it.error if it.time_error is None else (it.error, it.time_error)
        assert _same(ours, theirs), (task.id, ours, theirs)
    capsys.readouterr()
    assert len({t.family for t in released}) == 18  # 14 tier-1 + 4 field families, 3 instances each
    assert checked == 6 * len(released) == 6 * 18 * 3


def test_legacy_reader_drops_signs_and_takes_the_first_block():
    assert stark_legacy_array("[RESULTS_START] [-1.5, 6.4] [RESULTS_END]") == [1.5, 6.4]
    two = "[RESULTS_START] [1, 2] [RESULTS_END] then [RESULTS_START] [3, 4] [RESULTS_END]"
    assert stark_legacy_array(two) == [1.0, 2.0]
    assert stark_legacy_array("[results_start] [1, 2] [results_end]") is None  # exact markers only
    a = parse_answer("no block at all", task_id="t", step=None, answer_format="point", rubric="stark-legacy")
    assert a.status == "ok" and a.value == [5.0, 5.0] and "guess" in a.detail


# ------------------------------------------------------------------ stsim score, both rubrics
def test_score_with_default_and_stark_legacy_rubrics(tmp_path, capsys):
    from stsim.cli import main
    from stsim.records import read_tasks
    tasks = tmp_path / "tasks.jsonl"
    assert main(["generate", "stark-mini", "--family", "stark.localization.range", "-o", str(tasks)]) == 0
    ts = read_tasks(tasks)
    assert len(ts) == 3
    (g0, g1, g2) = (t.answer for t in ts)
    replies = [f"[RESULTS_START] [{g0[0] + 3}, {g0[1] + 4}] [RESULTS_END]",   # Euclidean 5, STARK 5/sqrt2
               "I cannot determine the position.",                             # refusal / STARK guess [5, 5]
               f"approximately [{g2[0]}, {g2[1]}] units"]                      # no block: lenient would read it
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"task_id": t.id, "text": r}) + "\n" for t, r in zip(ts, replies)))
    out = tmp_path / "default"
    assert main(["score", str(tasks), str(answers), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    fam = json.loads((out / "summary.json").read_text())["families"]["stark.localization.range"]
    assert fam["trimmed_rmse"] == pytest.approx(5.0)
    assert (fam["stark_trimmed"], fam["stark_n"], fam["stark_failures"]) == (pytest.approx(5 / math.sqrt(2)), 1, 2)
    assert fam["lenient_recoverable"] == 1
    assert "rubric: default" in printed and "would have read 1 of the 1 format failure" in printed

    out = tmp_path / "legacy"
    assert main(["score", str(tasks), str(answers), "--out", str(out), "--rubric", "stark-legacy"]) == 0
    printed = capsys.readouterr().out
    summ = json.loads((out / "summary.json").read_text())
    fam = summ["families"]["stark.localization.range"]
    guess = [math.sqrt(((5 - g[0]) ** 2 + (5 - g[1]) ** 2) / 2) for g in (g1, g2)]
    assert fam["stark_n"] == 3 and fam["stark_failures"] == 0
    assert fam["stark_trimmed"] == pytest.approx((5 / math.sqrt(2) + sum(guess)) / 3, abs=1e-6)
    assert summ["rubric"] == "stark-legacy" and "rubric: stark-legacy" in printed


def test_score_rubric_needs_matching_tasks(tmp_path, capsys):
    from stsim.cli import main
    tasks = tmp_path / "tasks.jsonl"
    assert main(["generate", "cardinal", "--n", "1", "-o", str(tasks)]) == 0
    answers = tmp_path / "a.jsonl"
    answers.write_text("")
    assert main(["score", str(tasks), str(answers), "--rubric", "stark-legacy"]) == 2
    assert "reads replies to 'stark'-rubric tasks" in capsys.readouterr().err
