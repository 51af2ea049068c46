"""Bad input: a clear message naming what and where, exit code 2, never a traceback, and
nothing already written is lost."""
import json

import pytest

from stsim.baselines import BASELINES
from stsim.scoring.score import score_answers, summarise
from stsim.cli import main
from stsim.records import dumps, read_tasks
from tests.helpers import tier1_task


def _write_tasks(tmp_path, mutate):
    path = tmp_path / "tasks.jsonl"
    main(["generate", "quickstart", "--n", "1", "--family", "stark.localization.range", "-o", str(path)])
    obj = json.loads(path.read_text())
    mutate(obj)
    path.write_text(json.dumps(obj) + "\n")  # json.dumps writes NaN as the bare token NaN
    return path


@pytest.mark.parametrize("mutate, message", [
    (lambda o: o["inputs"]["readings"].__setitem__(1, float("nan")), "Sensor B (index 1): reading is nan"),
    (lambda o: o["inputs"]["readings"].__setitem__(2, -3.0), "Sensor C (index 2): negative range"),
    (lambda o: o["inputs"]["readings"].__setitem__(0, "far"), "is not a number"),
    (lambda o: o["inputs"]["readings"].pop(), "expected 4 readings"),
    (lambda o: o.pop("answer_format"), "missing field(s) answer_format"),
])
@pytest.mark.parametrize("command", ["audit", "score"])
def test_bad_task_file(tmp_path, capsys, mutate, message, command):
    path = _write_tasks(tmp_path, mutate)
    answers = tmp_path / "answers.jsonl"
    answers.write_text("")
    argv = ["audit", str(path)] if command == "audit" else ["score", str(path), str(answers)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert "tasks.jsonl:1" in err or "stark.localization.range/000000" in err
    # the file is named as well as the task (score reads two files; a NaN reading named only the task)
    assert f"(in {path}, line 1)" in err or f"{path}:1" in err


def test_not_json_and_empty_and_missing_files(tmp_path, capsys):
    bad = tmp_path / "t.jsonl"
    bad.write_text('{"id": 1}\nthis is not json\n')
    assert main(["audit", str(bad)]) == 2
    assert "t.jsonl:1: missing field(s)" in capsys.readouterr().err
    bad.write_text("not json\n")
    assert main(["audit", str(bad)]) == 2
    assert "t.jsonl:1: not valid JSON" in capsys.readouterr().err
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert main(["audit", str(empty)]) == 2
    assert "contains no tasks" in capsys.readouterr().err
    assert main(["audit", str(tmp_path / "nope.jsonl")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_unreadable_answers_file(tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    main(["generate", "quickstart", "--n", "1", "--family", "stark.localization.range", "-o", str(tasks)])
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(b"\xff\xfe\x00garbage")
    assert main(["score", str(tasks), str(answers)]) == 2
    assert "not UTF-8" in capsys.readouterr().err
    answers.write_text('{"step": 0, "text": "x"}\n')
    assert main(["score", str(tasks), str(answers)]) == 2
    assert "answers.jsonl:1: missing 'task_id'" in capsys.readouterr().err


def test_malformed_model_answers_are_counted_not_fatal(tmp_path, capsys):
    tasks = tmp_path / "tasks.jsonl"
    main(["generate", "quickstart", "--n", "3", "--family", "stark.localization.range", "-o", str(tasks)])
    ids = [t.id for t in read_tasks(tasks)]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("\n".join(json.dumps(a) for a in [
        {"task_id": ids[0], "text": "[RESULTS_START] [1.0, 2.0] [RESULTS_END]"},
        {"task_id": ids[1], "text": "somewhere in the middle"},
    ]) + "\n")
    out = tmp_path / "scored"
    assert main(["score", str(tasks), str(answers), "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())["families"]["stark.localization.range"]
    assert summary["n"] == 3 and summary["failures"] == 2
    assert summary["failure_kinds"] == {"format_failure": 1, "missing": 1}


def test_an_ok_answer_without_a_value_says_so(tmp_path):
    """``{"status": "ok"}`` with no ``value`` (e.g. the answer put under another key) is a format
    failure that says the value is missing and where a model reply goes, not 'answer is null'."""
    tasks = tmp_path / "tasks.jsonl"
    main(["generate", "quickstart", "--n", "1", "--family", "stark.localization.range", "-o", str(tasks)])
    tid = read_tasks(tasks)[0].id
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"task_id": tid, "status": "ok", "answer": "at (five, 4.4)"}) + "\n")
    out = tmp_path / "scored"
    assert main(["score", str(tasks), str(answers), "--out", str(out)]) == 0
    row = json.loads((out / "scores.jsonl").read_text().splitlines()[0])
    assert row["status"] == "format_failure"
    assert row["extra"]["detail"] == "status 'ok' but no 'value' (the answer); a model reply goes in 'text'"


def test_too_few_readings_is_an_explicit_no_estimate():
    t = tier1_task("stark.localization.event", [[1, 1], [5, 5], [9, 1], [2, 8]], [1.0, 1.2, None, None])
    (a,) = BASELINES[t.family](t)
    assert a.status == "no_estimate" and "need 3" in a.detail
    t = tier1_task("stark.localization.range", [[1, 1], [5, 5], [9, 1], [2, 8]], [None, 3.0, None, None])
    (a,) = BASELINES[t.family](t)
    assert a.status == "no_estimate"
    (s,) = score_answers([t], [a])
    assert s.status == "no_estimate" and s.error is None
    assert summarise([s])[t.family]["failures"] == 1


def test_unknown_solver_and_bad_options(capsys):
    assert main(["run", "quickstart", "--solver", "magic", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "unknown solver 'magic'" in err and "code:PROGRAM.py|DIR|PROGRAMS.jsonl, openai:MODEL" in err
    assert main(["run", "stark-published", "--quiet"]) == 2
    assert "--data" in capsys.readouterr().err
    assert main(["run", "quickstart", "--family", "nothing.*", "--quiet"]) == 2
    assert "matches 'nothing.*'" in capsys.readouterr().err


def test_interrupted_run_keeps_what_it_wrote(tmp_path, monkeypatch, capsys):
    from stsim.benchmarks import runner
    calls = {"n": 0}
    real = runner.safe_solve

    def flaky(solver, task):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(solver, task)
    monkeypatch.setattr(runner, "safe_solve", flaky)
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "2", "--out", str(out), "--quiet"]) == 130
    assert f"kept in {out} (continue with `stsim run quickstart --resume {out}`)" in capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["n_tasks"] == 3
    assert len((out / "answers.jsonl").read_text().splitlines()) == 3
    assert len(read_tasks(out / "tasks.jsonl")) >= 3


def test_files_in_the_wrong_order_or_a_folder_are_named_with_the_fix(tmp_path, capsys):
    """`stsim score answers.jsonl tasks.jsonl` (swapped) listed five missing fields; a run
    folder given as a file said only 'is a directory'.  Both now say what to give."""
    run = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--family", "stark.localization.range", "--out", str(run),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["score", str(run / "answers.jsonl"), str(run / "tasks.jsonl")]) == 2
    assert (f"{run / 'answers.jsonl'}:1: missing field(s) id, family, prompt, inputs, answer_format; this is "
            "a line of answers (it has 'task_id'), not a task: give a tasks file (`stsim score "
            "TASKS.jsonl ANSWERS.jsonl`: the tasks come first)") in capsys.readouterr().err
    assert main(["audit", str(run / "scores.jsonl")]) == 2
    assert "this is a line of scores (it has 'task_id'), not a task" in capsys.readouterr().err
    # the scores given as the answers: every item was scored a format failure, exit 0
    assert main(["score", str(run / "tasks.jsonl"), str(run / "scores.jsonl")]) == 2
    assert (f"{run / 'scores.jsonl'}:1: this is a line of a scores file ('family', 'error', 'correct'; no "
            "'text' or 'value'), not an answer: give the answers file") in capsys.readouterr().err
    assert main(["score", str(run), str(run / "answers.jsonl")]) == 2
    assert (f"stsim: error: {run}: is a directory, not a JSONL file (it holds answers.jsonl, scores.jsonl, "
            "tasks.jsonl: give one of them)") in capsys.readouterr().err


def test_generate_output_ending_in_a_slash_is_a_folder_not_a_file(tmp_path, capsys):
    """`generate -o runs/new/` (a folder that does not exist yet) wrote a FILE named 'new':
    Path() drops the trailing slash."""
    target = tmp_path / "new"
    assert main(["generate", "cardinal", "--n", "1", "-o", f"{target}/"]) == 2
    err = capsys.readouterr().err
    assert f"stsim: error: -o {target}/: ends with '/', a folder" in err and "tasks.jsonl" in err
    assert not target.exists()
    target.mkdir()  # an existing folder: named as before
    assert main(["generate", "cardinal", "--n", "1", "-o", f"{target}/"]) == 2
    assert "is a folder; give a file name" in capsys.readouterr().err
    assert main(["generate", "cardinal", "--n", "1", "-o", str(target / "t.jsonl")]) == 0


def test_an_unknown_family_names_the_close_ones_not_all():
    """A misspelt family name gets the closest known names and where the rest are listed, not a
    message listing every family (10,681 characters before)."""
    from stsim.records import UnknownName
    from stsim.registry import FAMILIES, generate_task
    with pytest.raises(UnknownName) as e:
        generate_task("stark.localization.rnage", 0)
    msg = str(e.value)
    assert msg.startswith("unknown family 'stark.localization.rnage'; did you mean 'stark.localization.range'")
    assert f"({len(FAMILIES)} families: `stsim list` lists them)" in msg and len(msg) < 300
    with pytest.raises(UnknownName, match=r"^unknown family 'zzz'; \(\d+ families"):
        generate_task("zzz", 0)


def _tracking_tasks(tmp_path, mutate):
    path = tmp_path / "tasks.jsonl"
    main(["generate", "quickstart", "--n", "1", "--family", "stark.tracking.range", "-o", str(path)])
    obj = json.loads(path.read_text())
    mutate(obj)
    path.write_text(json.dumps(obj) + "\n")
    return path, obj["id"]


def _set_step_reading(value, step=3, sensor=1):
    def mutate(o):
        o["steps"][step]["inputs"]["readings"][sensor] = value
    return mutate


@pytest.mark.parametrize("mutate, message", [
    # the per-step copy of the readings (what show, fidelity and sandboxed code's time stamps
    # read) passed audit and show with a NaN: only inputs.readings was checked
    (_set_step_reading(float("nan")), "step 3 (steps[3].inputs.readings), Sensor B (index 1): reading is nan (NaN or "
                                      "infinite); write null for a dropped reading"),
    (_set_step_reading(float("inf")), "step 3 (steps[3].inputs.readings), Sensor B (index 1): reading is inf (NaN or "
                                      "infinite); write null for a dropped reading"),
    (_set_step_reading(-2.0), "step 3 (steps[3].inputs.readings), Sensor B (index 1): negative range -2.0"),
    (_set_step_reading(1234.5), "step 3 (steps[3].inputs.readings), Sensor B (index 1): reading 1234.5 differs from "
                                "inputs.readings[3]"),
    (lambda o: o["steps"][2]["inputs"].update(time=float("nan")),
     "step 2 (steps[2].inputs.time): time must be a finite number or null, got nan"),
    (lambda o: o["steps"][2]["inputs"].update(time=99.0), "step 2 (steps[2].inputs.time): time 99.0 differs "
                                                          "from inputs.times[2]"),
    (lambda o: o["inputs"]["readings"][4].__setitem__(0, float("nan")),
     "step 4 (inputs.readings[4]), Sensor A (index 0): reading is nan"),
])
@pytest.mark.parametrize("command", ["audit", "show", "score"])
def test_every_copy_of_tracking_readings_is_checked(tmp_path, capsys, mutate, message, command):
    path, task_id = _tracking_tasks(tmp_path, mutate)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"task_id": task_id, "step": 0, "text": "no idea"}) + "\n")
    argv = {"audit": ["audit", str(path)], "show": ["show", task_id, "--tasks", str(path)],
            "score": ["score", str(path), str(answers)]}[command]
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert f"stsim: error: task {task_id}, {message}" in cap.err and f"(in {path}, line 1)" in cap.err
    assert "Traceback" not in cap.err and cap.out == ""


def _set_noise(**kw):
    def mutate(o):
        o["inputs"]["sensor_model"]["noise"].update(kw)
    return mutate


@pytest.mark.parametrize("mutate, message", [
    # a NaN noise scale made every bound check pass: audit exit 0 on a wrong gold answer
    (_set_noise(sigma=float("nan")), "uniform_relative sigma must be a finite number >= 0, got nan"),
    (_set_noise(sigma=float("inf")), "uniform_relative sigma must be a finite number >= 0, got inf"),
    # a negative one failed every check (exit 1, "allowed -0.04"); an unknown kind or a
    # non-number was a ValueError traceback (exit 1)
    (_set_noise(sigma=-0.01), "uniform_relative sigma must be a finite number >= 0, got -0.01"),
    (_set_noise(kind="bogus"), "unknown noise model kind 'bogus'; known: none, uniform_relative"),
    (_set_noise(sigma="abc"), "could not convert string to float: 'abc'"),
    (lambda o: o["inputs"].update(sensor_model="x"), "sensor parameters must be an object, got 'x'"),
])
def test_a_sensor_model_the_audit_cannot_trust_is_refused(tmp_path, capsys, mutate, message):
    path, task_id = _tracking_tasks(tmp_path, mutate)
    assert main(["audit", str(path)]) == 2
    cap = capsys.readouterr()
    assert f"stsim: error: task {task_id}: inputs.sensor_model: " in cap.err and message in cap.err
    assert f"(in {path}, line 1)" in cap.err and "Traceback" not in cap.err and cap.out == ""


def test_sensor_and_noise_constructors_refuse_impossible_scales():
    """The whole kind of fault, whatever builds the model: the noise scale of every model, a
    ToA wave speed and a proximity radius / flip probability."""
    from stsim.sim.noise import Gaussian, UniformAbsolute, UniformRelative
    from stsim.sim.sensors import ProximitySensor, ToASensor
    for bad in (float("nan"), float("inf"), -1e-9, True, "0.01"):
        for make in (UniformRelative, UniformAbsolute, Gaussian):
            with pytest.raises(ValueError, match="must be a finite number >= 0"):
                make(bad)
    assert UniformAbsolute(0.0).half_width == 0.0          # no noise is allowed
    for kw, msg in (({"speed": 0.0}, "toa speed"), ({"speed": float("nan")}, "toa speed")):
        with pytest.raises(ValueError, match=msg):
            ToASensor(**kw)
    for kw, msg in (({"radius": -1.0}, "proximity radius"), ({"flip_prob": 1.5}, "flip_prob")):
        with pytest.raises(ValueError, match=msg):
            ProximitySensor(**kw)


def test_audit_pairs_steps_and_readings_by_position(tmp_path, capsys):
    # a step's index is a label (it may carry a shot schedule); the audit used it as the row of
    # inputs.readings: an IndexError traceback for index 999
    path, _ = _tracking_tasks(tmp_path, lambda o: o["steps"][-1].update(index=999))
    assert main(["audit", str(path)]) == 0
    assert "audited 50 item(s) of 1 task(s): 0 inconsistent" in capsys.readouterr().out
