"""The command line end to end on a tiny run, and its error handling."""
import json

from stsim.cli import main


def test_run_writes_all_files_and_summary(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "2", "--out", str(out), "--quiet"]) == 0
    for name in ("tasks.jsonl", "answers.jsonl", "scores.jsonl", "summary.json"):
        assert (out / name).stat().st_size > 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["suite"] == "quickstart" and summary["seed"] == 0
    fam = summary["families"]["stark.localization.range"]
    assert set(fam) >= {"n", "trimmed_rmse", "rmse", "median_error", "failures"}
    assert fam["n"] == 2 and fam["failures"] == 0
    assert "stark.localization.range" in capsys.readouterr().out


def test_unknown_suite_is_a_clear_error(capsys):
    assert main(["run", "no-such-suite", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown suite 'no-such-suite'" in err and "Traceback" not in err


def test_list_groups_families_and_lists_them_on_request(capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "stark.tracking.*" in out and "baseline:ls" in out and "quickstart" in out
    assert main(["list", "--families", "stark.tracking.*"]) == 0
    out = capsys.readouterr().out
    assert "stark.tracking.range_bearing" in out and "stark.localization.range" not in out
    assert main(["list", "--families", "zz*"]) == 2
