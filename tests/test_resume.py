"""`stsim run ... --resume DIR`: a run killed mid-way (a real subprocess and a signal) and then
resumed gives the same files as an uninterrupted run (timing fields aside), for the baseline,
model-written code in the sandbox, and a live model behind a loopback server."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from stsim.cli import main
from tests.fake_openai import FakeChatServer, Slow

TIMING = ("wall_s", "resumed")


def _default_signals():
    """In the child before exec: SIGINT and SIGTERM unblocked and at their default action, as
    in a terminal.  The child inherits the forking thread's signal mask and ignored signals;
    a library in this test process that left SIGINT blocked or ignored (the run then never
    sees the signal: exit 0, or a wait on the held request, in CI) must not decide the test."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _kill_midway(cmd, answers, min_lines, sig, env=None, after_signal=None):
    """Start ``cmd``, wait until ``answers`` has ``min_lines`` lines, send ``sig`` (again after
    5 s if it still runs, then call ``after_signal``); return the exit code."""
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [])  # this thread's mask, unchanged
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                            preexec_fn=_default_signals)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if answers.exists() and answers.read_text().count("\n") >= min_lines:
            break
        time.sleep(0.01)
    assert proc.poll() is None, "the run ended before it could be interrupted"
    os.kill(proc.pid, sig)
    try:
        return proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        # still running: the signal reached another thread while the main one waits on a held
        # request, or CPython dropped the KeyboardInterrupt (raised inside a __del__ it only
        # reports); a second Ctrl-C, as a user would press, and then the request is released
        os.kill(proc.pid, sig)
        if after_signal is not None:
            after_signal()
        rc = proc.wait(timeout=60)
        print(f"signal {sig} needed a second send; this process's blocked signals: {sorted(blocked)}, "
              f"SIGINT handler: {signal.getsignal(signal.SIGINT)}")
        return rc


def _same_run(a, b):
    for name in ("tasks.jsonl", "answers.jsonl", "scores.jsonl"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    sa, sb = (json.loads((d / "summary.json").read_text()) for d in (a, b))
    for s in (sa, sb):
        for k in TIMING + ("solver_options",):
            s.pop(k, None)
    assert sa == sb
    assert not (b / "answers.previous.jsonl").exists()


def _cmd(*args):
    return [sys.executable, "-m", "stsim.cli", "run", *args, "--quiet"]


def test_baseline_run_killed_and_resumed_equals_uninterrupted(tmp_path, capsys):
    ref, out = tmp_path / "ref", tmp_path / "out"
    assert main(["run", "quickstart", "--n", "3", "--out", str(ref), "--quiet"]) == 0
    rc = _kill_midway(_cmd("quickstart", "--n", "3", "--out", str(out)), out / "answers.jsonl", 40, signal.SIGKILL)
    assert rc == -signal.SIGKILL
    done = (out / "tasks.jsonl").read_text().count("\n")
    assert 0 < done < 42 and not (out / "summary.json").exists()
    capsys.readouterr()
    assert main(["run", "quickstart", "--resume", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    kept = summary["resumed"]["reused_tasks"]
    assert 0 < kept < 42 and kept + summary["resumed"]["solved_tasks"] == 42
    assert summary["resumed"]["wall_s_before"] is None          # killed before its first summary
    assert f"{kept} task(s) kept" in printed
    _same_run(ref, out)
    # resuming a finished run solves nothing and changes nothing but the resumed block; the
    # run's wall time is kept and the resume's added (it used to replace it: 9.9 s -> 0.2 s)
    assert main(["run", "quickstart", "--resume", str(out), "--quiet"]) == 0
    again = json.loads((out / "summary.json").read_text())
    res = again["resumed"]
    assert {k: res[k] for k in ("reused_tasks", "solved_tasks")} == {"reused_tasks": 42, "solved_tasks": 0}
    assert res["wall_s_before"] == summary["wall_s"] and res["wall_s_now"] > 0
    assert again["wall_s"] == round(summary["wall_s"] + res["wall_s_now"], 3)
    _same_run(ref, out)


def test_resume_keeps_the_runs_trim(tmp_path, capsys):
    """--trim is not in run.json: a resume without it takes the summary's (it used to rewrite
    the table with the default 0.10), and another one given is refused with nothing changed
    (the table would be replaced), naming the rescoring command."""
    out = tmp_path / "out"
    assert main(["run", "quickstart", "--n", "1", "--out", str(out), "--quiet", "--trim", "0.2"]) == 0
    assert main(["run", "quickstart", "--resume", str(out), "--quiet"]) == 0
    assert json.loads((out / "summary.json").read_text())["trim"] == 0.2
    before = (out / "summary.json").read_bytes()
    capsys.readouterr()
    assert main(["run", "quickstart", "--resume", str(out), "--quiet", "--trim", "0.3"]) == 2
    err = capsys.readouterr().err
    assert f"--resume {out}: its summary.json was made with --trim 0.2; resuming with --trim 0.3" in err
    assert f"stsim score {out / 'tasks.jsonl'} {out / 'answers.jsonl'} --trim 0.3" in err
    assert (out / "summary.json").read_bytes() == before


def test_resume_takes_an_n_that_makes_the_same_tasks(tmp_path, capsys):
    """``--n`` equal to every family's own count is the same run as no ``--n`` (a newcomer
    resuming quickstart with its documented ``--n 10`` was refused, "not given there, 10 now"):
    the resume goes on and leaves the answers as they were; an ``--n`` that changes some
    family's count is still refused, nothing changed."""
    from fnmatch import fnmatch

    from stsim.benchmarks.suites import get_suite
    counts = {k for f, k in get_suite("quickstart").families.items() if fnmatch(f, "stark.localization.*")}
    assert len(counts) == 1                                  # every family of the filter: the same count
    own = counts.pop()
    out = tmp_path / "out"
    assert main(["run", "quickstart", "--family", "stark.localization.*", "--out", str(out), "--quiet"]) == 0
    answers = (out / "answers.jsonl").read_bytes()
    capsys.readouterr()
    assert main(["run", "quickstart", "--n", str(own), "--resume", str(out), "--quiet"]) == 0
    assert (out / "answers.jsonl").read_bytes() == answers
    # the resumed run keeps the n it was made with: summary.json says what run.json says
    assert json.loads((out / "summary.json").read_text())["n_per_family"] is None
    assert json.loads((out / "run.json").read_text())["n_per_family"] is None
    assert main(["run", "quickstart", "--n", str(own + 1), "--resume", str(out), "--quiet"]) == 2
    assert (f"another run is there (--n: each family's own count, {own} there, {own + 1} now)"
            in capsys.readouterr().err)
    assert (out / "answers.jsonl").read_bytes() == answers
    # the same rule for --out: the same tasks again are the same run, other tasks another one
    again = tmp_path / "again"
    assert main(["run", "quickstart", "--family", "stark.localization.*", "--out", str(again), "--quiet"]) == 0
    assert json.loads((again / "run.json").read_text())["n_per_family"] is None
    assert main(["run", "quickstart", "--family", "stark.localization.*", "--n", str(own), "--out", str(again),
                 "--quiet"]) == 0
    assert (again / "answers.jsonl").read_bytes() == answers
    assert main(["run", "quickstart", "--family", "stark.localization.*", "--n", str(own + 1), "--out",
                 str(again), "--quiet"]) == 2
    assert f"holds another run (--n: {own} there, {own + 1} now)" in capsys.readouterr().err   # run.json now says --n
    assert (again / "answers.jsonl").read_bytes() == answers


def test_resume_refuses_another_run(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", "quickstart", "--n", "1", "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["run", "quickstart", "--n", "2", "--resume", str(out), "--quiet"]) == 2
    assert "another run is there (--n: 1 there, 2 now)" in capsys.readouterr().err
    # a run without --n (the suite's own count) says so, not "None"
    own = tmp_path / "own"
    assert main(["run", "cardinal", "--out", str(own), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["run", "cardinal", "--n", "3", "--resume", str(own), "--quiet"]) == 2
    from collections import Counter

    from stsim.benchmarks.suites import get_suite
    per_family = Counter(f for f, _ in get_suite("cardinal").task_keys())     # tasks a run without --n has
    lo, hi = min(per_family.values()), max(per_family.values())
    assert lo < hi
    assert (f"another run is there (--n: each family's own count, {lo} to {hi} there, 3 now)"
            in capsys.readouterr().err)
    assert main(["run", "stark-mini", "--resume", str(out), "--quiet"]) == 2
    assert "another run is there (SUITE: 'quickstart' there, 'stark-mini' now)" in capsys.readouterr().err
    assert main(["run", "quickstart", "--resume", str(tmp_path / "none"), "--quiet"]) == 2
    assert "no such folder" in capsys.readouterr().err
    # a file (here the run's own summary.json) was "no such folder": it is a file, and which folder
    assert main(["run", "quickstart", "--resume", str(out / "summary.json"), "--quiet"]) == 2
    assert (f"--resume {out / 'summary.json'}: is a file, not a folder; --resume takes the folder of the "
            f"interrupted run (its --out folder, holding run.json, tasks.jsonl and answers.jsonl); give its "
            f"folder: --resume {out}") in capsys.readouterr().err
    (tmp_path / "notes.txt").write_text("x")
    assert main(["run", "quickstart", "--resume", str(tmp_path / "notes.txt"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "notes.txt: is a file, not a folder" in err and "give its folder" not in err
    # a task changed on disk (another version): refused before anything is rewritten
    lines = (out / "tasks.jsonl").read_text().splitlines()
    t = json.loads(lines[0])
    t["prompt"] += " "
    lines[0] = json.dumps(t)
    (out / "tasks.jsonl").write_text("\n".join(lines) + "\n")
    before = (out / "answers.jsonl").read_bytes()
    assert main(["run", "quickstart", "--resume", str(out), "--quiet"]) == 2
    assert "differs from the one in tasks.jsonl" in capsys.readouterr().err
    assert (out / "answers.jsonl").read_bytes() == before


def test_code_run_killed_and_resumed_equals_uninterrupted(tmp_path):
    prog = tmp_path / "centroid.py"
    prog.write_text("import numpy as np\n"
                    "def solver(inputs):\n"
                    "    return np.mean(np.asarray(inputs['sensors'], float), axis=0)\n")
    args = ["stark-mini", "--family", "stark.localization.*", "--n", "3", "--solver", f"code:{prog}"]
    ref, out = tmp_path / "ref", tmp_path / "out"
    assert main(["run", *args, "--out", str(ref), "--quiet"]) == 0
    rc = _kill_midway(_cmd(*args, "--out", str(out)), out / "answers.jsonl", 5, signal.SIGTERM)
    assert rc == -signal.SIGTERM
    assert (out / "answers.jsonl").read_text().count("\n") < 18
    assert main(["run", "stark-mini", "--resume", str(out), "--quiet"]) == 0  # options from run.json
    _same_run(ref, out)


def _oracle(tasks_path):
    tasks = [json.loads(l) for l in tasks_path.read_text().splitlines()]

    def reply(body):
        users = [m["content"] for m in body["messages"] if m["role"] == "user"]
        t = next(t for t in tasks if users[0].startswith(t["prompt"]))
        gold = t["steps"][len(users) - 1]["answer"] if t["steps"] else t["answer"]
        return f"[RESULTS_START] {json.dumps(gold)} [RESULTS_END]"
    return reply


def test_live_model_run_interrupted_and_resumed_equals_uninterrupted(tmp_path):
    """Ctrl-C (SIGINT) a live-model run; the resume asks only what was not answered (the
    response cache pays nothing twice) and ends with the files of an uninterrupted run."""
    tasks = tmp_path / "tasks.jsonl"
    assert main(["generate", "quickstart", "--n", "1", "-o", str(tasks)]) == 0
    reply = _oracle(tasks)
    ref, out = tmp_path / "ref", tmp_path / "out"
    # The interrupted run's 9th request is held until the signal has been sent, so the run
    # cannot finish first on a loaded machine (it did: exit 0 instead of 130); it is released
    # if the run still runs 5 s after the signal, so a run that answers SIGINT only once its
    # request returns is not left waiting on the test.
    hold, released = {"from": None}, threading.Event()

    def script(body, n):
        if hold["from"] is not None and n >= hold["from"]:
            released.wait(60)
        return 200, Slow(0.03, reply(body))

    with FakeChatServer(script) as srv:
        common = ["quickstart", "--n", "1", "--solver", "openai:fake", "--base-url", srv.url, "--max-steps", "3"]
        assert main(["run", *common, "--out", str(ref), "--quiet"]) == 0
        n_ref = len(srv.requests)
        hold["from"] = n_ref + 8
        try:
            rc = _kill_midway(_cmd(*common, "--out", str(out)), out / "answers.jsonl", 6, signal.SIGINT,
                              after_signal=released.set)
        finally:
            released.set()
            hold["from"] = None
        assert rc == 130
        assert json.loads((out / "summary.json").read_text())["interrupted"] is True
        first = len(srv.requests) - n_ref
        assert main(["run", "quickstart", "--base-url", srv.url, "--resume", str(out), "--quiet"]) == 0
        resumed = len(srv.requests) - n_ref - first
    assert 0 < first < n_ref and resumed <= n_ref - first + 1  # at most the request in flight twice
    _same_run(ref, out)


def test_one_identity_rule_for_resume_and_out():
    """`--out` and `--resume` compared a run's identity by two rules (until 2026-12-05 `--out`
    left out `--max-steps`, `--mode` and `--step-budget`): one rule now, each difference named
    by its option."""
    from stsim.benchmarks.runner import RUN_IDENTITY, RUN_OPTIONS, identity_differences, run_identity
    from stsim.benchmarks.suites import get_suite
    suite = get_suite("quickstart")
    assert set(RUN_OPTIONS) == set(RUN_IDENTITY)
    now = run_identity(suite, "baseline", seed=0, n=None, only=None, max_steps=-1, data=None,
                       solver_options=None, condition=None)
    assert set(now) == set(RUN_IDENTITY) and now["max_steps"] == suite.max_steps
    # a run.json of an older stsim: no mode, step_budget or conditions recorded
    older = {k: v for k, v in now.items() if k not in ("mode", "step_budget", "context", "language", "structured")}
    assert identity_differences(older, now, suite) == []
    # a condition not recorded counts as its default; one given now differs from it
    other = run_identity(suite, "baseline", seed=0, n=None, only=None, max_steps=-1, data=None,
                         solver_options=None, condition={"context": "distractors"})
    assert identity_differences(older, other, suite) == ["--context: 'none' there, 'distractors' now"]
    # --n giving each family the count it had is the same run; another count is not
    own = {k for f, k in suite.families.items()}
    assert len(own) == 1
    same = {**now, "n_per_family": own.pop()}
    assert identity_differences(now, same, suite) == []
    more = {**now, "n_per_family": same["n_per_family"] + 1, "max_steps": 3}
    assert identity_differences(now, more, suite) == [
        f"--n: each family's own count, {same['n_per_family']} there, {more['n_per_family']} now",
        f"--max-steps: {suite.max_steps} there, 3 now"]
    # another suite: its counts are not this suite's, so --n is named as given there
    cardinal = get_suite("cardinal")
    there = run_identity(cardinal, "baseline", seed=0, n=3, only=None, max_steps=-1, data=None,
                         solver_options=None, condition=None)
    assert identity_differences(now, there, cardinal) == ["SUITE: 'quickstart' there, 'cardinal' now",
                                                          "--n: each family's own count there, 3 now"]
