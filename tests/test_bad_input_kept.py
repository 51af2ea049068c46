"""Bad input never costs what is already written, and every help page renders (found by a
bad-input pass over each entry point after the merges of 2026-11-30)."""
from __future__ import annotations

import pytest

from stsim.cli import build_parser, main


def test_every_help_page_renders(capsys):
    """argparse formats help strings with %: a bare '95% CI' made `stsim --help` crash."""
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for name in sub.choices:
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        assert exc.value.code == 0, name
    assert "95% CI" in capsys.readouterr().out


@pytest.mark.parametrize("bad", [["--family", "nosuch.*"], ["--data", "/nonexistent"]])
def test_generate_keeps_the_old_file_when_the_input_is_bad(tmp_path, capsys, bad):
    out = tmp_path / "existing.jsonl"
    out.write_text("precious 1\nprecious 2\n")
    suite = "stark-published" if "--data" in bad else "quickstart"
    assert main(["generate", suite, *bad, "-o", str(out)]) == 2
    assert out.read_text() == "precious 1\nprecious 2\n"
    assert "stsim: error:" in capsys.readouterr().err


def test_score_refuses_to_overwrite_a_run_folder(tmp_path, capsys):
    run = tmp_path / "r1"
    assert main(["run", "quickstart", "--n", "1", "--family", "stark.localization.range", "--out", str(run)]) == 0
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    answers = tmp_path / "a.jsonl"
    answers.write_text("")
    assert main(["score", str(run / "tasks.jsonl"), str(answers), "--out", str(run)]) == 2
    assert "holds a `stsim run`" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before


def test_data_given_to_a_generated_suite_is_refused(tmp_path, capsys):
    """`stsim run quickstart --data FILE` used to ignore FILE (a NaN reading in it went
    unnoticed and 140 generated tasks were solved instead): refused, and nothing is written."""
    from stsim.cli import main
    f = tmp_path / "mine.jsonl"
    f.write_text("{}\n")
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--data", str(f), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "generates its tasks and reads no --data" in err and "stark-published" in err
    assert not out.exists()
