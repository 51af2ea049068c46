"""``--solver code:``: programs run in the sandbox and scored like any solver; the tier-1
baselines run *as code through the sandbox* score exactly as they do in-process."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from stsim.solvers.code import CodeSolver, answers_from_result, program_name, typed_value
from stsim.sandbox.isolation import Limits, SandboxResult
from stsim.scoring.score import score_answers, summarise
from stsim.solvers.base import get_solver
from stsim.benchmarks.suites import get_suite
from stsim.cli import main

LIMITS = Limits(wall_s=20.0, cpu_s=20.0, memory_mb=1024)


def baseline_program(task) -> str:
    """A self-contained program whose solver(inputs) runs stsim's in-process baseline."""
    steps = [{"index": s.index, "inputs": s.inputs} for s in task.steps]
    return (
        "import json\n"
        "from stsim.records import Step, Task\n"
        "from stsim.baselines import BASELINES\n"
        f"FAMILY, FORMAT = {task.family!r}, {task.answer_format!r}\n"
        f"STEPS = json.loads({json.dumps(steps)!r})\n"
        f"META = json.loads({json.dumps(task.meta)!r})\n"
        "def solver(inputs):\n"
        "    steps = [Step(s['index'], '', s['inputs'], None) for s in STEPS]\n"
        "    task = Task('t', FAMILY, '', inputs, None, FORMAT, steps, META)\n"
        "    vals = [a.value if a.status == 'ok' else None for a in BASELINES[FAMILY](task)]\n"
        "    return vals if STEPS else vals[0]\n")


def _keyed(fams):
    keep = ("n", "failures", "trimmed_rmse", "rmse", "median_error", "accuracy")
    return {f: {k: r.get(k) for k in keep} for f, r in fams.items()}


def test_baselines_as_code_score_like_in_process(tmp_path):
    tasks = list(get_suite("quickstart").tasks(n=1, seed=3))
    jsonl = tmp_path / "programs.jsonl"
    jsonl.write_text("".join(json.dumps({"task_id": t.id, "code": baseline_program(t)}) + "\n" for t in tasks))
    # zygote sandboxes with the baselines pre-imported and the trackers' kernels compiled before
    # the first job (a fresh interpreter per task works too, at about 2 s of imports each; without
    # compile_all every tracking job compiled them again, 12-15 s each, and under load passed 20 s;
    # one zygote: the jobs run one after another)
    code = CodeSolver(jsonl, LIMITS, share_stsim=True, reuse=True,
                      warm=1, preimport=("numpy", "stsim.baselines", "stsim.baselines.trajectory_kernel:compile_all"))
    base = get_solver("baseline")
    a_code = [a for t in tasks for a in code.solve(t)]
    a_base = [a for t in tasks for a in base.solve(t)]
    code.sandbox.close()
    assert not [a for a in a_code if a.status not in ("ok", "no_result")], [a.detail for a in a_code if a.status != "ok"][:2]
    s_code = summarise(score_answers(tasks, a_code))
    s_base = summarise(score_answers(tasks, a_base))
    assert len(s_base) == 14
    assert _keyed(s_code) == _keyed(s_base)
    assert sum(r["n"] for r in s_base.values()) > 14  # tracking steps are scored per step


def test_single_program_for_every_task_and_cli(tmp_path, capsys):
    prog = tmp_path / "centroid.py"
    prog.write_text("import numpy as np\n"
                    "def solver(inputs):\n"
                    "    c = np.mean(np.asarray(inputs['sensors'], float), axis=0)\n"
                    "    return c\n")
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--solver", f"code:{prog}", "--out", str(out), "--quiet",
                 "--sandbox", "zygote"]) == 0
    answers = [json.loads(l) for l in (out / "answers.jsonl").read_text().splitlines()]
    tasks = {t["id"]: t for t in map(json.loads, (out / "tasks.jsonl").read_text().splitlines())}
    loc = [a for a in answers if tasks[a["task_id"]]["family"] == "stark.localization.range"][0]
    sensors = tasks[loc["task_id"]]["inputs"]["sensors"]
    assert loc["status"] == "ok"
    assert loc["value"] == pytest.approx([sum(s[0] for s in sensors) / len(sensors), sum(s[1] for s in sensors) / len(sensors)])
    # a centroid is one point, not one per tracking step, and not one time: those are bad_shape
    trk = [a for a in answers if tasks[a["task_id"]]["family"] == "stark.tracking.range"]
    assert trk and all(a["status"] == "bad_shape" for a in trk)
    t0 = [a for a in answers if tasks[a["task_id"]]["family"] == "stark.temporal_localization.event"]
    assert t0[0]["status"] == "bad_shape" and "one number" in t0[0]["detail"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["families"]["stark.tracking.range"]["failure_kinds"] == {"bad_shape": 10}
    # every answer and the run say how the code was isolated: namespaces by default
    assert {a["isolation"].split("+")[0] for a in answers} == {"bwrap"}
    assert summary["isolation"].startswith("bwrap") and "isolation_note" not in summary
    assert "sandbox isolation: bwrap" in capsys.readouterr().out


def test_code_runs_keep_each_programs_output_truncated(tmp_path):
    prog = tmp_path / "chatty.py"
    # 100 000 bytes to stdout (more than the 64 KiB kept), 6 bytes to stderr
    prog.write_text("import sys\ndef solver():\n    sys.stdout.write('x' * 100000)\n"
                    "    sys.stderr.write('hello\\n')\n    return 1.0\n")
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--family", "stark.temporal_localization.event",
                 "--solver", f"code:{prog}", "--out", str(out), "--quiet"]) == 0
    (tid,) = [json.loads(l)["id"] for l in (out / "tasks.jsonl").read_text().splitlines()]
    stem = out / "program_output" / program_name(tid)[:-3]
    kept = Path(f"{stem}.stdout.txt").read_text()
    assert kept.startswith("x" * 65536) and kept.count("x") == 65536
    assert kept.endswith(f"[stsim: {100000 - 65536} more bytes dropped]\n")
    assert Path(f"{stem}.stderr.txt").read_text() == "hello\n"


def test_weaker_process_mode_is_explicit_and_recorded(tmp_path, capsys):
    prog = tmp_path / "one.py"
    prog.write_text("def solver():\n    return 1.0\n")
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--family", "stark.temporal_localization.event",
                 "--solver", f"code:{prog}", "--out", str(out), "--quiet", "--isolation", "process"]) == 0
    answers = [json.loads(l) for l in (out / "answers.jsonl").read_text().splitlines()]
    assert answers and all(a["status"] == "ok" and a["isolation"].startswith("process") for a in answers)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["isolation"].startswith("process") and "no filesystem" in summary["isolation_note"]
    assert "warning: code ran with --isolation process" in capsys.readouterr().out


def test_fail_closed_without_namespaces(tmp_path, monkeypatch, capsys):
    """Where namespaces cannot be had, code: solvers and `sandbox run` refuse to start (exit 2,
    nothing written) instead of falling back to the weaker process mode."""
    from stsim.sandbox import isolation as sandbox
    monkeypatch.setattr(sandbox, "_PROBE", dict(sandbox._PROBE, bwrap=(False, "simulated: no user namespaces")))
    prog = tmp_path / "one.py"
    prog.write_text("def solver():\n    return 1.0\n")
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--solver", f"code:{prog}", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "refusing to run untrusted code without namespace isolation" in err and "--isolation process" in err
    assert "simulated: no user namespaces" in err and not out.exists()
    assert main(["sandbox", "run", str(prog)]) == 2
    assert "simulated: no user namespaces" in capsys.readouterr().err
    assert main(["run", "quickstart", "--n", "1", "--solver", "openai:m", "--mode", "ci", "--out", str(out),
                 "--quiet"]) == 2
    assert "refusing" in capsys.readouterr().err and not out.exists()


def test_folder_of_programs_tracking_form_and_missing(tmp_path):
    tasks = list(get_suite("quickstart").tasks(n=1, seed=0))
    trk = next(t for t in tasks if t.family == "stark.tracking.range")
    loc = next(t for t in tasks if t.family == "stark.localization.range")
    (tmp_path / program_name(trk.id)).write_text(
        "import numpy as np\n"
        "def solver(readings, coordinate, timestamp):\n"
        "    c = np.mean(np.asarray(coordinate, float), axis=0)\n"
        "    return [list(c) for _ in timestamp]\n")
    solver = CodeSolver(tmp_path, LIMITS)
    ans = solver.solve(trk)
    assert [a.status for a in ans] == ["ok"] * len(trk.steps)
    c = [sum(s[i] for s in trk.inputs["sensors"]) / len(trk.inputs["sensors"]) for i in (0, 1)]
    assert ans[3].value == pytest.approx(c)
    assert [a.status for a in solver.solve(loc)] == ["missing"]
    solver.close()


def test_typed_value_and_failures_map_to_items():
    assert typed_value([[1, 2]], "point") == [1.0, 2.0]
    assert typed_value(3, "time") == 3.0
    assert typed_value([1, 2, 3], "vector", {"length": 3}) == [1.0, 2.0, 3.0]
    for bad, fmt in (([1, 2, 3], "point"), ([None, 1], "point"), ([1, 2], "time"), (2, "binary"), ("x", "relation")):
        with pytest.raises(ValueError):
            typed_value(bad, fmt)
    task = next(iter(get_suite("quickstart").tasks(n=1, seed=0)))
    res = SandboxResult("timeout", None, "", "", "bwrap", 1.0, "wall time limit")
    ans = answers_from_result(task, res, "code:x")
    assert [a.status for a in ans] == ["timeout"] and ans[0].detail == "wall time limit"


@pytest.mark.parametrize("make, message", [
    (lambda d: (d / "p.py").write_bytes(b"def solver():\n    return 1  # caf\xe9\n") and d / "p.py",
     "stsim: error: code:{p}: cannot read the program (not UTF-8 text: byte 0xe9 at offset 33)"),
    (lambda d: d / "nothere.py",
     "stsim: error: code:{p}: no such file or folder (give a .py file, a folder of programs or a .jsonl file"),
])
def test_code_program_that_cannot_be_read_is_bad_input(tmp_path, capsys, make, message):
    """`--solver code:prog.py` with a Latin-1 byte in the program used to end in a
    UnicodeDecodeError traceback (exit 1), and a missing file said 'neither a .py file ...':
    exit 2 naming the file and the reason, before any task runs or anything is written."""
    p = make(tmp_path)
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--family", "stark.localization.range", "--n", "1", "--quiet",
                 "--solver", f"code:{p}", "--out", str(out)]) == 2
    assert message.format(p=p) in capsys.readouterr().err
    assert not out.exists()


def test_unreadable_program_in_a_folder_fails_only_its_task(tmp_path):
    """One program of a `code:DIR` folder that is not UTF-8 (Python would not compile it either:
    a SyntaxError) is `syntax_error` for its task (it was `crashed`, though it never ran),
    naming the file; the other tasks still run."""
    tasks = list(get_suite("quickstart").tasks(n=2, seed=0, only="stark.localization.range"))
    d = tmp_path / "progs"
    d.mkdir()
    (d / program_name(tasks[0].id)).write_bytes(b"def solver():\n    return [1.0, 2.0]  # \xff\n")
    (d / program_name(tasks[1].id)).write_text("def solver():\n    return [1.0, 2.0]\n")
    code = CodeSolver(d, LIMITS, reuse=False)
    first, second = code.solve(tasks[0]), code.solve(tasks[1])
    code.close()
    assert [(a.status, a.value) for a in first] == [("syntax_error", None)]
    assert first[0].detail == (f"{d / program_name(tasks[0].id)}: cannot read the program "
                               "(not UTF-8 text: byte 0xff at offset 39)")
    assert [(a.status, a.value) for a in second] == [("ok", [1.0, 2.0])]


@pytest.mark.parametrize("kind", ["dir", "jsonl"])
def test_programs_for_no_task_of_the_run_are_bad_input_like_answers_of_another_suite(tmp_path, capsys, kind):
    """`code:DIR` (or PROGRAMS.jsonl) none of whose programs is for a task of the run exited 0
    with every answer 'missing', while an answers file none of whose lines is for a task of the
    tasks file exits 2: now exit 2 too, naming the expected program names (the run is written)."""
    src = "def solver():\n    return [1.0, 2.0]\n"
    if kind == "dir":
        path = tmp_path / "progs"
        path.mkdir()
        (path / program_name("cardinal/cardinal.large/000000")).write_text(src)
        expected = "'quickstart__stark.localization.range__000000.py'"
    else:
        path = tmp_path / "progs.jsonl"
        path.write_text(json.dumps({"task_id": "cardinal/cardinal.large/000000", "code": src}) + "\n")
        expected = "'quickstart/stark.localization.range/000000'"
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--family", "stark.localization.range", "--n", "1", "--quiet",
                 "--solver", f"code:{path}", "--out", str(out), "--isolation", "process"]) == 2
    err = capsys.readouterr().err
    assert f"stsim: error: code:{path}: none of its 1 program(s) is for a task of this run" in err
    assert f"names like {expected} expected" in err and "Traceback" not in err
    assert [json.loads(line)["status"] for line in (out / "answers.jsonl").read_text().splitlines()] == ["missing"]


def test_an_empty_folder_of_programs_is_bad_input_before_anything_is_written(tmp_path, capsys):
    (tmp_path / "progs").mkdir()
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--family", "stark.localization.range", "--n", "1", "--quiet",
                 "--solver", f"code:{tmp_path / 'progs'}", "--out", str(out), "--isolation", "process"]) == 2
    assert "holds no programs (no .py file" in capsys.readouterr().err
    assert not out.exists()


def test_programs_for_no_task_beside_used_ones_are_a_warning(tmp_path, capsys):
    tasks = list(get_suite("quickstart").tasks(n=1, seed=0, only="stark.localization.range"))
    d = tmp_path / "progs"
    d.mkdir()
    src = "def solver():\n    return [1.0, 2.0]\n"
    (d / program_name(tasks[0].id)).write_text(src)
    (d / "quickstart__stark.localization.range__000007.py").write_text(src)  # --n 8 was meant
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--family", "stark.localization.range", "--n", "1", "--quiet",
                 "--solver", f"code:{d}", "--out", str(out), "--isolation", "process"]) == 0
    warning = (f"code:{d}: 1 of its 2 program(s) are for no task of this run: "
               "quickstart__stark.localization.range__000007.py")
    assert f"stsim: warning: {warning}" in capsys.readouterr().err
    assert json.loads((out / "summary.json").read_text())["warnings"] == [warning]


def test_a_solver_of_the_wrong_signature_is_no_result_naming_the_forms(tmp_path):
    """solver(a, b) was `crashed` with the harness's traceback: the host reads a `def solver`
    with ast and does not run it; what ast cannot see (a lambda, a keyword-only parameter) the
    harness reports the same way, without a traceback.  solver(readings, coordinate, timestamp)
    on a localisation task (no tracking triple offered) is the wrong signature too."""
    tasks = list(get_suite("quickstart").tasks(n=1, seed=0))
    trk = next(t for t in tasks if t.family == "stark.tracking.range")
    loc = next(t for t in tasks if t.family == "stark.localization.range")
    forms = "stsim calls solver(), solver(inputs) or solver(readings, coordinate, timestamp)"
    two = tmp_path / "two.py"
    two.write_text("def solver(a, b):\n    return [5, 5]\n")
    solver = CodeSolver(two, LIMITS)
    (a,) = solver.solve(loc)
    assert a.status == "no_result" and a.detail == (
        f"solver(a, b) takes 2 required positional arguments; {forms} (this task: solver() or "
        "solver(inputs)); the program was not run")
    ans = solver.solve(trk)
    assert {x.status for x in ans} == {"no_result"} and len(ans) == len(trk.steps)
    assert "(this task: solver() or solver(inputs) or solver(readings, coordinate, timestamp))" in ans[0].detail
    solver.close()
    triple = tmp_path / "triple.py"
    triple.write_text("def solver(readings, coordinate, timestamp):\n    return [5, 5]\n")
    (a,) = CodeSolver(triple, LIMITS).solve(loc)
    assert a.status == "no_result" and a.detail.startswith("solver(readings, coordinate, timestamp) takes 3")
    for source, shown in (("solver = lambda a, b: [5, 5]\n", "solver(a, b) requires 2 positional argument(s);"),
                          ("def solver(*, k):\n    return [5, 5]\n",
                           "solver(*, k) requires 0 positional argument(s) and the keyword-only k;")):
        prog = tmp_path / "p.py"
        prog.write_text(source)
        (a,) = CodeSolver(prog, LIMITS).solve(loc)
        assert a.status == "no_result" and a.detail.startswith(shown), a.detail
        assert f"{forms} (this task: solver() or solver(inputs)); solver() was not called" in a.detail
        assert "Traceback" not in a.detail


def test_families_a_program_cannot_answer_are_named_before_the_run(tmp_path, capsys):
    """A solver() value is numbers only: `stsim run cardinal --solver code:p.py` ran every task
    in the sandbox and recorded each as bad_shape ('solver returned a str'), exit 0."""
    from stsim.registry import load_families
    from stsim.solvers.code import CODE_FORMATS
    prog = tmp_path / "p.py"
    prog.write_text("def solver():\n    return 'west'\n")
    out = tmp_path / "run"
    assert main(["run", "cardinal", "--n", "1", "--solver", f"code:{prog}", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "stsim: error: --solver code:" in err and "cardinal.large" in err and "format direction" in err
    assert not out.exists()
    # every format outside CODE_FORMATS really is refused by typed_value, every one inside is read
    for fam in load_families().values():
        if fam.answer_format not in CODE_FORMATS:
            with pytest.raises(ValueError, match="cannot come from a numeric solver"):
                typed_value([1.0, 2.0], fam.answer_format)
    assert typed_value(1, "binary") == 1 and typed_value([1, 2], "point") == [1.0, 2.0]
    # a suite mixing both kinds runs, with a warning naming the families left bad_shape
    prog.write_text("def solver():\n    return 0\n")
    assert main(["run", "stark-tier2", "--n", "1", "--solver", f"code:{prog}", "--isolation", "process",
                 "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "stsim: warning: --solver code:" in err and "stark.relation.de9im" in err
    assert "stark.relation.temporal_choice" in err and "stark.relation.spatial" not in err


def test_run_api_refuses_a_program_for_families_it_cannot_answer(tmp_path):
    """Only the CLI refused `--solver code:` on families a solver() value cannot answer:
    run("cardinal", "code:p.py") ran every task in the sandbox and recorded each as bad_shape.
    The API refuses it before any folder is made, with the CLI's message (one check)."""
    from stsim.benchmarks.runner import run
    from stsim.solvers.base import SolverError
    prog = tmp_path / "p.py"
    prog.write_text("def solver():\n    return 0\n")
    out = tmp_path / "run"
    with pytest.raises(SolverError, match=r"--solver code:.*cardinal\.large.*format direction.*no task could be"):
        run("cardinal", f"code:{prog}", n=1, out_dir=out)
    assert not out.exists()


@pytest.mark.parametrize("kind", ["file", "folder", "jsonl"])
def test_code_solver_errors_name_the_program_file(tmp_path, kind):
    """A program's syntax error or traceback named the sandbox's copy, solution.py."""
    task = next(iter(get_suite("quickstart").tasks(n=1, seed=0)))
    source = "def solver(inputs):\n    return [1, 2\n"
    if kind == "file":
        path = where = tmp_path / "prog.py"
        path.write_text(source)
    elif kind == "folder":
        path = tmp_path / "progs"
        path.mkdir()
        where = path / program_name(task.id)
        where.write_text(source)
    else:
        path = tmp_path / "progs.jsonl"
        path.write_text(json.dumps({"task_id": "other", "code": "x = 1"}) + "\n"
                        + json.dumps({"task_id": task.id, "code": source}) + "\n")
        where = f"{path}:2"
    code = CodeSolver(path, LIMITS, isolation="process", reuse=False)
    try:
        (a, *_) = code.solve(task)
    finally:
        code.close()
    assert a.status == "syntax_error" and a.detail.startswith(f"SyntaxError in {where}, line 2: "), a.detail
