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
    assert line == f"Wrote {out}/ (answers.jsonl, cardinal/, scores.jsonl, summary.json, tasks.jsonl)"


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


@pytest.mark.parametrize("rubric, fmt", [("stark", "point"), ("cardinal", "direction"),
                                         ("qstrbench", "relation_set")])
@pytest.mark.parametrize("text", ["I don't know.", "I don\u2019t know", "I cannot determine the direction.",
                                  "There is not enough information to tell."])
def test_one_refusal_reader_for_every_rubric(rubric, fmt, text):
    from stsim.answers import parse_answer
    a = parse_answer(text, task_id="t", step=None, answer_format=fmt, rubric=rubric)
    assert a.status == "refusal", (rubric, text, a.status, a.detail)


def test_refusal_words_do_not_hide_an_answer():
    from stsim.answers import parse_answer
    a = parse_answer("I'm not sure, but north.", task_id="t", step=None, answer_format="direction",
                     rubric="cardinal")
    assert a.status == "ok" and a.value == "north"


def test_baseline_variant_labels_only_the_families_it_ran_on(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "stark-mini", "--solver", "baseline:ls", "--family", "stark.*.range", "--out", str(out),
                 "--quiet"]) == 0
    by_family = {}
    for line in (out / "answers.jsonl").read_text().splitlines():
        a = json.loads(line)
        by_family.setdefault(a["task_id"].split("/")[1], set()).add(a["solver"])
    assert by_family["stark.localization.range"] == {"baseline:ls"}
    assert by_family["stark.tracking.range"] == {"baseline"}  # no ls variant: the default baseline ran


def test_a_family_without_any_solver_answer_has_accuracy_na(capsys):
    from stsim.records import Answer, Task
    from stsim.scoring.report import format_table, legend
    from stsim.scoring.score import score_answers, summarise
    tasks = [Task(f"t/k/{i}", "stark.knowledge.poi", "q", {}, 1, "binary", [], {}) for i in range(3)]
    answers = [Answer(t.id, None, "no_estimate", detail="needs world knowledge") for t in tasks]
    fams = summarise(score_answers(tasks, answers))
    assert fams["stark.knowledge.poi"]["accuracy"] is None
    table = format_table(fams)
    assert "n/a" in table.splitlines()[1] and "0.0000" not in table.splitlines()[1].split()[2]
    assert "accuracy n/a" in legend(fams)
    # one wrong answer among them: a real 0.0
    answers[0] = Answer(tasks[0].id, None, "ok", value=0)
    assert summarise(score_answers(tasks, answers))["stark.knowledge.poi"]["accuracy"] == 0.0


def test_zero_error_on_spatial_impute_is_explained():
    from stsim.scoring.report import legend
    fams = {"stark.field.spatial_impute": {"n": 50, "failures": 0, "trimmed_rmse": 0.0, "rmse": 0.0,
                                           "median_error": 0.0, "metric": "rmspe"}}
    note = legend(fams)
    assert "inverse-distance weighting" in note and "does not leak" in note
    assert "spatial_impute" not in legend({"stark.localization.range": {"n": 1, "failures": 0}})


def test_field_columns_say_what_they_measure_and_trims_are_named():
    from stsim.scoring.compare import format_comparison
    from stsim.scoring.report import format_table, legend
    fams = {"stark.field.temporal_impute": {"n": 2, "failures": 0, "trimmed_rmse": 0.1, "rmse": 0.1,
                                            "median_error": 0.1, "metric": "rmspe"},
            "stark.localization.range": {"n": 2, "failures": 0, "trimmed_rmse": 0.2, "rmse": 0.2,
                                         "median_error": 0.2}}
    table = format_table(fams)
    head, field, point = table.splitlines()[:3]
    assert "trim.RMSE" not in head and "trim.err" in head and "measure" in head
    assert field.split()[2] == "rel.L2" and point.split()[2] == "eucl"
    assert "rel.L2 = ||pred - gold|| / ||gold||" in legend(fams)
    rows = {"f": {"kind": "numeric", "n_a": 1, "n_b": 1, "failures_a": 0, "failures_b": 0,
                  "trimmed_rmse_a": 1.0, "trimmed_rmse_b": 1.0, "relative_change": 0.0, "ci95": None}}
    assert "RMSE t25% A" in format_comparison(rows, 0.25)
