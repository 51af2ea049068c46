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
    assert (r["n_b"], r["failures_b"]) == (6, 2)
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b")]) == 0
    assert "-50.0%" in capsys.readouterr().out
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "nope")]) == 2


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
    assert f"{tmp_path / 'empty'} has no scored family" in capsys.readouterr().err
