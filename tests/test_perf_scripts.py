"""The measuring parts of the perf/ scripts of issue 20 (perf/bench_tier1.py's cost growth and
load accounting; perf/vs_stonesoup.py's Stone Soup range model and settings, when Stone Soup,
the 'perf' extra, is installed)."""
from __future__ import annotations

import importlib.util
import math
import re
import sys
import time
from pathlib import Path

import numpy as np
import pytest

PERF = Path(__file__).resolve().parent.parent / "perf"


def _load(name: str):
    if str(PERF) not in sys.path:   # the scripts import perf/_common.py as `python perf/X.py` does
        sys.path.insert(0, str(PERF))
    spec = importlib.util.spec_from_file_location(f"perf_{name}", PERF / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def bench():
    return _load("bench_tier1")


def test_growth_of_a_constant_cost_is_linear(bench):
    ratio, slope = bench.growth(np.full(200, 0.01), 10)
    assert ratio == pytest.approx(1.0)
    assert slope == pytest.approx(1.0)


def test_growth_of_a_cost_rising_with_the_task_index(bench):
    # task k (1-based) costs k: cost(n) = n (n + 1) / 2, so cost(200) / cost(10) = 20100 / 55,
    # divided by 200 / 10; the slope lies between 1 and 2 (n^2 / 2 + n / 2).
    ratio, slope = bench.growth(np.arange(1, 201, dtype=float), 10)
    assert ratio == pytest.approx(20100 / 55 / 20)
    assert 1.8 < slope < 2.0


def test_other_processes_cores_from_two_snapshots(bench):
    # machine busy 10 -> 14 CPU s, this run 1 -> 2 CPU s, over 2 s of wall time:
    # others (4 - 1) / 2 = 1.5 cores, this run 1 / 2 = 0.5
    others, ours = bench._others((10.0, 1.0, 100.0), (14.0, 2.0, 102.0))
    assert (others, ours) == (pytest.approx(1.5), pytest.approx(0.5))
    assert all(math.isnan(v) for v in bench._others(None, (1.0, 1.0, 1.0)))


def test_cpu_busy_snapshot_counts_this_process(bench):
    a = bench._cpu_busy()
    if a is None:
        pytest.skip("no /proc/stat on this system")
    x, start = 0.0, time.process_time()
    while time.process_time() - start < 0.05:  # 5 clock ticks: a fixed loop can end within one
        x += 0.5
    b = bench._cpu_busy()
    assert b[1] > a[1] and b[2] > a[2] and b[0] >= a[0]


def test_stonesoup_range_model_and_settings():
    pytest.importorskip("stonesoup", reason="Stone Soup not installed (pip install 'stsim[perf]')")
    vs = _load("vs_stonesoup")
    from stonesoup.types.array import StateVector
    from stonesoup.types.state import State
    m = vs.CartesianToRange2D(ndim_state=4, mapping=(0, 2), noise_covar=np.array([[1e-4]]),
                              translation_offset=StateVector([[1.0], [2.0]]))
    # a target at (4, 6): 3-4-5 triangle from the sensor at (1, 2)
    z = m.function(State(StateVector([[4.0], [0.0], [6.0], [0.0]])))
    assert float(np.asarray(z, float).ravel()[0]) == pytest.approx(5.0)
    for kind in ("ekf", "ukf", "pf"):
        assert set(vs.TUNED[kind]) == set(vs.FAMILIES)
        assert vs.OLD[kind] == vs.Config()


def _limits_file(tmp_path):
    """A ``bayes_floor.py --save`` file of suite seed 7's event tasks 0 (its gold answers over
    two steps, rounded to 6 decimals as saved, and a made-up limit) and 1 (lost)."""
    import json
    from stsim.registry import generate_task
    task = generate_task("stark.tracking.event", 0, suite="stark-tier1", suite_seed=7)
    gold = np.round(np.array([st.answer for st in task.steps[:2]], float), 6).tolist()
    data = {"meta": {"seed": 7, "steps": 2, "n": 2},
            "families": {"stark.tracking.event": {"summary": {}, "tasks": [
                {"index": 0, "id": "stark-tier1/stark.tracking.event/000000", "lost": False, "gold": gold,
                 "limit": [[1.0, 1.5], [2.0, 2.0]]},
                {"index": 1, "id": "stark-tier1/stark.tracking.event/000001", "lost": True, "gold": None, "limit": None}]}}}
    path = tmp_path / "limits.json"
    path.write_text(json.dumps(data))
    return path


def test_pf_vs_limit_reads_a_bayes_floor_save_file(tmp_path, capsys):
    import json
    mod = _load("pf_vs_limit")
    lim, seed, steps = mod.limits(str(_limits_file(tmp_path)), "stark.tracking.event", 5)
    assert (seed, steps) == (7, 2) and lim[1][1] is None
    assert [lim[i][0].id for i in (0, 1)] == ["stark-tier1/stark.tracking.event/00000" + k for k in "01"]
    np.testing.assert_array_equal(lim[0][1], [[1.0, 1.5], [2.0, 2.0]])
    for path, fam in ((tmp_path / "absent.json", "stark.tracking.event"),
                      (_limits_file(tmp_path), "stark.tracking.proximity")):
        with pytest.raises(SystemExit) as e:
            mod.limits(str(path), fam, 5)
        assert e.value.code == 2
    assert "stsim: error:" in capsys.readouterr().err
    # the parts of one set (bayes_floor.py --first): the file split in two, given in either
    # order, reads as the whole; a task in both parts is refused, naming the second file
    whole = json.loads(_limits_file(tmp_path).read_text())
    parts = []
    for k, rec in enumerate(whole["families"]["stark.tracking.event"]["tasks"]):
        part = tmp_path / f"part{k}.json"
        part.write_text(json.dumps({**whole, "meta": {**whole["meta"], "first": k, "n": 1},
                                    "families": {"stark.tracking.event": {"summary": {}, "tasks": [rec]}}}))
        parts.append(str(part))
    pooled, seed2, steps2 = mod.limits(parts[::-1], "stark.tracking.event", 5)
    assert (seed2, steps2) == (7, 2) and sorted(pooled) == [0, 1] and pooled[1][1] is None
    np.testing.assert_array_equal(pooled[0][1], lim[0][1])
    assert mod.limits(parts, "stark.tracking.event", 1)[0].keys() == {0}      # the first n in task order
    with pytest.raises(SystemExit) as e:
        mod.limits([parts[0], parts[0]], "stark.tracking.event", 5)
    assert e.value.code == 2
    assert f"--limits {parts[0]}: stark.tracking.event's task(s) [0] are in an earlier file too" \
        in capsys.readouterr().err
    # a file of another generator version: its task ids are not the generated ones (as
    # perf/refit_accuracy.py and perf/limit_frontier.py check)
    path = _limits_file(tmp_path)
    path.write_text(path.read_text().replace("event/000001", "event/000009"))
    with pytest.raises(SystemExit) as e:
        mod.limits(str(path), "stark.tracking.event", 5)
    assert e.value.code == 2
    assert "tasks ['1: stark-tier1/stark.tracking.event/000009 (generated stark-tier1/stark.tracking.event/000001)']" \
        " are not this run's" in capsys.readouterr().err
    # ids carry only the family and the index: a generator that draws other trajectories under
    # the same ids shows in the gold answers (a saved file with one gold x moved by 0.01)
    data = json.loads(_limits_file(tmp_path).read_text())
    data["families"]["stark.tracking.event"]["tasks"][0]["gold"][1][0] += 0.01
    path.write_text(json.dumps(data))
    with pytest.raises(SystemExit) as e:
        mod.limits(str(path), "stark.tracking.event", 5)
    assert e.value.code == 2
    assert _load("refit_accuracy").main(["--family", "stark.tracking.event", "--n", "2", "--seed", "7",
                                         "--limits", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("tasks ['0: stark-tier1/stark.tracking.event/000000 (gold answers up to 0.01 from the "
                     "generated ones)'] are not this run's") == 2, err


def test_limit_frontier_refuses_a_missing_limits_file_and_scores_like_bayes_floor(tmp_path, capsys):
    mod = _load("limit_frontier")
    common = _load("_common")                            # the loader limit_frontier reads its files with
    with pytest.raises(SystemExit) as e:
        common.load_limits(str(tmp_path / "absent.json"))
    assert e.value.code == 2 and "never recomputes" in capsys.readouterr().err
    assert common.load_limits(str(_limits_file(tmp_path)))["meta"]["seed"] == 7
    # --limits takes the parts of one set: a second part of another suite seed, or a task in
    # both parts, is refused with exit 2 before anything is scored
    import json
    other = json.loads(_limits_file(tmp_path).read_text())
    other["meta"]["seed"] = 5
    (tmp_path / "seed5.json").write_text(json.dumps(other))
    first = str(_limits_file(tmp_path))
    assert mod.main(["--limits", first, str(tmp_path / "seed5.json"), "--png", str(tmp_path / "f.png")]) == 2
    assert "holds suite seed 5's tasks" in capsys.readouterr().err
    assert mod.main(["--limits", first, first, "--png", str(tmp_path / "f.png")]) == 2
    assert "stark.tracking.event's task(s) [0, 1] are in an earlier file too" in capsys.readouterr().err
    assert mod.main(["--limits", str(tmp_path / "absent.json"), "--png", str(tmp_path / "f.png")]) == 2
    assert not (tmp_path / "f.png").exists()
    # per-item errors: Euclidean for points, |dt| for times, the [x, y, t] norm for x-y-t
    assert mod._errs("point", [[3.0, 4.0]], [[0.0, 0.0]]) == [5.0]
    assert mod._errs("time", [1.5, 2.0], [1.0, 2.5]) == [0.5, 0.5]
    assert mod._errs("vector", [[1.0, 2.0, 2.0]], [[0.0, 0.0, 0.0]]) == [3.0]
    assert mod._errs("point", [[np.nan, 0.0]], [[0.0, 0.0]]) == [float("inf")]   # a missing answer


def test_one_per_item_error_for_every_perf_script():
    """x-y-t is scored with its time by every script (pf_vs_limit and pf_accuracy scored the
    position only): an answer off by (dx, dy, dt) = (0, 3, 4) is 5 units off, not 3."""
    common = _load("_common")
    gold = [[1.0, 1.0, 2.0]]
    np.testing.assert_array_equal(common.item_errors("vector", [[1.0, 4.0, 6.0]], gold), [5.0])
    assert common.item_errors("point", [None, [4.0, 5.0]], [[0.0, 0.0], [1.0, 1.0]]).tolist() == [np.inf, 5.0]
    assert common.item_errors("time", np.array([2.0, np.inf]), [2.5, 1.0]).tolist() == [0.5, np.inf]
    with pytest.raises(ValueError, match="2 estimates against 1"):
        common.item_errors("time", [1.0, 2.0], [1.0])
    # an estimate not of its gold's shape is named, not an IndexError / TypeError from inside
    # the format, nor (a third coordinate against a point) silently scored by its first two
    for est, gold, fmt, msg in (([[1.0, 2.0], [1.0]], [[0.0, 0.0]] * 2, "point", "point estimate 1 is of shape (1,)"),
                                ([[1.0, 2.0, 3.0]], [[0.0, 0.0]], "point", "shape (3,); its gold answer has shape (2,)"),
                                ([[1.0, 2.0]], [1.0], "time", "time estimate 0 is of shape (2,); its gold answer has shape ()"),
                                ([2.0, [[1.0, 2.0], 3.0]], [1.0, 1.0], "time", "time estimate 1 is [[1.0, 2.0], 3.0] (not an")):
        with pytest.raises(ValueError, match=re.escape(msg)):
            common.item_errors(fmt, est, gold)
    pf = _load("pf_vs_limit")

    class Step:
        def __init__(self, answer):
            self.answer = answer

    class Task:
        answer_format = "vector"
        steps = [Step([1.0, 1.0, 2.0]), Step([0.0, 0.0, 0.0])]
    np.testing.assert_allclose(pf._errors(Task, [[1.0, 4.0, 6.0], [0.0, 0.0, 0.5]], 2), [5.0, 0.5])
    bf = _load("bayes_floor")
    assert bf._err("vector", [1.0, 4.0, 6.0], [1.0, 1.0, 2.0]) == 5.0


def test_timed_each_warms_up_once_and_times_each_call():
    common = _load("_common")
    calls = []
    out, each = common.timed_each(lambda x: calls.append(x) or 2 * x, [3, 4, 5])
    assert out == [6, 8, 10] and calls == [3, 3, 4, 5]   # one untimed warm-up on the first
    assert each.shape == (3,) and np.all(each >= 0)
    calls.clear()
    common.timed_each(calls.append, [1], warmup=False)
    assert calls == [1]


def test_round_ratios_use_the_reference_times_on_either_side_of_each_round():
    """Hand-derived: rounds timed 10 and 20 ms between reference times 100, 120 and 80 ms have
    references 110 and 100, ratios 11 and 5; a reference count that does not bracket the rounds
    is refused."""
    common = _load("_common")
    np.testing.assert_allclose(common.round_ratios([100.0, 120.0, 80.0], [10.0, 20.0]), [11.0, 5.0])
    with pytest.raises(ValueError, match="2 rounds need 3 reference times, got 2"):
        common.round_ratios([100.0, 120.0], [10.0, 20.0])


def test_timed_rounds_bracket_every_round_by_the_references():
    """Two rounds of two runs between one reference: the call order is ref, a, b, ref, a, b, ref,
    and each list holds what its callable returned, in that order."""
    common = _load("_common")
    calls = []

    def rec(name, value):
        return lambda: calls.append(name) or value
    ref_times, times = common.timed_rounds({"ref": rec("ref", 100.0)},
                                           {"a": rec("a", 10.0), "b": rec("b", 20.0)}, 2)
    assert calls == ["ref", "a", "b", "ref", "a", "b", "ref"]
    assert ref_times == {"ref": [100.0, 100.0, 100.0]} and times == {"a": [10.0, 10.0], "b": [20.0, 20.0]}
    np.testing.assert_allclose(common.round_ratios(ref_times["ref"], times["b"]), [5.0, 5.0])


def test_the_limits_loader_refuses_absent_unreadable_and_other_seed_files(tmp_path, capsys):
    common = _load("_common")
    path = _limits_file(tmp_path)
    assert common.load_limits(str(path), seed=7)["meta"]["steps"] == 2
    for bad, kw, msg in ((tmp_path / "absent.json", {}, "never recomputes the limit"),
                         (path, {"seed": 11}, "holds suite seed 7's tasks; pass --seed 7")):
        with pytest.raises(SystemExit) as e:
            common.load_limits(str(bad), **kw)
        assert e.value.code == 2 and msg in capsys.readouterr().err
    for text in ("{not json", '{"meta": {"seed": 7}, "families": {}}', '{"meta": {"seed": 7, "steps": 1}}'):
        path.write_text(text)
        with pytest.raises(SystemExit) as e:
            common.load_limits(str(path))
        assert e.value.code == 2 and "not a readable bayes_floor --save file" in capsys.readouterr().err


def test_refit_accuracy_refuses_limits_of_another_seed(tmp_path, capsys):
    """The ratio to the limit compares the same tasks only: a limits file of suite seed 7 with
    --seed 11 (the default was 7 whatever the file held) is exit 2, naming the seed to pass;
    a file that is not a bayes_floor --save file is exit 2 too."""
    import json
    mod = _load("refit_accuracy")
    path = tmp_path / "limits.json"
    path.write_text(json.dumps({"meta": {"seed": 7, "steps": 10}, "families": {}}))
    assert mod.main(["--family", "stark.tracking.range", "--n", "1", "--seed", "11", "--limits", str(path)]) == 2
    assert "holds suite seed 7's tasks; pass --seed 7" in capsys.readouterr().err
    path.write_text("{}")
    assert mod.main(["--family", "stark.tracking.range", "--n", "1", "--limits", str(path)]) == 2
    assert "not a readable bayes_floor --save file" in capsys.readouterr().err


def test_refit_accuracy_pools_the_parts_of_one_limit_set(tmp_path, capsys):
    """``--limits A B``: parts of one set (``perf/bayes_floor.py --first``) are scored as one.
    Event tasks 0 and 1 of suite seed 7 in two files, each limit 0.1 off the gold in x at both
    steps: 4 items, all 0.1 off, so the pooled limit is 0.1 on 2 tasks.  A task in both files,
    files of different steps or of another suite seed: exit 2, naming the file."""
    import json
    from stsim.registry import generate_task
    fam = "stark.tracking.event"
    mod = _load("refit_accuracy")
    paths = []
    for i in (0, 1):
        task = generate_task(fam, i, suite="stark-tier1", suite_seed=7)
        gold = [list(map(float, st.answer)) for st in task.steps[:2]]
        rec = {"index": i, "id": task.id, "lost": False, "gold": gold, "limit": [[x + 0.1, y] for x, y in gold]}
        path = tmp_path / f"part{i}.json"
        path.write_text(json.dumps({"meta": {"seed": 7, "first": i, "steps": 2, "n": 1},
                                    "families": {fam: {"summary": {}, "tasks": [rec]}}}))
        paths.append(str(path))
    pooled = mod.limit_set(paths[::-1], 7)[0]
    assert [t["index"] for t in pooled[fam]["tasks"]] == [0, 1]
    assert mod.main(["--family", fam, "--n", "2", "--limits", *paths]) == 0
    assert re.search(r"limit 0\.1000 over 2 steps on 2 tasks", capsys.readouterr().out)
    assert mod.main(["--family", fam, "--n", "2", "--limits", paths[0], paths[0]]) == 2
    assert f"--limits {paths[0]}: {fam}'s task(s) [0] are in an earlier file too" in capsys.readouterr().err
    other = json.loads(Path(paths[1]).read_text())
    other["meta"]["steps"] = 3
    Path(paths[1]).write_text(json.dumps(other))
    assert mod.main(["--family", fam, "--n", "2", "--limits", *paths]) == 2
    assert f"--limits {paths[1]} scores 3 steps, {paths[0]} 2: pool only parts of one set" in capsys.readouterr().err
    other["meta"].update(steps=2, seed=5)
    Path(paths[1]).write_text(json.dumps(other))
    assert mod.main(["--family", fam, "--n", "2", "--limits", *paths]) == 2
    assert "holds suite seed 5's tasks; pass --seed 5" in capsys.readouterr().err


def test_refit_accuracy_filter_seeds_score_other_draws_of_the_default(tmp_path, capsys):
    """``--filter-seeds``: seed 0 is the default baseline's own answers (not scored twice),
    another seed is another draw of the same tracker (different answers), and with limits the
    spread of the ratio over the draws is printed; the limit's runs are scored on their own
    only when the file holds them."""
    from stsim.baselines import BASELINES
    from stsim.baselines.stark_tier1 import default_track
    from stsim.registry import generate_task
    fam = "stark.tracking.event"
    task = generate_task(fam, 5, suite="stark-tier1", suite_seed=7)   # tasks 0-4: the same answers in both draws
    own = default_track(task, 0)[0]                       # each draw run once (about 50 ms)
    np.testing.assert_allclose(own, [a.value for a in BASELINES[fam](task)])
    assert np.abs(default_track(task, 1)[0] - own).max() > 1e-6
    mod = _load("refit_accuracy")
    assert mod.main(["--family", fam, "--n", "6", "--limits", str(_limits_file(tmp_path)),
                     "--filter-seeds", "0", "1"]) == 0
    out = capsys.readouterr().out
    assert "seed 0" not in out and out.count("seed 1 ") == 2      # its row, and in the limit line
    m = re.search(r"default over 2 filter draws: mean ([\d.]+)x \(from ([\d.]+)x to ([\d.]+)x\)", out)
    assert m and float(m[2]) <= float(m[1]) <= float(m[3])
    # both draws scored (since session 28 the smoother answers event's later steps the refit
    # leaves, and the draws' errors agree to 4 decimals: their answers differ, asserted above)
    rows = dict(re.findall(r"(default|seed 1) +([\d.]+ / [\d.]+)", out))
    assert set(rows) == {"default", "seed 1"}
    assert "the limit's runs on their own" not in out
    assert "with the tasks drawn again" not in out           # one task with a limit: no interval
    for bad, why in (("-1", "must be at least 0, got -1"), ("x", "expected an integer, got 'x'")):
        with pytest.raises(SystemExit) as e:      # numpy takes no negative seed: refused up front
            mod.main(["--family", fam, "--n", "1", "--filter-seeds", bad])
        assert e.value.code == 2
        assert f"argument --filter-seeds: {why}" in capsys.readouterr().err


def test_refit_accuracy_scores_each_saved_run_of_the_limit(tmp_path, capsys):
    """A limits file with ``limit_runs`` (``perf/bayes_floor.py --runs K``) has each run scored
    on its own; an older file's ``limit_run1`` / ``limit_run2`` the same way; a run lost on
    any task is left out.  Task 0's gold (its first two steps) with a run 0.3 off on one step
    and another exact: trimmed RMSE over two items (no trimming at n = 2)."""
    import json
    from stsim.registry import generate_task
    fam = "stark.tracking.event"
    task = generate_task(fam, 0, suite="stark-tier1", suite_seed=7)
    gold = [list(map(float, st.answer)) for st in task.steps[:2]]
    off = [[gold[0][0] + 0.3, gold[0][1]], gold[1]]
    half = [[gold[0][0] + 0.15, gold[0][1]], gold[1]]        # the runs' mean
    base = {"index": 0, "id": task.id, "lost": False, "gold": gold, "limit": half}
    mod = _load("refit_accuracy")
    for extra, want in (({"limit_runs": [off, gold, None]}, [math.sqrt(0.09 / 2), 0.0]),
                        ({"limit_run1": off, "limit_run2": gold}, [math.sqrt(0.09 / 2), 0.0])):
        path = tmp_path / "limits.json"
        path.write_text(json.dumps({"meta": {"seed": 7, "steps": 2, "n": 1},
                                    "families": {fam: {"summary": {}, "tasks": [{**base, **extra}]}}}))
        assert mod.main(["--family", fam, "--n", "1", "--limits", str(path)]) == 0
        m = re.search(r"the limit's runs on their own: (.*)", capsys.readouterr().out)
        assert m and [float(x) for x in m[1].split(", ")] == pytest.approx(want, abs=1e-4)


def test_a_limit_with_zero_error_gives_no_ratio_instead_of_dividing_by_zero(tmp_path, capsys):
    """A limits file whose limit answers equal the gold (trimmed RMSE 0: a degenerate file)
    has no ratio: ``perf/refit_accuracy.py`` prints ``nan`` and exits 0 instead of raising
    ``ZeroDivisionError``; :func:`_common.ratio_to_limit` is the one place the ratio is taken
    (``perf/bayes_floor.py`` and ``perf/limit_frontier.py`` too), and a NaN ratio fails a
    ``<=`` target check."""
    import json
    from stsim.registry import generate_task
    common = _load("_common")
    assert common.ratio_to_limit(0.3, 0.2) == pytest.approx(1.5)
    assert math.isnan(common.ratio_to_limit(0.3, 0.0)) and not common.ratio_to_limit(0.0, 0.0) <= 1.1
    fam = "stark.tracking.event"
    task = generate_task(fam, 0, suite="stark-tier1", suite_seed=7)
    gold = [list(map(float, st.answer)) for st in task.steps[:2]]
    path = tmp_path / "limits.json"
    path.write_text(json.dumps({"meta": {"seed": 7, "steps": 2, "n": 1}, "families": {fam: {
        "summary": {}, "tasks": [{"index": 0, "id": task.id, "lost": False, "gold": gold, "limit": gold}]}}}))
    mod = _load("refit_accuracy")
    assert mod.main(["--family", fam, "--n", "1", "--limits", str(path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"limit 0\.0000 over 2 steps on 1 tasks: default [\d.]+ \(nanx\)", out), out


def test_bayes_floor_monte_carlo_terms_over_k_runs():
    """``perf/bayes_floor.py``'s run spread: with two runs ``agree`` is their RMS distance and
    the Monte-Carlo correction removes ``|a - b|^2 / 4``; with three runs the sample variance
    (ddof 1) over ``K`` (hand-derived: runs 0, 1, 2 on one item, variance 1, mean 1, gold 0:
    ``sqrt(1 - 1/3)``; positions sum the coordinates' variances)."""
    bf = _load("bayes_floor")
    a, b = np.array([[0.0, 0.0], [1.0, 1.0]]), np.array([[3.0, 4.0], [1.0, 1.0]])
    assert bf._agree([a, b]) == pytest.approx(math.sqrt((25 + 0) / 2))
    m, g = (a + b) / 2, np.zeros((2, 2))
    done = [{"runs": [a.tolist(), b.tolist(), None], "limit": m, "gold": g}]
    mse = np.mean(np.sum((m - g) ** 2, axis=1))
    assert bf._mc_corrected(done) == pytest.approx(math.sqrt(mse - np.mean([25 / 4, 0.0])))
    three = [np.array([0.0]), np.array([1.0]), np.array([2.0])]
    assert bf._run_variance(three) == pytest.approx([1.0])
    assert bf._agree(three) == pytest.approx(math.sqrt(2.0))
    assert bf._mc_corrected([{"runs": three, "limit": np.array([1.0]), "gold": np.array([0.0])}]) == \
        pytest.approx(math.sqrt(1 - 1 / 3))
    assert math.isnan(bf._mc_corrected([{"runs": [a.tolist(), None], "limit": a, "gold": g}]))


def test_bayes_floor_first_runs_a_later_part_of_a_set(tmp_path, monkeypatch, capsys):
    """``--first K --n N``: tasks K..K+N-1, saved with ``meta.first`` (the sampler stubbed: each
    task reported lost, the indices it was asked for recorded); a negative ``--first`` is exit 2."""
    import json
    bf = _load("bayes_floor")
    asked = []

    def lost(job):
        asked.append(job[1])
        return {"lost": True, "id": f"t{job[1]}", "format": "position", "t_ours": 0.0, "t_limit": 0.0,
                "c_limit": 0.0, "index": job[1], "ss": {}, "errors": []}
    monkeypatch.setattr(bf, "_track_task", lost)
    path = tmp_path / "part.json"
    assert bf.main(["--family", "stark.tracking.event", "--n", "2", "--first", "10", "--seed", "5",
                    "--workers", "1", "--save", str(path)]) == 1       # no limit measured: MISSED
    assert asked == [10, 11]
    data = json.loads(path.read_text())
    assert data["meta"]["first"] == 10
    assert [t["index"] for t in data["families"]["stark.tracking.event"]["tasks"]] == [10, 11]
    assert "(from task 10)" in capsys.readouterr().out
    with pytest.raises(SystemExit) as e:
        bf.main(["--family", "stark.tracking.event", "--first", "-1"])
    assert e.value.code == 2


def test_pf_vs_limit_default_row_is_the_default_baseline():
    """``perf/pf_vs_limit.py``'s "default" row scores the family's default tracker itself (for
    event tracking: filter, smoother and refit; before 2026-12-01 it left the smoother out)."""
    from stsim.baselines import BASELINES
    from stsim.registry import generate_task
    from stsim.scoring.metrics import trimmed_rmse
    pf = _load("pf_vs_limit")
    fam = "stark.tracking.event"
    task = generate_task(fam, 0, suite="stark-tier1", suite_seed=11)
    gold = np.array([s.answer for s in task.steps], float)
    got = pf.score({0: (task, gold)}, len(task.steps), 1, {})
    want = pf._errors(task, [a.value for a in BASELINES[fam](task)], len(task.steps))
    assert got["ours"] == pytest.approx(trimmed_rmse(np.asarray(want)), rel=1e-12)
    assert got["lim"] == 0.0


def test_ratio_interval_is_a_paired_bootstrap_over_tasks():
    """Every task 2x its limit: every resample gives 2 (a degenerate interval).  One task of four
    holding all the excess (error 3 against 1): (3/4)^4 = 32 % of resamples leave it out and give
    exactly 1, so the 5th percentile is 1; the 95th is above the ratio on the tasks as drawn.
    Fewer than 2 tasks: no interval."""
    common = _load("_common")
    limit = np.ones((4, 10))
    lo, hi = common.ratio_interval([2 * limit, 2 * limit], limit)
    assert lo == pytest.approx(2.0) and hi == pytest.approx(2.0)
    ours = limit.copy()
    ours[2] = 3.0
    from stsim.scoring.metrics import trimmed_rmse
    point = common.ratio_to_limit(trimmed_rmse(ours.ravel()), trimmed_rmse(limit.ravel()))
    lo, hi = common.ratio_interval([ours], limit)
    assert lo == 1.0 and hi > point > 1.0
    assert common.ratio_interval([ours], limit) == (lo, hi)           # deterministic
    assert all(np.isnan(common.ratio_interval([ours[:1]], limit[:1])))


def test_excess_by_task_finds_the_tasks_that_hold_the_excess():
    """Four tasks of ten items, the limit's error 1 everywhere; one draw equal to it except task 2
    (error 3 on every item) and task 0 (error 1.5): 3 ** 2 is the largest share of the excess, so
    task 2 goes first (without it the draw is 1.5x only on task 0), then task 0 (ratio 1)."""
    common = _load("_common")
    limit = np.ones((4, 10))
    ours = limit.copy()
    ours[2] = 3.0
    ours[0] = 1.5
    steps = common.excess_by_task([ours], limit, drop=2)
    assert [rm for rm, _ in steps] == [[2], [2, 0]]
    assert steps[0][1] > 1.0 and steps[1][1] == 1.0
    # over two draws the mean of their ratios; never more than T - 1 removed
    assert len(common.excess_by_task([ours, limit], limit, drop=9)) == 3
    assert common.excess_by_task([ours], limit[:1], drop=2) == []


def test_the_saved_limits_are_of_the_tasks_the_generator_draws_today():
    """perf/limits/ keeps ``bayes_floor.py --save`` files (minutes to hours of CPU each) for
    trackers to be scored against at once.  Each must still be of the generator's tasks: its
    suite seed, every task's id (a later part of a set, ``--first K``, is named for its tasks),
    and its gold answers equal to the generated ones to the 6
    decimals they were saved with; the README lists every file with its sha256.  A change to the
    generator or the trajectory prior fails here: run the README's command again."""
    import hashlib
    import json
    from stsim.registry import generate_task
    folder = PERF / "limits"
    files = sorted(folder.glob("*.json"))
    assert len(files) >= 3
    readme = (folder / "README.md").read_text(encoding="utf-8")
    for path in files:
        assert hashlib.sha256(path.read_bytes()).hexdigest() in readme and f"`{path.name}`" in readme, path.name
        data = json.loads(path.read_text())
        seed = data["meta"]["seed"]
        (family, rec), = data["families"].items()
        first, n = data["meta"].get("first", 0), data["meta"]["n"]     # a later part: bayes_floor.py --first
        assert path.name == (f"{family}.seed{seed}.json" if not first
                             else f"{family}.seed{seed}.tasks{first}-{first + n - 1}.json"), path.name
        assert [r["index"] for r in rec["tasks"]] == list(range(first, first + n))
        for r in rec["tasks"]:
            task = generate_task(family, r["index"], suite=data["meta"]["suite"], suite_seed=seed)
            assert r["id"] == task.id, (path.name, r["index"])
            if r["lost"]:                      # a task the sampler lost keeps no gold or limit
                assert r["gold"] is None and r["limit"] is None
                continue
            gold = np.array([s.answer for s in task.steps][:len(r["gold"])], float)
            assert len(r["gold"]) == min(len(task.steps), data["meta"]["steps"]), (path.name, r["index"])
            assert np.abs(np.array(r["gold"], float) - gold).max() < 5e-7, (path.name, r["index"])


def test_limit_set_takes_the_first_files_seed_and_names_a_part_of_another(tmp_path, capsys):
    """``_common.limit_set``: the pooled records with the files' suite seed and steps (the first
    file's when no seed is asked for); a family with no per-task records (a localisation
    family's summary) pools to none; a part of another suite seed is refused naming both files,
    without suggesting a ``--seed`` the scripts that read the first file's seed do not have."""
    import json
    common = _load("_common")
    whole = json.loads(_limits_file(tmp_path).read_text())
    whole["families"]["stark.localization.range"] = {"summary": {}}
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(whole))
    fams, seed, steps = common.limit_set([str(a)])
    assert (seed, steps) == (7, 2) and fams["stark.localization.range"]["tasks"] == []
    assert [t["index"] for t in fams["stark.tracking.event"]["tasks"]] == [0, 1]
    whole["meta"]["seed"] = 5
    b.write_text(json.dumps(whole))
    with pytest.raises(SystemExit) as e:
        common.limit_set([str(a), str(b)])
    err = capsys.readouterr().err
    assert e.value.code == 2 and f"--limits {b} holds suite seed 5's tasks, {a} 7's: pool only parts of one set" in err
    assert "--seed" not in err
