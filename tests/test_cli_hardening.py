"""CLI hardening: every bad input is a clear message naming what and where, exit code 2,
never a traceback, and nothing is solved or written before the input is checked."""
import gzip
import json
import os

import pytest

from stsim.cli import main


def _exit_code(argv):
    """main()'s exit code, whether argparse exits (SystemExit) or main returns."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


def _tasks_file(tmp_path, family="stark.localization.range", n=1, name="tasks.jsonl"):
    path = tmp_path / name
    assert main(["generate", "quickstart", "--n", str(n), "--family", family, "-o", str(path)]) == 0
    return path


@pytest.mark.parametrize("argv, message", [
    (["run", "quickstart", "--seed", "-1", "--n", "1"], "argument --seed: must be at least 0, got -1"),
    (["generate", "qstrbench", "--seed", "-1"], "argument --seed: must be at least 0, got -1"),
    (["run", "quickstart", "--trim", "0.5"], "argument --trim: must be in [0, 0.5), got 0.5"),
    (["run", "quickstart", "--trim", "-0.1"], "argument --trim: must be in [0, 0.5), got -0.1"),
    (["run", "quickstart", "--trim", "nan"], "argument --trim: must be in [0, 0.5), got nan"),
    (["score", "t.jsonl", "a.jsonl", "--trim", "nan"], "argument --trim: must be in [0, 0.5), got nan"),
    (["score", "t.jsonl", "a.jsonl", "--trim", "0.7"], "argument --trim: must be in [0, 0.5)"),
])
def test_bad_seed_and_trim_rejected_by_argparse(tmp_path, capsys, monkeypatch, argv, message):
    from stsim.benchmarks import runner
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "run", lambda *a, **k: pytest.fail("solved before checking input"))
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def test_generate_to_a_folder_or_missing_folder(tmp_path, capsys):
    assert main(["generate", "quickstart", "--n", "1", "-o", str(tmp_path)]) == 2
    assert f"-o {tmp_path}: is a folder" in capsys.readouterr().err
    target = tmp_path / "nonexistent" / "x.jsonl"
    assert main(["generate", "quickstart", "--n", "1", "-o", str(target)]) == 2
    assert f"folder {tmp_path / 'nonexistent'} does not exist" in capsys.readouterr().err


def test_run_out_is_a_file_or_unwritable(tmp_path, capsys):
    f = tmp_path / "taken"
    f.write_text("keep me")
    assert main(["run", "quickstart", "--n", "1", "--quiet", "--out", str(f)]) == 2
    assert f"--out {f}: is an existing file" in capsys.readouterr().err
    assert f.read_text() == "keep me"
    assert main(["run", "quickstart", "--n", "1", "--quiet", "--out", str(f / "sub")]) == 2
    assert f"--out {f / 'sub'}: cannot create the folder" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() == 0, reason="root can write into a read-only folder")
def test_run_out_in_read_only_folder(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        assert main(["run", "quickstart", "--n", "1", "--quiet", "--out", str(ro / "run")]) == 2
        assert "cannot create the folder" in capsys.readouterr().err
    finally:
        ro.chmod(0o700)


def test_score_and_calculus_out_is_a_file(tmp_path, capsys):
    tasks = _tasks_file(tmp_path)
    answers = tmp_path / "answers.jsonl"
    # one unreadable reply (an empty answers file is refused)
    answers.write_text('{"task_id": "quickstart/stark.localization.range/000000", "text": "no idea"}\n')
    f = tmp_path / "taken"
    f.write_text("x")
    assert main(["score", str(tasks), str(answers), "--out", str(f)]) == 2
    assert f"--out {f}: is an existing file, not a folder" in capsys.readouterr().err
    assert main(["calculus", "show", "rcc8", "--format", "gqr", "--out", str(f)]) == 2
    assert f"--out {f}: is an existing file, not a folder" in capsys.readouterr().err


@pytest.mark.parametrize("corrupt", ["truncated", "garbage"])
def test_corrupt_data_archive_names_the_path(tmp_path, capsys, corrupt):
    archive = tmp_path / "data_final.tar.gz"
    if corrupt == "truncated":  # a valid gzip header, then the stream stops
        archive.write_bytes(gzip.compress(b"x" * 100000)[:200])
    else:
        archive.write_bytes(gzip.compress(b"this is not a tar archive" * 40))
    rc = main(["run", "stark-published", "--data", str(archive), "--n", "1", "--quiet",
               "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    assert f"--data {archive}: cannot unpack the archive" in err


@pytest.mark.parametrize("gold, message", [
    ("somewhere", "bad gold 'answer' (a point gold must be numbers"),
    (None, "bad gold 'answer' (gold answer is null)"),
    ([1.0], "bad gold 'answer' (a point gold needs 2 numbers"),
])
def test_audit_and_score_reject_bad_gold_naming_the_task(tmp_path, capsys, gold, message):
    path = _tasks_file(tmp_path)
    obj = json.loads(path.read_text())
    obj["answer"] = gold
    path.write_text(json.dumps(obj) + "\n")
    for argv in (["audit", str(path)], ["score", str(path), str(path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"task {obj['id']}: {message}" in err and "Traceback" not in err


def test_audit_rejects_null_tracking_step_gold(tmp_path, capsys):
    path = _tasks_file(tmp_path, family="stark.tracking.range")
    obj = json.loads(path.read_text())
    obj["steps"][3]["answer"] = None
    path.write_text(json.dumps(obj) + "\n")
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"task {obj['id']} step 3: bad gold 'answer' (gold answer is null)" in err


@pytest.mark.parametrize("argv, message", [
    (["stark-published"], "pass --data DIR"),
    (["quickstart", "--family", "nothing.*"], "matches 'nothing.*'"),
    (["stark-published", "--data", "/nonexistent/stark"], "--data /nonexistent/stark: no such file or folder"),
    (["quickstart", "--solver", "magic"], "unknown solver 'magic'"),
])
def test_run_input_errors_leave_no_run_folder(tmp_path, capsys, argv, message):
    out = tmp_path / "run"
    assert main(["run", *argv, "--quiet", "--out", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("kwargs, message", [
    ({"seed": -1}, "--seed must be a non-negative integer, got -1"),
    ({"trim": float("nan")}, "--trim must be in [0, 0.5), got nan"),
    ({"trim": 0.5}, "--trim must be in [0, 0.5), got 0.5"),
    ({"workers": 0}, "--workers must be at least 1, got 0"),
    ({"max_steps": -5}, "--max-steps must be 0 (all) or positive, got -5"),
    ({"workers": 257}, "--workers must be at most 256 (requests in flight to a live model), got 257"),
    # 2 cores here: 4 per core, at least 8 (the API started 9+ processes; only the CLI checked)
    ({"workers": 9}, "--workers 9: --solver baseline runs each worker on this machine (a process or a "
                     "sandbox); at most 8 here (4 per core)"),
])
def test_run_api_checks_options_before_creating_the_folder(tmp_path, monkeypatch, kwargs, message):
    from stsim.benchmarks.runner import RunError, run
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    out = tmp_path / "run"
    with pytest.raises(RunError) as err:
        run("quickstart", n=1, out_dir=out, progress=False, **kwargs)
    assert message in str(err.value)
    assert not out.exists()


def test_workers_cap_is_4_per_core_for_solvers_that_run_here_only(monkeypatch):
    """A live model in da mode waits on requests (up to 256 in flight); every other solver, a
    live model's ci / agentic code too, runs a process or sandbox per worker here."""
    from stsim.benchmarks.runner import RunError, check_run_options, local_workers_max
    monkeypatch.setattr("os.cpu_count", lambda: 3)
    assert local_workers_max() == 12
    ok = {"seed": 0, "trim": 0.1, "max_steps": -1}
    check_run_options(workers=200, solver_spec="openai:m", solver_options={"mode": "da"}, **ok)
    check_run_options(workers=200, solver_spec="openai:m", **ok)   # da is the default mode
    check_run_options(workers=12, solver_spec="code:x.py", **ok)
    for spec, options in (("openai:m", {"mode": "ci"}), ("openai:m", {"mode": "agentic"}),
                          ("code:x.py", None), ("baseline:ekf", None)):
        with pytest.raises(RunError, match=f"--workers 13: --solver {spec} runs each worker on this machine"):
            check_run_options(workers=13, solver_spec=spec, solver_options=options, **ok)
    # the CLI keeps its own copy of the 256 (argparse's range; the runner is not imported at
    # start-up): the two must not drift apart
    from stsim import cli
    from stsim.benchmarks import runner
    assert cli.MAX_WORKERS == runner.MAX_WORKERS == 256


def _fake_release(tmp_path, name="data_final.tar.gz"):
    """A tiny archive with the STARK release layout (one empty category folder)."""
    import tarfile
    src = tmp_path / "src" / "data_final_v5" / "localization_range_0.01"
    src.mkdir(parents=True)
    (src / "README").write_text("fake")
    archive = tmp_path / name
    with tarfile.open(archive, "w:gz") as tf:
        tf.add(tmp_path / "src" / "data_final_v5", arcname="data_final_v5")
    return archive


def test_data_archive_unpacked_once_into_the_cache(tmp_path, monkeypatch):
    import tempfile
    from stsim.benchmarks.stark_release import tier1 as sp
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    archive = _fake_release(tmp_path)
    first = sp.resolve_data_dir(archive)
    second = sp.resolve_data_dir(archive)
    assert first == second and (first / "localization_range_0.01" / "README").read_text() == "fake"
    assert first.parent.parent == tmp_path / "cache" / "stsim"
    assert [p.name for p in (tmp_path / "cache" / "stsim").iterdir()] == [first.parent.name]
    assert list((tmp_path / "tmp").iterdir()) == []  # nothing left in the temp folder


def test_half_finished_unpack_does_not_count(tmp_path, monkeypatch):
    import tarfile
    from stsim.benchmarks.stark_release import tier1 as sp
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    archive = _fake_release(tmp_path)
    real = tarfile.TarFile.extractall

    def interrupted(self, path, *a, **k):
        real(self, path, *a, **k)
        raise KeyboardInterrupt
    monkeypatch.setattr(tarfile.TarFile, "extractall", interrupted)
    with pytest.raises(KeyboardInterrupt):
        sp.resolve_data_dir(archive)
    assert list((tmp_path / "cache" / "stsim").iterdir()) == []  # no partial folder kept
    monkeypatch.setattr(tarfile.TarFile, "extractall", real)
    root = sp.resolve_data_dir(archive)
    assert (root / "localization_range_0.01" / "README").is_file()


def test_answers_file_warnings_name_the_line(tmp_path):
    from stsim.solvers.answers_file import read_answers
    from stsim.records import read_tasks
    tasks = read_tasks(_tasks_file(tmp_path, family="stark.localization.range", n=1)) + \
        read_tasks(_tasks_file(tmp_path, family="stark.tracking.range", n=1, name="tr.jsonl"))
    single, track = tasks[0].id, tasks[1].id
    last = tasks[1].steps[-1].index
    lines = [
        {"task_id": single, "value": [1.0, 2.0]},
        {"task_id": single, "value": [3.0, 4.0]},                       # 2: duplicate
        {"task_id": single, "step": 0, "value": [1.0, 2.0]},            # 3: step on a single task
        {"task_id": track, "step": 999, "value": [1.0, 2.0]},           # 4: no such step
        {"task_id": track, "step": -1, "value": [1.0, 2.0]},            # 5: no such step
        {"task_id": track, "value": [1.0, 2.0]},                        # 6: step missing
        {"task_id": track, "step": 0, "text": "[RESULTS_START] [5, 5] [RESULTS_END]", "value": [9, 9]},
    ]
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    answers, warnings = read_answers(path, {t.id: t for t in tasks})
    assert [(a.task_id, a.step, a.value) for a in answers] == [(single, None, [1.0, 2.0]), (track, 0, [5.0, 5.0])]
    assert warnings == [
        f"{path}:2: ignored: a second answer for task {single}; the first, on line 1, is kept",
        f"{path}:3: ignored: task {single} has a single answer, no steps (got step 0; omit 'step' or give null)",
        f"{path}:4: ignored: task {track} has no step 999 (steps 0..{last})",
        f"{path}:5: ignored: task {track} has no step -1 (steps 0..{last})",
        f"{path}:6: ignored: task {track} is answered per step (0..{last}) but the line has no 'step'",
        f"{path}:7: has both 'text' and 'value'; 'text' (the model reply) is scored and 'value' ignored",
    ]


def test_boolean_step_and_repeated_task_id_are_errors(tmp_path, capsys):
    tasks = _tasks_file(tmp_path)
    tid = json.loads(tasks.read_text())["id"]
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"task_id": tid, "value": [1, 2]}) + "\n"
                       + json.dumps({"task_id": tid, "step": True, "value": [1, 2]}) + "\n")
    assert main(["score", str(tasks), str(answers)]) == 2
    assert f"{answers}:2: 'step' must be an integer or null, got true" in capsys.readouterr().err
    tasks.write_text(tasks.read_text() * 2)
    assert main(["score", str(tasks), str(answers)]) == 2
    assert f"{tasks}:2: task id '{tid}' repeats line 1" in capsys.readouterr().err


def test_huge_answers_give_clean_metrics_and_table(tmp_path, capsys):
    import math
    import re
    import warnings
    from stsim.records import read_tasks
    tasks_path = _tasks_file(tmp_path, n=3)
    ids = [t.id for t in read_tasks(tasks_path)]
    answers = tmp_path / "a.jsonl"
    values = [[1e200, 1e200], [1e308, 0.0], [1.7e308, 1.7e308]]  # the last: error overflows to inf
    answers.write_text("".join(json.dumps({"task_id": i, "value": v}) + "\n" for i, v in zip(ids, values)))
    out = tmp_path / "scored"
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no numpy overflow warnings
        assert main(["score", str(tasks_path), str(answers), "--out", str(out), "--trim", "0"]) == 0
    table = capsys.readouterr().out
    row = next(line for line in table.splitlines() if line.startswith("stark.localization.range "))
    assert re.search(r"\d{12}", row) is None  # no 309-digit numbers
    cells = row.split()
    assert cells[1] == "3" and cells[2] == "eucl" and cells[3] == "inf" and cells[4] == "inf"  # trim, RMS
    assert float(cells[5]) == pytest.approx(1e308, rel=1e-3)  # median, printed %.4g
    fam = json.loads((out / "summary.json").read_text())["families"]["stark.localization.range"]
    assert math.isinf(fam["rmse"]) and fam["failures"] == 0


def test_rmse_of_huge_finite_errors_does_not_overflow():
    import warnings
    from stsim.scoring.metrics import median_error, rmse, trimmed_rmse
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert rmse([1e200, 1e200]) == pytest.approx(1e200)
        assert rmse([3e200, 4e200]) == pytest.approx(5e200 / 2 ** 0.5)  # sqrt((9 + 16) / 2) e200
        assert trimmed_rmse([1.0, 2e300, 1e308, 2.0], 0.25) == pytest.approx(2e300 / 2 ** 0.5)  # keeps [2, 2e300]
        assert median_error([1e308, 1.7e308]) == pytest.approx(1.35e308)
        assert rmse([float("inf"), 1.0]) == float("inf")
        # the middle error inf (a value of 1e400 or Infinity in answers.jsonl): inf, not NaN + a warning
        assert median_error([float("inf")]) == float("inf")
        assert median_error([1.0, float("inf"), float("inf")]) == float("inf")
        assert median_error([1.0, float("inf")]) == float("inf")
        assert median_error([1.0, 3.0, float("inf")]) == 3.0


@pytest.mark.parametrize("argv, message", [
    (["run", "quickstart", "--max-steps", "-3"], "argument --max-steps: must be at least 0, got -3"),
    (["score", "t.jsonl", "a.jsonl", "--max-steps", "-1"], "argument --max-steps: must be at least 0, got -1"),
    (["run", "quickstart", "--workers", "0"], "argument --workers: must be at least 1, got 0"),
    (["run", "quickstart", "--workers", "-2"], "argument --workers: must be at least 1, got -2"),
    (["audit", "t.jsonl", "--limit", "-1"], "argument --limit: must be at least 0, got -1"),
    (["run", "quickstart", "--workers", "two"], "argument --workers: expected an integer, got 'two'"),
    # live-model options reached the requests: --temperature nan ran, every task 'crashed' (a
    # ValueError from the JSON encoder), exit 0; the others failed only at the endpoint
    (["run", "quickstart", "--solver", "openai:m", "--temperature", "nan"],
     "argument --temperature: must be a finite number at least 0, got nan"),
    (["run", "quickstart", "--solver", "openai:m", "--temperature", "-1"],
     "argument --temperature: must be a finite number at least 0, got -1"),
    (["run", "quickstart", "--solver", "openai:m", "--max-tokens", "0"], "argument --max-tokens: must be at least 1"),
    (["run", "quickstart", "--solver", "openai:m", "--max-turns", "0"], "argument --max-turns: must be at least 1"),
    (["run", "quickstart", "--solver", "openai:m", "--request-timeout", "-1"],
     "argument --request-timeout: must be a finite number above 0 and at most 86400, got -1"),
    (["run", "quickstart", "--solver", "openai:m", "--request-timeout", "inf"],
     "argument --request-timeout: must be a finite number above 0 and at most 86400, got inf"),
    # --workers 100000 started that many processes (or sandboxes of a code: solver)
    # ... said "requests in flight to a live model" for a baseline run too
    (["run", "quickstart", "--workers", "100000"],
     "argument --workers: must be at most 256 (for any solver; a solver that runs here: at most 4 per core), "
     "got 100000"),
    (["run", "quickstart", "--workers", "200"], "--workers 200: --solver baseline runs each worker on this machine"),
    (["run", "quickstart", "--workers", "200", "--solver", "code:x.py"],
     "--workers 200: --solver code:x.py runs each worker on this machine"),
])
def test_option_ranges(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "runs").exists()


def test_score_and_audit_on_a_directory(tmp_path, capsys):
    tasks = _tasks_file(tmp_path)
    adir = tmp_path / "adir"
    adir.mkdir()
    for argv, path in ((["score", str(tasks), str(adir)], adir), (["score", str(adir), str(tasks)], adir),
                       (["audit", str(adir)], adir)):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{path}: is a directory, not a JSONL file" in err and "no such file" not in err



@pytest.mark.skipif(not os.path.exists(os.devnull) or os.path.isfile(os.devnull),
                    reason="needs a /dev/null device")
def test_dev_null_is_an_empty_file_not_a_missing_one(tmp_path, capsys):
    tasks = _tasks_file(tmp_path)
    for argv in (["score", os.devnull, str(tasks)], ["audit", os.devnull]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"{os.devnull}: contains no tasks" in err and "no such file" not in err
    assert main(["score", str(tasks), os.devnull]) == 2  # no answers at all: refused, as no tasks is
    assert f"{os.devnull}: contains no answers (the file is empty or blank)" in capsys.readouterr().err


@pytest.mark.parametrize("content", ["", "\n  \n\n"], ids=["empty", "blank"])
def test_empty_answers_file_is_refused_and_nothing_written(tmp_path, capsys, content):
    # an empty answers file was scored (exit 0) with every item missing and only a warning
    tasks = _tasks_file(tmp_path)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(content)
    out = tmp_path / "scored"
    assert main(["score", str(tasks), str(answers), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"stsim: error: {answers}: contains no answers (the file is empty or blank)" in err
    assert not out.exists()
    task_id = json.loads(tasks.read_text().splitlines()[0])["id"]
    assert main(["show", task_id, "--tasks", str(tasks), "--answers", str(answers)]) == 2
    assert f"{answers}: contains no answers (the file is empty or blank)" in capsys.readouterr().err
    # compare: the empty scores file is named as empty, not as 'no family in common'
    run = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--family", "stark.localization.range", "--quiet",
                 "--out", str(run)]) == 0
    capsys.readouterr()
    assert main(["compare", str(answers), str(run)]) == 2
    assert f"stsim: error: {answers}: contains no scores (the file is empty or blank)" in capsys.readouterr().err



def test_data_that_is_a_plain_file_is_named(tmp_path, capsys):
    text = tmp_path / "notes.txt"
    text.write_text("not a release\n")
    for data in (str(text), os.devnull):
        assert main(["run", "stark-published", "--data", data, "--n", "1", "--quiet",
                     "--out", str(tmp_path / "run")]) == 2
        err = capsys.readouterr().err
        assert f"--data {data}: is neither a folder nor a .tar.gz / .tgz archive" in err
    assert not (tmp_path / "run").exists()

@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_tasks_read_from_a_pipe(tmp_path, capsys):
    import threading
    text = _tasks_file(tmp_path).read_text()
    capsys.readouterr()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_text(text), daemon=True)
    writer.start()
    try:
        assert main(["audit", str(fifo)]) == 0
    finally:
        writer.join(timeout=10)
    assert "audited 1 item(s) of 1 task(s): 0 inconsistent" in capsys.readouterr().out

def test_interrupted_generate_says_the_file_is_partial(tmp_path, capsys, interrupt_generate):
    interrupt_generate(3)
    out = tmp_path / "tasks.jsonl"
    assert main(["generate", "quickstart", "--n", "2", "-o", str(out)]) == 130
    err = capsys.readouterr().err
    assert f"stsim: interrupted: {out} is partial: 2 task(s) written before the interrupt" in err
    assert len(out.read_text().splitlines()) == 2


def test_tracking_task_without_steps(tmp_path, capsys):
    path = _tasks_file(tmp_path, family="stark.tracking.range")
    obj = json.loads(path.read_text())
    n = len(obj["inputs"]["readings"])
    obj["steps"] = []
    path.write_text(json.dumps(obj) + "\n")
    for argv in (["audit", str(path)], ["score", str(path), str(path)]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert (f"task {obj['id']}: has no steps, but stark.tracking.range readings are per step "
                f"(inputs.readings holds {n} step(s))") in err


def test_python_dash_m_stsim(tmp_path):
    import subprocess
    import sys
    ok = subprocess.run([sys.executable, "-m", "stsim", "calculus", "list"], capture_output=True, text=True)
    assert ok.returncode == 0 and "rcc8" in ok.stdout.lower()
    bad = subprocess.run([sys.executable, "-m", "stsim", "audit", str(tmp_path / "none.jsonl")],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "none.jsonl: no such file" in bad.stderr


def test_solver_variant_must_apply_to_some_family(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--solver", "baseline:kriging", "--n", "1", "--quiet",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--solver baseline:kriging: variant 'kriging' applies to none of the families of suite 'quickstart'" in err
    assert "stark.field.spatial_impute" in err and not out.exists()
    # a data suite declares its families: checked before any data is read
    assert main(["run", "stark-published", "--data", "/nonexistent", "--solver", "baseline:kriging",
                 "--quiet", "--out", str(out)]) == 2
    assert "applies to none of the families of suite 'stark-published'" in capsys.readouterr().err
    assert main(["run", "stark-published", "--data", "/nonexistent", "--family", "nothing.*",
                 "--quiet", "--out", str(out)]) == 2
    assert "no family of suite 'stark-published' matches 'nothing.*'" in capsys.readouterr().err


def test_summary_records_which_families_used_the_variant(tmp_path):
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--solver", "baseline:grid", "--n", "1", "--quiet",
                 "--family", "stark.localization.*", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["solver_variant_families"] == ["stark.localization.proximity"]
    assert len(summary["families"]) == 6  # the other five ran the default baseline


def test_prompts_only_export_hides_the_gold(tmp_path):
    """`generate --prompts-only` keeps every prompt of the full file (same ids, same order,
    step prompts included) and nothing a model must not see."""
    import json
    full, bare = tmp_path / "tasks.jsonl", tmp_path / "prompts.jsonl"
    assert main(["generate", "stark-mini", "-o", str(full)]) == 0
    assert main(["generate", "stark-mini", "--prompts-only", "-o", str(bare)]) == 0
    tasks = [json.loads(l) for l in full.read_text().splitlines()]
    views = [json.loads(l) for l in bare.read_text().splitlines()]
    assert [v["id"] for v in views] == [t["id"] for t in tasks]
    for t, v in zip(tasks, views):
        assert v["prompt"] == t["prompt"] and v["answer_format"] == t["answer_format"]
        assert set(v) <= {"id", "family", "prompt", "answer_format", "steps", "mode", "max_steps", "rubric",
                          "messages", "message_steps", "steps_not_asked", "ci_no_code_turn"}
        assert [s["prompt"] for s in v.get("steps", [])] == [s["prompt"] for s in t["steps"] or []]
        assert all(set(s) == {"index", "prompt"} for s in v.get("steps", []))
    assert any(v.get("steps") for v in views)       # tracking tasks keep their step prompts


def test_scoring_a_prompts_only_file_or_bad_answers_says_so_and_writes_nothing(tmp_path, capsys):
    bare, full = tmp_path / "p.jsonl", tmp_path / "t.jsonl"
    assert main(["generate", "stark-mini", "--n", "1", "--prompts-only", "-o", str(bare)]) == 0
    assert main(["generate", "stark-mini", "--n", "1", "-o", str(full)]) == 0
    answers = tmp_path / "a.jsonl"
    answers.write_text("{not json\n")
    capsys.readouterr()
    assert main(["score", str(bare), str(answers)]) == 2
    assert "--prompts-only" in capsys.readouterr().err
    out = tmp_path / "scored"
    assert main(["score", str(full), str(answers), "--out", str(out)]) == 2
    assert "a.jsonl:1: not valid JSON" in capsys.readouterr().err
    assert not out.exists()


def test_an_infinite_answer_is_a_format_failure_without_warnings(tmp_path, capsys):
    """One answer `[Infinity, 2]` (JSON's non-standard Infinity, or 1e400) made the median
    inf - inf = NaN: the table printed '-' under a RuntimeWarning; then inf (an infinite
    error).  Now it is a format failure, as the same numbers in a reply's text are (the
    metrics' own handling of inf is tested above)."""
    import warnings
    from stsim.records import read_tasks
    tasks_path = _tasks_file(tmp_path, n=1)
    (tid,) = [t.id for t in read_tasks(tasks_path)]
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"task_id": "%s", "value": [Infinity, 2]}\n' % tid)
    out = tmp_path / "scored"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["score", str(tasks_path), str(answers), "--out", str(out)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines()
               if line.startswith("stark.localization.range "))
    assert row.split()[1:7] == ["1", "eucl", "-", "-", "-", "1"]  # n, measure, trim, RMS, median, failed
    (score,) = [json.loads(line) for line in (out / "scores.jsonl").read_text().splitlines()]
    assert score["extra"]["outcome"] == "format_failure" and "non-finite" in score["extra"]["detail"]


@pytest.mark.parametrize("line, message", [
    # a line cut short by a kill or a copy: the string it ends in, not "Invalid control character at"
    ('{"task_id": "q/1", "text": "[RESULTS_ST', 'a.jsonl:2: not valid JSON (Unterminated string starting at column 28)'),
    # a Unicode minus sign pasted into a number: named, with the fix
    ('{"task_id": "q/1", "value": [\u22121.5, 2]}',
     "a.jsonl:2: not valid JSON (Expecting value at column 30: '\u2212' U+2212 MINUS SIGN "
     "(JSON numbers take the ASCII hyphen-minus '-'))"),
    ('{"task_id": \u201cq/1\u201d}', "a.jsonl:2: not valid JSON (Expecting value at column 13: "
                                     "'\u201c' U+201C LEFT DOUBLE QUOTATION MARK)"),
    ('{"task_id": "q/1"} {"task_id": "q/2"}', "a.jsonl:2: not valid JSON (Extra data at column 20)"),
])
def test_a_bad_json_line_is_named_with_its_column_and_character(tmp_path, capsys, line, message):
    tasks = _tasks_file(tmp_path)
    answers = tmp_path / "a.jsonl"
    answers.write_text('{"task_id": "q/0", "value": [1, 2]}\n' + line + "\n", encoding="utf-8")
    capsys.readouterr()
    assert main(["score", str(tasks), str(answers)]) == 2
    assert f"stsim: error: {answers.parent / message}" in capsys.readouterr().err


def test_answers_saved_with_a_bom_and_crlf_are_read(tmp_path, capsys):
    """Notepad and PowerShell's Out-File save UTF-8 with a byte-order mark and CRLF line ends:
    the mark used to fail line 1 as 'Unexpected UTF-8 BOM'; now both lines are scored."""
    from stsim.records import read_tasks
    tasks = _tasks_file(tmp_path, n=2)
    ids = [t.id for t in read_tasks(tasks)]
    answers = tmp_path / "a.jsonl"
    answers.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps({"task_id": i, "value": [1, 2]}) + "\r\n"
                                                   for i in ids).encode())
    out = tmp_path / "scored"
    assert main(["score", str(tasks), str(answers), "--out", str(out)]) == 0
    rows = [json.loads(x) for x in (out / "scores.jsonl").read_text().splitlines()]
    assert [(r["task_id"], r["status"]) for r in rows] == [(i, "ok") for i in ids]


def test_a_line_that_is_not_utf8_is_named(tmp_path, capsys):
    tasks = _tasks_file(tmp_path)
    answers = tmp_path / "a.jsonl"
    answers.write_bytes(b'{"task_id": "q/0", "value": [1, 2]}\n{"task_id": "caf\xe9"}\n')
    assert main(["score", str(tasks), str(answers)]) == 2
    assert (f"stsim: error: {answers}:2: not UTF-8 text (byte 0xe9 at byte 17 of the line; "
            "save the file as UTF-8)") in capsys.readouterr().err


@pytest.mark.parametrize("argv, prog", [
    (["list"], "stsim list"),
    (["run", "quickstart"], "stsim run"),
    (["generate", "quickstart"], "stsim generate"),
    (["export", "quickstart", "--format", "chat", "-o", "d"], "stsim export"),
    (["show", "t/x/0", "--tasks", "t.jsonl"], "stsim show"),
    (["score", "t.jsonl", "a.jsonl"], "stsim score"),
    (["calculus", "list"], "stsim calculus"),
    (["audit", "t.jsonl"], "stsim audit"),
    (["compare", "a", "b"], "stsim compare"),
    (["entities", "info"], "stsim entities info"),
    (["fidelity", "stark-published", "--data", "d"], "stsim fidelity"),
    (["sandbox", "run", "p.py"], "stsim sandbox run"),
    (["sandbox"], "stsim sandbox"),  # an option of the group itself, before its action
])
def test_unknown_argument_is_reported_by_its_command(tmp_path, capsys, monkeypatch, argv, prog):
    # `stsim list --bogus` printed the top-level usage (usage: stsim [-h] [--version] COMMAND ...)
    monkeypatch.chdir(tmp_path)
    if argv == ["sandbox"]:
        argv = ["sandbox", "--bogus", "run", "p.py"]
    else:
        argv = [*argv, "--bogus"]
    assert _exit_code(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: {prog} [-h]") and f"\n{prog}: error: unrecognized arguments: --bogus" in err
    assert _exit_code(["list", "stray"]) == 2
    assert "stsim list: error: unrecognized arguments: stray" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("extra, named", [(["--temperature", "0.7"], "--temperature"),
                                          (["--base-url", "http://x/v1", "--max-tokens", "5"],
                                           "--base-url, --max-tokens are"),
                                          (["--structured"], "--structured")])
def test_live_model_options_refused_without_a_live_model(tmp_path, capsys, extra, named):
    """`--temperature 0.7 --solver baseline` ran the baseline and dropped the option without a
    word (while `--mode ci` was refused): every live-model option is now refused the same way,
    exit 2, before any folder is made."""
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err
    assert named in err and "--solver baseline does not talk to a model" in err
    assert not out.exists()


def test_a_task_its_family_refuses_is_named_with_its_line(tmp_path, capsys):
    """A task that parses but breaks its family's rules was named by id and file only (JSON
    errors named the line): score, audit and show now name the line too."""
    good = tmp_path / "t.jsonl"
    assert main(["generate", "quickstart", "--n", "1", "--family", "stark.localization.r*", "-o", str(good)]) == 0
    rows = [json.loads(line) for line in good.read_text().splitlines()]
    rows[1]["inputs"]["sensors"] = [[1, 2, 3]]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    for argv in (["audit", str(bad)], ["score", str(bad), str(bad)], ["show", "--tasks", str(bad), rows[1]["id"]]):
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert f"task {rows[1]['id']}: inputs.sensors" in err and f"(in {bad}, line 2)" in err, argv
