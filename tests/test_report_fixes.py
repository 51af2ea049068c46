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
DEFAULTS = {"trim": 0.10, "max_steps": 10}  # the legends' settings: stsim run / score's defaults


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


def test_published_run_says_data_not_seed_and_announces_the_unpack(tmp_path, capsys, monkeypatch):
    archive = shared_path("stark", "data_final.tar.gz")
    # a cache of its own: the run's shared one may hold the unpack already (an earlier test or
    # another worker process), and only the first unpack into a cache is announced
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    out = tmp_path / "run"
    assert main(["run", "stark-published", "--data", str(archive), "--n", "1", "--family",
                 "stark.localization.range", "--out", str(out), "--quiet"]) == 0
    cap = capsys.readouterr()
    head = cap.out.splitlines()[0]
    assert "seed" not in head and f"data {archive}" in head
    assert "unpacking" in cap.err and "MB" in cap.err


def test_scalar_family_error_is_called_abs_not_eucl():
    """A numeric family answering one number (format scalar/time) reports 'abs', whatever its
    name: a plug-in family 'my.line.distance' was labelled 'eucl' (Euclidean distance of
    points) because only names containing '.temporal_' were recognised."""
    from stsim.registry import FAMILIES, Family, TaskBody
    from stsim.scoring.report import measure
    name = "test_newcomer.line.distance"
    FAMILIES[name] = Family(name, "scalar", lambda rng, cfg: TaskBody("p", {}, 0.0), {}, "test")
    try:
        assert measure(name, {"n": 1}) == "abs"
    finally:
        del FAMILIES[name]
    assert measure("stark.localization.range", {"n": 1}) == "eucl"          # point
    assert measure("stark.localization.event_xyt", {"n": 1}) == "eucl"      # vector
    assert measure("stark.temporal_localization.event", {"n": 1}) == "abs"  # time
    assert measure("stark.field.spatial_impute", {"metric": "rmspe"}) == "rel.L2"
    assert measure("unregistered.family", {"n": 1}) == "eucl"


def test_run_help_lists_the_solver_forms(capsys):
    """`stsim run --help` said only 'solver spec (default: baseline)': the choices (README's
    baseline:VARIANT, oracle, random, code:PATH, openai:MODEL) were nowhere in --help."""
    from stsim.baselines import ALTERNATIVES
    from stsim.solvers.base import SOLVERS, load_builtin_solvers
    with pytest.raises(SystemExit) as exc:
        main(["run", "--help"])
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    tail = text[text.index("solvers (--solver):"):]
    load_builtin_solvers()
    for name in SOLVERS:
        assert name in tail
    for form in ("baseline (default)", "code:PROGRAM.py|DIR|PROGRAMS.jsonl", "openai:MODEL", "oracle", "random"):
        assert form in tail, form
    variants = {v for alts in ALTERNATIVES.values() for v in alts}
    assert {"ls", "grid", "bayes", "kriging", "persistence"} <= variants
    assert "baseline:VARIANT (" + ", ".join(sorted(variants)) + ")" in tail


def test_variant_run_names_the_families_it_did_not_serve(tmp_path, capsys):
    """`stsim run quickstart --solver baseline:ls` printed every family under 'solver
    baseline:ls' although proximity and tracking have no ls variant and used their default
    baseline (only summary.json said so)."""
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--solver", "baseline:ls", "--family", "stark.localization.*",
                 "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    served = set(summary["solver_variant_families"])
    assert "stark.localization.range" in served and "stark.localization.proximity" not in served
    assert ("'baseline:ls' has no variant for 1 family (stark.localization.proximity): it was solved by "
            "the family's default baseline") in text
    assert main(["run", "quickstart", "--n", "1", "--solver", "baseline", "--family", "stark.localization.range",
                 "--out", str(tmp_path / "run2"), "--quiet"]) == 0
    assert "has no variant" not in capsys.readouterr().out


@pytest.mark.parametrize("kind", ["score", "own"])
def test_run_into_a_folder_of_files_no_run_wrote_is_refused(tmp_path, capsys, kind):
    """`stsim run --out D` where D holds `stsim score --out D`'s scores.jsonl and summary.json
    (or one's own summary.json) overwrote them, exit 0: a summary.json naming no suite was not
    taken for anything. Now exit 2, nothing touched; a folder of other files still takes a run."""
    out = tmp_path / "d"
    if kind == "score":
        run = tmp_path / "run"
        assert main(["run", "cardinal", "--n", "1", "--out", str(run), "--quiet"]) == 0
        assert main(["score", str(run / "tasks.jsonl"), str(run / "answers.jsonl"), "--out", str(out)]) == 0
        names = "scores.jsonl, summary.json"
    else:
        out.mkdir()
        (out / "summary.json").write_text('{"precious": 1}\n')
        names = "summary.json"
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    capsys.readouterr()
    assert main(["run", "cardinal", "--n", "1", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"stsim: error: --out {out}: holds {names} that no `stsim run` wrote there" in err
    # one file is 'it' (it said 'would overwrite them ... remove them' of a lone summary.json)
    them = "it" if kind == "own" else "them"
    assert f"; running here would overwrite {them}: give another --out, or remove {them}\n" in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    (out / "summary.json").unlink()
    (out / "scores.jsonl").unlink(missing_ok=True)
    (out / "notes.txt").write_text("mine\n")
    assert main(["run", "cardinal", "--n", "1", "--out", str(out), "--quiet"]) == 0
    assert (out / "notes.txt").read_text() == "mine\n"


def test_run_into_the_folder_of_another_run_is_refused(tmp_path, capsys):
    """`stsim run cardinal --out D` then `stsim run cardinal --solver random --out D` silently
    replaced the first run's answers, scores and summary. Now exit 2, nothing touched; the
    same run again (a live model resuming from OUT/llm_cache.jsonl) still runs."""
    out = tmp_path / "run"
    assert main(["run", "cardinal", "--n", "1", "--out", str(out), "--quiet"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    capsys.readouterr()
    base = ["run", "cardinal", "--out", str(out), "--quiet"]
    for extra, said in ((["--n", "1", "--solver", "random"], "--solver: 'baseline' there, 'random' now"),
                        (["--n", "1", "--seed", "1"], "--seed: 0 there, 1 now"),
                        (["--n", "2"], "--n: 1 there, 2 now"),
                        (["--n", "1", "--family", "cardinal.large"], "--family: not given there, 'cardinal.large' now"),
                        # outside the --out check until 2026-12-05 (the --resume check had it): overwritten
                        (["--n", "1", "--max-steps", "3"], "--max-steps: 10 there, 3 now"),
                        (["--n", "2", "--seed", "3"], "--seed: 0 there, 3 now; --n: 1 there, 2 now")):
        assert main(base + extra) == 2, extra
        err = capsys.readouterr().err
        assert f"stsim: error: --out {out}: holds another run ({said})" in err and "give another --out" in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    assert main(["run", "cardinal", "--n", "1", "--out", str(out), "--quiet"]) == 0  # same run: allowed
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name != "summary.json"} == \
        {k: v for k, v in before.items() if k != "summary.json"}


def test_the_python_api_refuses_the_folder_of_another_run_too(tmp_path):
    """The refusal lived in the CLI only: `runner.run(..., out_dir=D)` over another run in D
    overwrote it.  It is run()'s own check now, before the folder is touched."""
    from stsim.benchmarks.runner import RunError, run
    out = tmp_path / "run"
    run("cardinal", n=1, out_dir=out, progress=False)
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    with pytest.raises(RunError, match=r"holds another run \(--seed: 0 there, 1 now\)"):
        run("cardinal", n=1, seed=1, out_dir=out, progress=False)
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


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
    assert "accuracy n/a" in legend(fams, **DEFAULTS)
    # one wrong answer among them: a real 0.0
    answers[0] = Answer(tasks[0].id, None, "ok", value=0)
    assert summarise(score_answers(tasks, answers))["stark.knowledge.poi"]["accuracy"] == 0.0


def test_zero_error_on_spatial_impute_is_explained():
    from stsim.scoring.report import legend
    fams = {"stark.field.spatial_impute": {"n": 50, "failures": 0, "trimmed_rmse": 0.0, "rmse": 0.0,
                                           "median_error": 0.0, "metric": "rmspe"}}
    note = legend(fams, **DEFAULTS)
    assert "inverse-distance weighting" in note and "does not leak" in note
    assert "spatial_impute" not in legend({"stark.localization.range": {"n": 1, "failures": 0}}, **DEFAULTS)


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
    assert "rel.L2 = ||pred - gold|| / ||gold||" in legend(fams, **DEFAULTS)
    rows = {"f": {"kind": "numeric", "n_a": 1, "n_b": 1, "n_common": 1, "failures_a": 0, "failures_b": 0,
                  "trimmed_rmse_a": 1.0, "trimmed_rmse_b": 1.0, "relative_change": 0.0, "ci95": None}}
    assert "RMSE t25% A" in format_comparison(rows, 0.25)


def test_heavy_tailed_errors_are_explained_only_when_rms_dwarfs_the_trimmed_error():
    # the quickstart's stark.tracking.range printed trim.err 0.129 beside RMS.err 0.756 unexplained
    from stsim.scoring.report import legend
    row = {"n": 100, "failures": 0, "median_error": 0.06}
    heavy = legend({"stark.tracking.range": {**row, "trimmed_rmse": 0.129, "rmse": 0.756}}, **DEFAULTS)
    assert "RMS.err is over 3x trim.err for stark.tracking.range" in heavy
    calm = legend({"stark.tracking.range": {**row, "trimmed_rmse": 0.129, "rmse": 0.38}}, **DEFAULTS)  # 2.9x
    assert "RMS.err is over 3x" not in calm


def test_short_legend_names_the_columns_of_the_table_and_this_runs_notes():
    from stsim.scoring.report import short_legend
    cat = {"stark.knowledge.poi": {"n": 3, "failures": 3, "accuracy": None}}
    lines = short_legend(cat, "add --explain", **DEFAULTS).splitlines()
    assert lines == [
        "n: items, failed ones included.",  # the accuracy table has an n column too
        "accuracy / partial: correct / partial credit; random / rnd.part / chance: the random-guess "
        "reference on the same tasks and its expectation.",
        "failed: items with no usable answer, counted wrong in accuracy.",
        "Note on this run: accuracy n/a for a family with no answer at all.",
        "Full legend and notes: add --explain"]
    row = {"n": 100, "failures": 0, "median_error": 0.06, "trimmed_rmse": 0.129}
    calm = short_legend({"stark.tracking.range": {**row, "rmse": 0.38}}, "X", **DEFAULTS).splitlines()
    assert len(calm) == 3 and calm[-1] == "Full legend: X" and "STARK trim" not in "".join(calm)
    heavy = short_legend({"stark.tracking.range": {**row, "rmse": 0.756}}, "X", **DEFAULTS)
    # the run's note on a line of its own (inside the legend's last line it was easy to miss)
    assert heavy.splitlines()[-2:] == [
        "Note on this run: RMS.err over 3x trim.err for stark.tracking.range (a few items far off the rest: "
        "trim.err leaves them out).", "Full legend and notes: X"]


def test_time_errors_name_their_unit(tmp_path, capsys):
    """The quickstart printed 'abs' for stark.temporal_localization.event (seconds) and for
    stark.temporal_tracking.event (minutes), with 'absolute time error (s or min)' in the legend:
    the unit of each family's figures was not said anywhere."""
    tasks = tmp_path / "tasks.jsonl"
    fams = ["stark.temporal_localization.event", "stark.temporal_tracking.event", "stark.tracking.event_xyt"]
    assert main(["generate", "quickstart", "--n", "2", "-o", str(tasks), "--family", "stark.t*.event*"]) == 0
    by_family = {}
    for t in read_tasks(tasks):
        by_family.setdefault(t.family, set()).add(t.inputs["time_unit"])
    # the generators' own units (STARK: event times in s, tracking schedules in min)
    assert by_family == {"stark.temporal_localization.event": {"s"}, "stark.temporal_tracking.event": {"min"},
                         "stark.tracking.event": {"min"}, "stark.tracking.event_xyt": {"min"}}
    answers = tmp_path / "a.jsonl"
    write_jsonl(answers, [{"task_id": t.id, "step": s.index if t.steps else None,
                           "value": s.answer if t.steps else t.answer}
                          for t in read_tasks(tasks) for s in (t.steps or [t])])
    out = tmp_path / "s"
    capsys.readouterr()
    assert main(["score", str(tasks), str(answers), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = {}
    for line in printed.splitlines():  # the first table (the outcomes table repeats the names)
        if line.startswith("stark."):
            rows.setdefault(line.split()[0], line.split())
    assert rows["stark.temporal_localization.event"][2:4] == ["abs", "s"]
    assert rows["stark.temporal_tracking.event"][2:4] == ["abs", "min"]
    assert "dt in stark.tracking.event_xyt: min" in printed
    fam = json.loads((out / "summary.json").read_text())["families"]
    assert {f: fam[f]["time_unit"] for f in fams} == {fams[0]: "s", fams[1]: "min", fams[2]: "min"}
    assert "time_unit" not in fam["stark.tracking.event"]  # a point in km: no time error
    assert rows["stark.tracking.event"][2] == "eucl"


def test_field_vectors_carry_no_time_unit(tmp_path):
    """A field family's vector answer is temperatures (error: relative L2); its inputs'
    time_unit 'h' names the sampling, not the answer, but it was copied into every score's
    extra.time_unit and summary.json's families[F]['time_unit'], documented as the unit of
    time errors ('s' or 'min')."""
    from stsim.scoring.score import score_answers, summarise
    tasks = tmp_path / "tasks.jsonl"
    assert main(["generate", "stark-fields", "--n", "1", "-o", str(tasks),
                 "--family", "stark.field.spatiotemporal_*"]) == 0
    tasks = read_tasks(tasks)
    assert {t.answer_format for t in tasks} == {"vector"} and {t.inputs["time_unit"] for t in tasks} == {"h"}
    from stsim.records import Answer
    scores = score_answers(tasks, [Answer(t.id, None, "ok", value=t.answer) for t in tasks])
    assert scores and all("time_unit" not in s.extra for s in scores)
    fams = summarise(scores)
    assert set(fams) == {"stark.field.spatiotemporal_forecast", "stark.field.spatiotemporal_impute"}
    assert all("time_unit" not in row for row in fams.values())
