"""Issue 13 item 5: reports say exactly what they measure (each a newcomer's finding)."""
from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from stsim.cli import main
from stsim.records import read_tasks, write_jsonl

from .conftest import shared_path

ROOT = Path(__file__).resolve().parents[1]


def test_list_families_glob_lists_only_families(capsys):
    assert main(["list", "--families", "stark.field.*"]) == 0
    out = capsys.readouterr().out
    assert "Suites:" not in out and "Solvers:" not in out
    assert sum(l.startswith("  stark.field.") for l in out.splitlines()) == 4


@pytest.mark.parametrize("cmd", ["run", "generate"])
def test_help_lists_suites(cmd, capsys):
    with pytest.raises(SystemExit):
        main([cmd, "--help"])
    out = capsys.readouterr().out
    assert "suites: " in out and "stark-published-fields" in out and "qstrbench-extended" in out


def test_calculus_gqr_help_names_the_written_paths(capsys):
    with pytest.raises(SystemExit):
        main(["calculus", "--help"])
    assert "DIR/NAME/calculus/NAME.comp" in capsys.readouterr().out


def test_pyproject_names_each_dependency_once():
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    names = [d.split(">")[0].split("=")[0].split("<")[0].strip().lower() for d in deps]
    assert len(names) == len(set(names)), names
    assert "openai" in names


def test_readme_says_where_test_data_comes_from():
    text = (ROOT / "README.md").read_text()
    assert "../shared" in text and "STSIM_SHARED" in text


def test_unknown_task_ids_are_named_with_their_lines(tmp_path, capsys):
    tasks = tmp_path / "t.jsonl"
    assert main(["generate", "stark-mini", "--family", "stark.localization.range", "-o", str(tasks)]) == 0
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"task_id": "nope/1", "value": [1, 2]}) + "\n"
                       + json.dumps({"task_id": read_tasks(tasks)[0].id, "value": [1, 2]}) + "\n")
    assert main(["score", str(tasks), str(answers)]) == 0
    err = capsys.readouterr().err
    assert "ignored 1 answer(s) whose task_id is not in the tasks file: line 1 (nope/1)" in err


def test_wrote_line_lists_every_file(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "cardinal", "--n", "1", "--out", str(out), "--quiet"]) == 0
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("Wrote "))
    assert line == f"Wrote {out}/ (answers.jsonl, cardinal/, run.json, scores.jsonl, summary.json, tasks.jsonl)"


def test_audit_lines_name_the_source(tmp_path, capsys):
    tasks = tmp_path / "t.jsonl"
    assert main(["generate", "stark-mini", "--family", "stark.localization.range", "-o", str(tasks)]) == 0
    ts = read_tasks(tasks)
    ts[0].answer = [ts[0].answer[0] + 3.0, ts[0].answer[1]]  # gold moved 3 units: readings disagree
    ts[0].meta.update(source="STARK data_final_v5/localization_range_0.01", instance=7)
    write_jsonl(tasks, ts)
    assert main(["audit", str(tasks)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {ts[0].id} [source: STARK data_final_v5/localization_range_0.01, instance 7]:" in out


def test_published_run_says_data_not_seed_and_announces_the_unpack(tmp_path, capsys):
    archive = shared_path("stark", "data_final.tar.gz")
    out = tmp_path / "run"
    assert main(["run", "stark-published", "--data", str(archive), "--n", "1", "--family",
                 "stark.localization.range", "--out", str(out), "--quiet"]) == 0
    cap = capsys.readouterr()
    head = cap.out.splitlines()[0]
    assert "seed" not in head and f"data {archive}" in head
    assert "unpacking" in cap.err and "MB" in cap.err
