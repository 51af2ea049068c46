"""Bad input never costs what is already written, and every help page renders (found by a
bad-input pass over each entry point after the merges of 2026-11-30)."""
from __future__ import annotations

import json

import pytest

from stsim.cli import build_parser, main


def test_every_help_page_renders(capsys):
    """argparse formats help strings with %: a bare '95% CI' made `stsim --help` crash."""
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    top = " ".join(capsys.readouterr().out.split())
    assert "exit codes: 0 ok; 1 `audit` found" in top and "130 interrupted" in top   # README's list too
    sub = next(a for a in build_parser()._actions if a.__class__.__name__ == "_SubParsersAction")
    for name in sub.choices:
        with pytest.raises(SystemExit) as exc:
            main([name, "--help"])
        assert exc.value.code == 0, name
    assert "95% CI" in top + capsys.readouterr().out


def _parsers(parser, name="stsim"):
    """(name, parser) of every command and subcommand at every depth."""
    import argparse
    yield name, parser
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for sub, p in a.choices.items():
                yield from _parsers(p, f"{name} {sub}")


def test_every_argument_of_every_command_has_help():
    """`stsim audit --help` showed a bare `tasks`, `stsim sandbox run --help` a bare `file`,
    `stsim run --help` a bare `--temperature` / `--max-tokens` / `--request-timeout`."""
    import argparse
    bare = [f"{name} {a.option_strings or a.dest}" for name, p in _parsers(build_parser())
            for a in p._actions if not a.help and a.dest != "help"
            and not isinstance(a, argparse._SubParsersAction)]  # those list their commands' help
    assert bare == []


def test_only_run_generate_export_help_ends_with_suites(capsys):
    """`stsim sandbox run --help` ended with the suites and solvers of `stsim run` (its prog
    also ends in 'run')."""
    for name, _ in _parsers(build_parser()):
        with pytest.raises(SystemExit):
            main([*name.split()[1:], "--help"])
        out = capsys.readouterr().out
        assert ("\nsuites: " in out) == (name in ("stsim run", "stsim generate", "stsim export")), name
        assert ("solvers (--solver):" in out) == (name == "stsim run"), name


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
    # one unreadable reply (an empty answers file is refused)
    answers.write_text('{"task_id": "quickstart/stark.localization.range/000000", "text": "no idea"}\n')
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


@pytest.mark.parametrize("cmd,cond", [
    (["run", "quickstart", "--n", "1", "--quiet"], ["--language", "de"]),
    (["run", "quickstart", "--n", "1", "--quiet"], ["--context", "triples-json"]),
    (["run", "geoqa-mini", "--family", "geoqa.nothing-here*", "--n", "1", "--quiet"], ["--language", "de"]),
    (["generate", "qstrbench", "--n", "1"], ["--language", "all"]),
])
def test_geoqa_condition_on_a_suite_without_geoqa_is_refused(tmp_path, capsys, cmd, cond):
    """`stsim run quickstart --language de` used to run the English tasks (the transform leaves
    non-geoqa tasks unchanged) while the header, run.json and summary.json said 'language de':
    refused (exit 2), naming the option and the suite, and nothing is written."""
    out = tmp_path / ("run" if cmd[0] == "run" else "tasks.jsonl")
    rc = main([*cmd, *cond, "--out" if cmd[0] == "run" else "-o", str(out)])
    err = capsys.readouterr().err
    if "nothing-here" in cmd[3]:  # --family matching nothing: the family, not the condition, is named
        assert rc == 2 and "no family of suite 'geoqa-mini' matches" in err
    else:
        assert rc == 2
        assert f"stsim: error: {' '.join(cond)}: an evaluation condition of geoqa questions only" in err
        assert f"suite {cmd[1]!r}" in err and "geoqa-mini" in err
    assert not out.exists()


def test_geoqa_condition_on_a_geoqa_family_still_runs(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "geoqa-mini", "--family", "geoqa.coordinates.city", "--n", "1", "--quiet",
                 "--language", "de", "--out", str(out)]) == 0
    assert '"language": "de"' in (out / "summary.json").read_text()


class _Terminal:
    """A stand-in stderr that says it is a terminal and keeps what is written."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s
        return len(s)

    def flush(self):
        pass

    def isatty(self):
        return True


@pytest.mark.parametrize("extra, shown", [([], True), (["--quiet"], False)])
def test_generate_shows_progress_on_a_terminal(tmp_path, monkeypatch, extra, shown):
    """`stsim generate geoqa -o FILE` ran ~4 min (qstrbench-extended ~2 min) with no sign of life:
    a progress bar of the suite's task count, as `stsim run` has; --quiet turns it off."""
    term = _Terminal()
    monkeypatch.setattr("sys.stderr", term)
    out = tmp_path / "t.jsonl"
    assert main(["generate", "quickstart", "--n", "2", "--family", "stark.localization.*",
                 "-o", str(out), *extra]) == 0
    assert len(out.read_text().splitlines()) == 12  # 6 localisation families x 2
    assert ("generate quickstart:" in term.text and "0/12 [" in term.text) is shown  # total known up front
    assert "wrote 12 tasks to" in term.text


def test_generate_to_standard_output_shows_no_progress(monkeypatch, capsys):
    term = _Terminal()
    monkeypatch.setattr("sys.stderr", term)
    assert main(["generate", "quickstart", "--n", "1", "--family", "stark.localization.range"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1
    assert "generate quickstart" not in term.text


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs Linux's /dev/full")
def test_generate_onto_a_full_disk_says_so(capsys):
    """Writing to a full disk (/dev/full always is) ended in an OSError traceback (exit 1)."""
    assert main(["generate", "quickstart", "--n", "1", "-o", "/dev/full", "--quiet"]) == 2
    assert ("stsim: error: /dev/full: cannot write (No space left on device); /dev/full is incomplete"
            in capsys.readouterr().err)


def test_run_onto_a_full_disk_keeps_what_was_written_and_resumes(tmp_path, monkeypatch, capsys):
    """The disk fills while `stsim run` writes summary.json (without --out): a message naming
    the run's folder and the --resume command, exit 2; the resume then completes the folder."""
    import errno
    from pathlib import Path
    real = Path.write_text

    def full(self, *a, **k):
        if self.name == "summary.json":
            raise OSError(errno.ENOSPC, "No space left on device", str(self))
        return real(self, *a, **k)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Path, "write_text", full)
    argv = ["run", "quickstart", "--n", "1", "--family", "stark.localization.range", "--quiet"]
    assert main(argv) == 2
    (folder,) = (tmp_path / "runs").iterdir()
    rel = f"runs/{folder.name}"
    assert (f"stsim: error: {rel}/summary.json: cannot write (No space left on device); what was "
            f"written so far is kept: once there is room, `stsim run quickstart --resume {rel}` continues"
            in capsys.readouterr().err)
    assert (folder / "answers.jsonl").read_text().count("\n") == 1
    monkeypatch.setattr(Path, "write_text", real)
    assert main(["run", "quickstart", "--resume", rel, "--quiet"]) == 0
    assert "resumed" in (folder / "summary.json").read_text()


@pytest.mark.parametrize("extra, shown", [([], True), (["--quiet"], False)])
def test_export_shows_progress_on_a_terminal(tmp_path, monkeypatch, extra, shown):
    term = _Terminal()
    monkeypatch.setattr("sys.stderr", term)
    out = tmp_path / "e"
    assert main(["export", "quickstart", "--n", "1", "--family", "stark.localization.*", "--format", "jsonl",
                 "-o", str(out), *extra]) == 0
    assert len((out / "tasks.jsonl").read_text().splitlines()) == 6
    assert ("export quickstart:" in term.text and "0/6 [" in term.text) is shown


def test_export_and_score_help_name_what_they_take(capsys):
    for cmd in ("export", "score"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
    out = capsys.readouterr().out
    assert "the suite to export" in out and "suites: cardinal," in out  # export lists the suites
    assert "the full tasks JSONL" in out and '{"task_id", "step", "text"}' in out  # score's two files


def test_language_help_lists_the_codes(capsys):
    """--language's codes were only in the error message and docs/geoqa.md: run's and
    generate's --help list them all (the geoqa languages' own table)."""
    from stsim.geoqa.languages import LANGUAGES
    for cmd in ("run", "generate"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        out = " ".join(capsys.readouterr().out.split())
        assert ", ".join(LANGUAGES) in out and len(LANGUAGES) >= 9, cmd


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    run = tmp_path_factory.mktemp("kept") / "r1"
    assert main(["run", "quickstart", "--n", "1", "--family", "stark.localization.range", "--out", str(run),
                 "--quiet"]) == 0
    return run


@pytest.mark.parametrize("argv, needle", [
    # generate -o onto a run's tasks.jsonl replaced it with other tasks (another --n), exit 0
    (["generate", "quickstart", "--n", "2", "-o", "{run}/tasks.jsonl"], "is a file of the `stsim run`"),
    (["generate", "quickstart", "--n", "2", "-o", "{run}/answers.jsonl"], "is a file of the `stsim run`"),
    # export -o RUN replaced the run's tasks.jsonl, exit 0
    (["export", "quickstart", "--n", "2", "--format", "jsonl", "-o", "{run}"], "holds a `stsim run`"),
    (["export", "quickstart", "--n", "2", "--format", "chat", "-o", "{run}"], "holds a `stsim run`"),
    # show --png onto a run's summary.json: a matplotlib ValueError traceback ('json' not supported)
    (["show", "quickstart/stark.localization.range/000000", "--tasks", "{run}/tasks.jsonl",
      "--png", "{run}/summary.json"], "give a file name ending in .png"),
])
def test_no_other_command_writes_over_a_run(run_folder, capsys, argv, needle):
    before = {p: p.read_bytes() for p in run_folder.rglob("*") if p.is_file()}
    assert main([a.format(run=run_folder) for a in argv]) == 2
    err = capsys.readouterr().err
    assert "stsim: error: " in err and needle in err and "Traceback" not in err
    assert {p: p.read_bytes() for p in run_folder.rglob("*") if p.is_file()} == before


def test_generate_may_still_add_a_new_file_beside_a_run(run_folder, capsys):
    new = run_folder / "prompts.jsonl"
    assert main(["generate", "quickstart", "--n", "1", "--family", "stark.localization.range", "--prompts-only",
                 "-o", str(new), "--quiet"]) == 0
    assert new.read_text().count("\n") == 1
    new.unlink()


@pytest.mark.parametrize("cmd", [["run", "quickstart"], ["generate", "quickstart"],
                                 ["export", "quickstart", "--format", "jsonl", "-o", "x"],
                                 ["fidelity", "quickstart", "--data", "x"]])
def test_a_huge_n_is_bad_input_not_a_memory_error(capsys, cmd):
    """`stsim run quickstart --n 99999999999999999999` made a list of every task key first:
    a MemoryError traceback, or the machine's OOM killer (exit 137)."""
    with pytest.raises(SystemExit) as exc:
        main([*cmd, "--n", "99999999999999999999"])
    assert exc.value.code == 2
    assert "must be at most 1,000,000 tasks per family" in capsys.readouterr().err


def test_task_keys_are_counted_and_walked_without_a_list():
    """Memory does not grow with --n: the total is counted, the keys are walked one by one."""
    import tracemalloc
    from stsim.benchmarks.suites import get_suite
    suite = get_suite("stark")
    n = 100_000
    assert suite.count_tasks(3) == len(suite.task_keys(3)) == sum(
        1 for _ in suite.iter_task_keys(3))
    next(suite.tasks(n=1))  # imports outside the traced part
    tracemalloc.start()
    try:
        total = suite.count_tasks(n)
        first = next(suite.tasks(n=n))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert total == 30 * n  # 30 generated STARK families, none exhaustive (capped)
    assert first.id.endswith("/000000") and peak < 20e6, peak  # the list of 3e6 keys: ~300 MB


def test_score_refuses_to_overwrite_an_earlier_score(tmp_path, capsys):
    """`stsim score T A --out D` where D held an earlier score replaced its scores.jsonl and
    summary.json (and D/cardinal/), exit 0.  Now exit 2 in `run --out`'s words, nothing
    touched; a folder of other files still takes a score."""
    runs = {}
    for solver in ("baseline", "random"):
        runs[solver] = tmp_path / solver
        assert main(["run", "cardinal", "--n", "1", "--solver", solver, "--out", str(runs[solver]), "--quiet"]) == 0
    out = tmp_path / "scored"
    first = runs["baseline"]
    assert main(["score", str(first / "tasks.jsonl"), str(first / "answers.jsonl"), "--out", str(out)]) == 0
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert {"scores.jsonl", "summary.json", "report.json"} <= {p.name for p in before}
    capsys.readouterr()
    other = runs["random"]
    assert main(["score", str(other / "tasks.jsonl"), str(other / "answers.jsonl"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err == (f"stsim: error: --out {out}: holds scores.jsonl, summary.json of an earlier `stsim score` "
                   f"(of {first / 'answers.jsonl'}); scoring here would overwrite them: give another --out, "
                   "or remove them\n")
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    own = tmp_path / "own"
    own.mkdir()
    (own / "summary.json").write_text("my notes\n")
    assert main(["score", str(other / "tasks.jsonl"), str(other / "answers.jsonl"), "--out", str(own)]) == 2
    assert (f"--out {own}: holds summary.json; scoring here would overwrite it: give another --out, or remove it"
            in capsys.readouterr().err)
    assert (own / "summary.json").read_text() == "my notes\n" and not (own / "scores.jsonl").exists()
    (own / "summary.json").unlink()
    (own / "notes.txt").write_text("mine\n")
    assert main(["score", str(other / "tasks.jsonl"), str(other / "answers.jsonl"), "--out", str(own)]) == 0
    assert (own / "notes.txt").read_text() == "mine\n" and (own / "scores.jsonl").is_file()


def test_score_out_accepts_the_same_score_again_and_refuses_other_bytes(tmp_path, capsys):
    """`stsim score T A --out D` run twice refused the second time (exit 2) though it would
    write the very same bytes, unlike `generate -o` / `export -o`.  Now the same score again
    exits 0 and changes nothing (not even a file's time); a score whose files would differ
    (here: the answers file changed under the same name) is still refused, exit 2, nothing
    changed, naming the files; no staging folder is left behind either way."""
    run = tmp_path / "run"
    assert main(["run", "cardinal", "--n", "1", "--out", str(run), "--quiet"]) == 0
    capsys.readouterr()
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes((run / "answers.jsonl").read_bytes())
    out = tmp_path / "scored"
    argv = ["score", str(run / "tasks.jsonl"), str(answers), "--out", str(out)]
    assert main(argv) == 0
    snap = lambda: {str(p.relative_to(out)): (p.read_bytes(), p.stat().st_mtime_ns)  # noqa: E731
                    for p in sorted(out.rglob("*")) if p.is_file()}
    before = snap()
    assert set(before) == {"scores.jsonl", "summary.json", "cardinal/report.json", "cardinal/confusion.csv",
                           "cardinal/confusion.png"}
    summary = json.loads(before["summary.json"][0])
    assert summary["analyses"]["cardinal."]["files"][0] == str(out / "cardinal" / "report.json")
    first = capsys.readouterr().out
    assert main(argv) == 0
    again = capsys.readouterr().out
    assert snap() == before and [p.name for p in out.iterdir() if p.name.startswith(".")] == []
    assert again.endswith(f"{out}/ already held this score, byte for byte: nothing changed "
                          "(cardinal/, scores.jsonl, summary.json)\n")
    assert again.replace(again.splitlines()[-1], "") == first.replace(first.splitlines()[-1], "")  # same report
    # a folder holding part of it (and a file of its own) gets the rest, the rest untouched
    (out / "summary.json").unlink()
    (out / "notes.txt").write_text("mine\n")
    assert main(argv) == 0
    assert f"Wrote {out}/ (cardinal/, notes.txt, scores.jsonl, summary.json)" in capsys.readouterr().out
    after = snap()
    assert after.pop("notes.txt")[0] == b"mine\n" and after["summary.json"][0] == before["summary.json"][0]
    assert {k: v for k, v in after.items() if k != "summary.json"} == \
        {k: v for k, v in before.items() if k != "summary.json"}
    # other bytes under the same command: refused when made, nothing changed
    rows = [json.loads(ln) for ln in answers.read_text().splitlines()]
    rows[0] = {"task_id": rows[0]["task_id"], "step": None, "text": "no idea"}
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = snap()
    assert main(argv) == 2
    cap = capsys.readouterr()
    assert cap.out == ""
    assert cap.err == (f"stsim: error: --out {out}: holds cardinal/confusion.csv, cardinal/confusion.png, "
                       f"cardinal/report.json, scores.jsonl, summary.json of an earlier `stsim score` (of {answers}) "
                       "with other content than this score; scoring here would overwrite them: give another --out, "
                       "or remove them\n")
    assert snap() == before and [p.name for p in out.iterdir() if p.name.startswith(".")] == []


def test_generate_refuses_to_overwrite_a_file_with_other_content(tmp_path, capsys):
    """`stsim generate ... -o FILE` replaced an existing FILE without a word, exit 0.  Now exit
    2, FILE byte for byte as it was and no stray file beside it; the same output again (the
    same bytes) is allowed and leaves FILE untouched; /dev/null still takes any output."""
    out = tmp_path / "tasks.jsonl"
    assert main(["generate", "cardinal", "--n", "1", "-o", str(out)]) == 0
    before = out.read_bytes()
    capsys.readouterr()
    for argv in (["generate", "quickstart", "--n", "1"], ["generate", "cardinal", "--n", "2"],
                 ["generate", "cardinal", "--n", "1", "--prompts-only"]):
        assert main([*argv, "-o", str(out)]) == 2, argv
        err = capsys.readouterr().err
        assert err.startswith(f"stsim: error: -o {out}: exists, holding other content than the ") and \
            err.endswith("task(s) made now; writing here would overwrite it: give another -o, or remove it\n")
        assert out.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["tasks.jsonl"]
    mine = tmp_path / "notes.txt"
    mine.write_text("precious\n")
    assert main(["generate", "cardinal", "--n", "1", "-o", str(mine)]) == 2
    assert mine.read_text() == "precious\n"
    assert main(["generate", "cardinal", "--n", "1", "-o", str(out)]) == 0  # the same bytes again
    assert "already holds these 2 tasks, byte for byte: left as it was" in capsys.readouterr().err
    assert out.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "tasks.jsonl"]
    assert main(["generate", "cardinal", "--n", "1", "-o", "/dev/null"]) == 0


def test_interrupted_generate_onto_an_existing_file_leaves_it_as_it_was(tmp_path, capsys, interrupt_generate):
    out = tmp_path / "tasks.jsonl"
    out.write_text("precious\n")
    interrupt_generate(3)
    assert main(["generate", "quickstart", "--n", "2", "-o", str(out)]) == 130
    assert (f"stsim: interrupted: {out} is unchanged: the 2 task(s) made before the interrupt were not "
            "written into it") in capsys.readouterr().err
    assert out.read_text() == "precious\n" and [p.name for p in tmp_path.iterdir()] == ["tasks.jsonl"]


def test_export_refuses_to_overwrite_files_with_other_content(tmp_path, capsys):
    """A second `stsim export --format chat -o D` of another suite replaced D/prompts.jsonl
    without a word, exit 0 (so did every format: parquet / hf even a README.md of one's own).
    Now exit 2, D byte for byte as it was and no stray folder in it; the same export again,
    or one whose files are new to D, still writes."""
    out = tmp_path / "exp"
    assert main(["export", "cardinal", "--n", "1", "--format", "chat", "-o", str(out)]) == 0
    before = {p: p.read_bytes() for p in out.rglob("*")}
    capsys.readouterr()
    for argv in (["quickstart", "--n", "1"], ["cardinal", "--n", "2"], ["cardinal", "--n", "1", "--mode", "ci"]):
        assert main(["export", *argv, "--format", "chat", "-o", str(out)]) == 2, argv
        assert capsys.readouterr().err == (f"stsim: error: -o {out}: holds prompts.jsonl with other content than "
                                           "this export; exporting here would overwrite it: give another -o, or "
                                           "remove it\n")
        assert {p: p.read_bytes() for p in out.rglob("*")} == before
    assert main(["export", "cardinal", "--n", "1", "--format", "chat", "-o", str(out)]) == 0  # the same again
    assert {p: p.read_bytes() for p in out.rglob("*")} == before
    assert main(["export", "quickstart", "--n", "1", "--format", "csv", "-o", str(out)]) == 0  # a new file
    assert {p.name for p in out.iterdir()} == {"prompts.jsonl", "tasks.csv"}
    (out / "README.md").write_text("my notes\n")
    before = {p: p.read_bytes() for p in out.rglob("*")}
    assert main(["export", "quickstart", "--n", "1", "--format", "parquet", "-o", str(out)]) == 2
    assert f"-o {out}: holds README.md with other content than this export" in capsys.readouterr().err
    assert {p: p.read_bytes() for p in out.rglob("*")} == before


@pytest.mark.parametrize("argv, said", [
    (["generate", "quickstart", "--mode", "ci"], "--mode ci: chooses the system prompt of the prompts a model is "
     "shown, which only --prompts-only writes; generate without --prompts-only writes the full tasks (no system "
     "prompt, every tracking step), so it would be ignored: use it with --prompts-only"),
    (["generate", "geoqa-mini", "--mode", "agentic"], "--mode agentic: chooses the system prompt"),
    (["generate", "quickstart", "--max-steps", "3"], "--max-steps 3: chooses the tracking steps asked of the "
     "prompts a model is shown, which only --prompts-only writes"),
    (["export", "quickstart", "--format", "csv", "--mode", "ci"], "--mode ci: chooses the system prompt of the "
     "prompts a model is shown, which only --format chat writes; --format csv writes the full tasks"),
    (["export", "quickstart", "--format", "inspect", "--mode", "ci"], "--mode ci: chooses the system prompt of the "
     "prompts a model is shown, which only --format chat writes; --format "
     "inspect asks in direct-answer mode only (docs/inspect.md), so it would be ignored: use it with --format chat"),
    (["export", "quickstart", "--format", "jsonl", "--max-steps", "2"], "--max-steps 2: chooses the tracking steps "
     "asked of the prompts a model is shown, which only --format chat or inspect writes"),
])
def test_prompt_options_where_no_prompt_is_written_are_refused(tmp_path, capsys, argv, said):
    """`stsim generate quickstart --mode ci` without --prompts-only wrote the full tasks, exit 0,
    --mode silently ignored (its help says 'with --prompts-only'); so were --max-steps there
    and both in `export` formats that write no prompt (inspect: no ci mode).  Now exit 2 before
    anything is written, an existing output byte for byte as it was."""
    out = tmp_path / "out"
    out.write_text("precious\n") if argv[0] == "generate" else out.mkdir()
    assert main([*argv, "-o", str(out)]) == 2
    assert f"stsim: error: {said}" in capsys.readouterr().err
    assert out.read_text() == "precious\n" if argv[0] == "generate" else list(out.iterdir()) == []
