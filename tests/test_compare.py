"""``stsim compare``: STARK §4.4's relative change in 25 %-trimmed RMSE, by hand."""
import json
import math

import pytest

from stsim.scoring.compare import compare_runs
from stsim.cli import main


def _scores(path, fam, errors, failures=0):
    path.mkdir()
    rows = [{"task_id": f"x/{i}", "family": fam, "step": None, "status": "ok", "error": e}
            for i, e in enumerate(errors)]
    rows += [{"task_id": f"y/{i}", "family": fam, "step": None, "status": "timeout", "error": None}
             for i in range(failures)]
    (path / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_relative_change_by_hand(tmp_path, capsys):
    # A: [1, 2, 3, 4] -> trimmed [2, 3] -> sqrt(6.5); B: [0.5, 1, 1.5, 100] -> [1, 1.5] -> sqrt(1.625)
    _scores(tmp_path / "a", "f", [4, 1, 3, 2])
    _scores(tmp_path / "b", "f", [100, 1.5, 0.5, 1], failures=2)
    r = compare_runs(tmp_path / "a", tmp_path / "b")["f"]
    assert r["trimmed_rmse_a"] == pytest.approx(math.sqrt(6.5))
    assert r["trimmed_rmse_b"] == pytest.approx(math.sqrt(1.625))
    assert r["relative_change"] == pytest.approx(-0.5)  # sqrt(1.625 / 6.5) = 0.5
    assert (r["n_b"], r["n_common"], r["failures_b"]) == (6, 4, 0)  # B's failures: items A lacks
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "-50.0%" in capsys.readouterr().out
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "nope")]) == 2
    assert f"{tmp_path / 'nope'}: no such run folder or scores.jsonl" in capsys.readouterr().err


def test_runs_without_a_common_family_are_an_error(tmp_path, capsys):
    _scores(tmp_path / "a", "fam.one", [1.0])
    _scores(tmp_path / "b", "fam.two", [2.0])
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "scores.jsonl").write_text("")
    for extra in ([], ["--json"]):
        assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), *extra]) == 2
        cap = capsys.readouterr()
        assert cap.out == ""
        assert f"{tmp_path / 'a'} has fam.one; {tmp_path / 'b'} has fam.two" in cap.err
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "empty")]) == 2
    assert f"{tmp_path / 'empty' / 'scores.jsonl'}: contains no scores (the file is empty or blank)" \
        in capsys.readouterr().err


def _cat(path, correct, seed=0, prefix="x"):
    path.mkdir()
    rows = [{"task_id": f"{prefix}/{i}", "family": "c", "step": None, "status": "ok", "correct": c, "error": None}
            for i, c in enumerate(correct)]
    (path / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (path / "summary.json").write_text(json.dumps({"suite": "s", "seed": seed}))


def test_categorical_families_get_accuracy_delta_with_a_paired_ci(tmp_path, capsys):
    a = [1, 1, 1, 1, 1, 0, 0, 0, 0, 0]
    b = [1, 1, 1, 1, 1, 1, 1, 1, 0, 0]  # B fixes three items and breaks none
    _cat(tmp_path / "a", a)
    _cat(tmp_path / "b", b)
    r = compare_runs(tmp_path / "a", tmp_path / "b")["c"]
    assert (r["accuracy_a"], r["accuracy_b"], r["accuracy_delta"]) == (0.5, 0.8, pytest.approx(0.3))
    lo, hi = r["ci95"]
    # paired: every resample's difference is >= 0 (B never worse on an item); unpaired it would not be
    assert 0.0 <= lo <= 0.3 <= hi <= 0.7
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert "+0.3000" in out and "B - A" in out and "paired" in out


def test_identical_runs_have_a_zero_width_interval(tmp_path):
    _scores(tmp_path / "a", "f", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    _scores(tmp_path / "b", "f", [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    r = compare_runs(tmp_path / "a", tmp_path / "b")["f"]
    assert r["relative_change"] == 0.0 and r["ci95"] == [0.0, 0.0]


def test_runs_of_different_seeds_or_task_sets_are_named(tmp_path, capsys):
    _cat(tmp_path / "a", [1, 0, 1, 0], seed=0)
    _cat(tmp_path / "b", [1, 1, 1, 0, 1], seed=1)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    err = capsys.readouterr().err
    assert "the runs differ in seed: A 0, B 1" in err
    assert "c: 0 item(s) only in A, 1 only in B (e.g. x/4); compared on the 4 common item(s)" in err


@pytest.mark.parametrize("name", ["summary.json", "answers.jsonl"])
def test_another_file_of_a_run_folder_points_to_the_scores(tmp_path, capsys, name):
    """`stsim compare RUN/summary.json RUN2` used to say 'not valid JSON (... column 2)' (a
    pretty-printed JSON read as JSONL): now it names the folder and its scores.jsonl."""
    _scores(tmp_path / "a", "f", [1.0, 2.0])
    _scores(tmp_path / "b", "f", [1.0, 2.0])
    (tmp_path / "a" / name).write_text('{\n  "suite": "quickstart"\n}\n')
    assert main(["compare", str(tmp_path / "a" / name), str(tmp_path / "b")]) == 2
    a = tmp_path / "a"
    assert (f"stsim: error: {a / name}: is the run's {name}, not its scores; give the run folder {a} "
            f"or {a / 'scores.jsonl'}") in capsys.readouterr().err
    assert main(["compare", str(a / "scores.jsonl"), str(tmp_path / "b")]) == 0


def test_an_ok_item_stored_without_error_counts_as_infinite(tmp_path):
    # scores.jsonl is strict JSON: an answer with Infinity scores ok with "error": null.  It is
    # the worst error, not a missing one: B = [inf, 1.5, 0.5, 1] -> 25 % trimmed [1, 1.5] ->
    # sqrt(1.625), exactly as with 100 in its place (dropping it would give 3 items, none trimmed).
    _scores(tmp_path / "a", "f", [4, 1, 3, 2])
    _scores(tmp_path / "b", "f", [None, 1.5, 0.5, 1])
    r = compare_runs(tmp_path / "a", tmp_path / "b")["f"]
    assert r["trimmed_rmse_b"] == pytest.approx(math.sqrt(1.625))
    assert r["relative_change"] == pytest.approx(-0.5)
    assert r["failures_b"] == 0



def test_runs_with_no_item_in_common_give_no_change(tmp_path, capsys):
    """Two runs of one family on other tasks (another suite's ids) warned '0 common item(s)'
    but printed a change (+33.6%) of errors on different questions.  Now the change (numeric)
    and B - A (categorical) are n/c, null in --json, with the warning saying why; exit 0 as
    for every other mismatch warning (a family both runs share does compare).  The figures
    are over the common items, so with none they are '-' (null), each run's count kept."""
    _scores(tmp_path / "a", "f", [1.0, 2.0, 3.0])
    rows = [{"task_id": f"other/{i}", "family": "f", "step": None, "status": "ok", "error": e}
            for i, e in enumerate([2.0, 3.0, 4.0])]
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    _cat(tmp_path / "ca", [1, 0, 1])
    _cat(tmp_path / "cb", [1, 1, 1], prefix="other")
    for a, b, row_start, kind in (("a", "b", "f ", "numeric"), ("ca", "cb", "c ", "categorical")):
        argv = ["compare", str(tmp_path / a), str(tmp_path / b)]
        assert main(argv) == 0
        out, err = capsys.readouterr()
        row = next(ln for ln in out.splitlines() if ln.startswith(row_start)).split()
        assert row[1:] == ["3", "3", "0", "-", "-", "-", "-", "n/c", "-"], row
        assert "n/c: not comparable, the two runs have no item (task and step) in common in that family." in out
        assert (f"{row_start.strip()}: 3 item(s) only in A, 3 only in B (e.g. other/0); no item in common, so no "
                "change is given (n/c: not comparable)") in err
        assert main([*argv, "--json"]) == 0
        r = json.loads(capsys.readouterr().out)[row_start.strip()]
        assert r["kind"] == kind and (r["n_a"], r["n_b"], r["n_common"]) == (3, 3, 0) and r["ci95"] is None
        assert r["failures_a"] is None and r["failures_b"] is None
        keys = ("trimmed_rmse_a", "trimmed_rmse_b", "relative_change") if kind == "numeric" else \
            ("accuracy_a", "accuracy_b", "accuracy_delta")
        assert [r[k] for k in keys] == [None, None, None]


def _rows(path, rows):
    path.mkdir()
    (path / "scores.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _num(task_id, error, status="ok"):
    return {"task_id": task_id, "family": "f", "step": None, "status": status, "error": error}


def _acc(task_id, correct):
    return {"task_id": task_id, "family": "c", "step": None, "status": "ok", "correct": correct, "error": None}


def test_every_figure_is_over_the_items_both_runs_scored(tmp_path, capsys):
    """Two runs sharing only some items: RMSE, failures and accuracy were taken over each run's
    own items (a run with more tasks, or an item only one run has, moved its side), so the
    change compared different questions: `stsim compare` of a quickstart --n 4 run with the
    same solver's --n 8 run printed -46.2% with a paired CI of [+0.0%, +0.0%].  Now every
    compared figure is over the common items and the table says how many there are."""
    # common x/0..3: A [4, 1, 3, 2] -> 25 % trimmed [2, 3] -> sqrt(6.5); B [100, 1.5, 0.5, 1] ->
    # [1, 1.5] -> sqrt(1.625): change -50 % (as test_relative_change_by_hand).  Only in A: a
    # huge error; only in B: four large errors and a timeout; none of them may count.  both/0
    # failed in both runs: a common failure, counted on each side.
    _rows(tmp_path / "a", [_num(f"x/{i}", e) for i, e in enumerate([4, 1, 3, 2])] + [_num("a-only/0", 1000.0)]
          + [_num("both/0", None, "timeout")]
          + [_acc(f"q/{i}", c) for i, c in enumerate([1, 0, 1, 0])] + [_acc("a-only/1", False)])
    _rows(tmp_path / "b", [_num(f"x/{i}", e) for i, e in enumerate([100, 1.5, 0.5, 1])] + [_num("both/0", None, "crashed")]
          + [_num(f"b-only/{i}", e) for i, e in enumerate([50.0, 60.0, 70.0, 80.0])] + [_num("b-only/9", None, "timeout")]
          + [_acc(f"q/{i}", c) for i, c in enumerate([1, 0, 0, 1])] + [_acc(f"b-only/{i}", True) for i in range(4)])
    rows = compare_runs(tmp_path / "a", tmp_path / "b")
    f, c = rows["f"], rows["c"]
    assert (f["n_a"], f["n_b"], f["n_common"], f["failures_a"], f["failures_b"]) == (6, 10, 5, 1, 1)
    assert f["trimmed_rmse_a"] == pytest.approx(math.sqrt(6.5))
    assert f["trimmed_rmse_b"] == pytest.approx(math.sqrt(1.625))
    assert f["relative_change"] == pytest.approx(-0.5)
    lo, hi = f["ci95"]
    assert lo <= -0.5 <= hi
    # categorical: on q/0..3 both are right twice (A q/0, q/2; B q/0, q/3): 0.5 each, B - A = 0
    assert (c["n_a"], c["n_b"], c["n_common"]) == (5, 8, 4)
    assert (c["accuracy_a"], c["accuracy_b"], c["accuracy_delta"]) == (0.5, 0.5, 0.0)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    table = {ln.split()[0]: ln.split()[1:] for ln in out.splitlines() if ln.startswith(("f ", "c "))}
    assert table["f"] == ["6", "10", "5", "1", "1", "2.5495", "1.2748", "-50.0%", table["f"][-2], table["f"][-1]]
    assert table["c"][:8] == ["5", "8", "4", "0", "0", "0.5000", "0.5000", "+0.0000"]
    assert ("n A / n B: items (task and step) each run scored; common: items both runs scored. Every other "
            "column (fail, RMSE, change, acc, B - A, CI) is over the common items alone.") in out
