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


def test_score_writes_its_files_before_printing(tmp_path, monkeypatch, capsys):
    tasks, answers, out = tmp_path / "t.jsonl", tmp_path / "a.jsonl", tmp_path / "out"
    assert main(["generate", "quickstart", "--n", "1", "--family", "stark.localization.range", "-o", str(tasks)]) == 0
    # one unreadable reply (an empty answers file is refused)
    answers.write_text('{"task_id": "quickstart/stark.localization.range/000000", "text": "no idea"}\n')
    import builtins
    real_print = builtins.print

    def closed_pipe(*args, **kwargs):
        if kwargs.get("file") is None:
            raise BrokenPipeError
        return real_print(*args, **kwargs)
    monkeypatch.setattr(builtins, "print", closed_pipe)
    main(["score", str(tasks), str(answers), "--out", str(out)])
    monkeypatch.setattr(builtins, "print", real_print)
    assert (out / "scores.jsonl").exists() and (out / "summary.json").exists()


def test_calculus_out_needs_gqr(tmp_path, capsys):
    assert main(["calculus", "show", "rcc8", "--out", str(tmp_path / "x")]) == 2
    assert "--format gqr" in capsys.readouterr().err


def test_the_legend_is_short_by_default_and_whole_with_explain(tmp_path, capsys):
    """The quickstart's legend was 8 paragraphs under its 14-column table: by default a few
    lines saying what the columns are and how to get the rest; --explain prints every note, and
    the table is the same either way."""
    from stsim.scoring.report import legend
    out = tmp_path / "run"
    argv = ["run", "quickstart", "--n", "1", "--family", "stark.tracking.event*", "--out", str(out), "--quiet"]
    assert main(argv) == 0
    short = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert main([*argv, "--resume", str(out), "--explain"]) == 0
    full = capsys.readouterr().out
    table = [ln for ln in short.splitlines() if ln.startswith(("family", "stark."))]
    assert len(table) == 3 and table == [ln for ln in full.splitlines() if ln.startswith(("family", "stark."))]
    notes = short[short.index(table[-1]) + len(table[-1]):short.index("'baseline' is")].strip().splitlines()
    assert len(notes) == 5 and notes[-1].endswith(f"add --explain (stsim score {out}/tasks.jsonl {out}/answers.jsonl --explain)")
    # n counts every item, failed ones too (it said 'scored items')
    assert notes[0].startswith("n: items, failed ones included (a tracking task: one per scored step); trim.err")
    assert "STARK trim / inst / fail" in notes[2]
    # the unit of each measure, as --explain says it ('eucl' had none in the short legend)
    assert "('measure': eucl in the task's plane units, km for event tasks; abs in s or min; rel.L2 a ratio)" \
        in notes[0]
    assert "eucl = Euclidean distance in the task's plane units (km for event tasks)" in full
    # the one error mixing units is said in the short legend too, with the family's dt unit
    assert notes[1] == ("event_xyt: the error is the norm of (dx km, dy km, dt) together, mixing units "
                        "(dt in stark.tracking.event_xyt: min).")
    assert legend(summary["families"], trim=0.10, max_steps=10) in full
    assert "STARK's own convention (its released" not in short
    assert "'n' counts items, failed ones included: one per scored step" in full and "event_xyt families answer [x, y, t0]" in full


def test_the_explain_hint_reprints_the_run_just_made(tmp_path, capsys):
    """The hint under the table said `stsim run SUITE --explain`, dropping --n, --family,
    --seed, --solver, --trim: run as shown it made another run (in a new folder).  Then it was
    `--resume DIR --explain`, which rewrote the finished run's summary.json (its wall time and
    resume record).  It now is `stsim score` of the run's two files with the run's --trim:
    run as shown it prints the same table and the full legend and changes no file; an
    interrupted run's hint stays the resume (it continues the run)."""
    import shlex
    from stsim.cli import build_parser
    from stsim.cli.run import _explain_command
    from stsim.scoring.report import legend
    out = tmp_path / "my run"  # a space: the command is shell-quoted
    assert main(["run", "quickstart", "--n", "2", "--seed", "3", "--family", "stark.localization.r*",
                 "--solver", "random", "--trim", "0.2", "--out", str(out), "--quiet"]) == 0
    short = capsys.readouterr().out
    hint = f"stsim score '{out}/tasks.jsonl' '{out}/answers.jsonl' --trim 0.2 --explain"
    assert f"Full legend: add --explain ({hint})\n" in short
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(shlex.split(hint)[1:]) == 0
    full = capsys.readouterr().out
    table = [ln for ln in short.splitlines() if ln.startswith(("family", "stark."))]
    assert len(table) == 3 and table == [ln for ln in full.splitlines() if ln.startswith(("family", "stark."))][:3]
    assert legend(json.loads((out / "summary.json").read_text())["families"], trim=0.2, max_steps=10) in full
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    args = build_parser().parse_args(["run", "quickstart", "--trim", "0.2"])
    interrupted = {"out_dir": str(out), "interrupted": True, "trim": 0.2, "max_steps": 10}
    assert _explain_command(args, interrupted).endswith(f"--resume '{out}' --trim 0.2 --explain")


def test_explain_command_names_the_options_off_their_defaults():
    """``explain_command`` writes the two files (shell-quoted) and only the options whose value
    is not the score parser's default (max steps 10, trim 0.1, no tolerance, the default
    rubric), floats as ``%g``; run's hint reaches it through plain values."""
    from stsim.cli.score import explain_command
    assert explain_command("a b/t.jsonl", "ans.jsonl", max_steps=10, trim=0.1, tolerance=None,
                           rubric="default") == "stsim score 'a b/t.jsonl' ans.jsonl --explain"
    assert explain_command("t", "a", max_steps=0, trim=0.25, tolerance=1e-3, rubric="default") == \
        "stsim score t a --max-steps 0 --trim 0.25 --tolerance 0.001 --explain"


def test_the_explain_hint_of_score_is_this_score_again(tmp_path, capsys):
    """`stsim score`'s hint said `stsim score TASKS ANSWERS --explain`: copied with the files
    filled in, it dropped --trim / --max-steps / --tolerance / --rubric and printed another
    table.  It now is this score again with --explain (no --out: the files are written, the
    hint only reprints the table)."""
    import shlex
    tasks, answers = tmp_path / "t.jsonl", tmp_path / "a.jsonl"
    assert main(["generate", "quickstart", "--n", "3", "--family", "stark.localization.range", "-o", str(tasks)]) == 0
    first = json.loads(tasks.read_text().splitlines()[0])
    answers.write_text(json.dumps({"task_id": first["id"], "value": first["answer"]}) + "\n")
    capsys.readouterr()
    assert main(["score", str(tasks), str(answers), "--trim", "0.2", "--tolerance", "0.5",
                 "--out", str(tmp_path / "s")]) == 0
    short = capsys.readouterr().out
    hint = f"stsim score {tasks} {answers} --trim 0.2 --tolerance 0.5 --explain"
    assert f"Full legend: add --explain ({hint})\n" in short
    assert main(shlex.split(hint)[1:]) == 0
    full = capsys.readouterr().out
    table = [ln for ln in short.splitlines() if ln.startswith(("family", "stark."))]
    assert len(table) == 4 and table == [ln for ln in full.splitlines() if ln.startswith(("family", "stark."))]
    assert "'n' counts items, failed ones included." in full


def test_legend_says_n_counts_failed_items(tmp_path, capsys):
    """The legend said 'n: scored items', but n counts every item, failed ones included."""
    tasks, answers = tmp_path / "t.jsonl", tmp_path / "a.jsonl"
    assert main(["generate", "quickstart", "--n", "3", "--family", "stark.localization.range", "-o", str(tasks)]) == 0
    first = json.loads(tasks.read_text().splitlines()[0])
    answers.write_text(json.dumps({"task_id": first["id"], "value": first["answer"]}) + "\n"
                       + json.dumps({"task_id": first["id"].replace("000000", "000001"), "text": "no idea"}) + "\n")
    assert main(["score", str(tasks), str(answers)]) == 0
    out = capsys.readouterr().out
    row = next(ln.split() for ln in out.splitlines() if ln.startswith("stark.localization.range"))
    assert row[1] == "3" and row[6] == "2"  # n = 3 items: 1 with an error, 2 failed
    assert "\nn: items, failed ones included; trim.err / RMS.err / median:" in out
    assert "scored items" not in out
    assert main(["score", str(tasks), str(answers), "--explain"]) == 0
    assert "'n' counts items, failed ones included." in capsys.readouterr().out
    # a table of accuracies has an n column too: its legend says what n is
    card, card_answers = tmp_path / "c.jsonl", tmp_path / "ca.jsonl"
    assert main(["generate", "cardinal", "--n", "2", "-o", str(card)]) == 0
    card_answers.write_text(json.dumps({"task_id": json.loads(card.read_text().splitlines()[0])["id"],
                                        "text": "no idea"}) + "\n")
    assert main(["score", str(card), str(card_answers)]) == 0
    assert "\nn: items, failed ones included.\n" in capsys.readouterr().out


def test_legends_state_the_trim_and_steps_the_table_was_made_with(tmp_path, capsys):
    """The legends under `stsim run` / `stsim score` said '10 %' trimmed and 'first 10 steps'
    whatever --trim and --max-steps were (`stsim run quickstart --trim 0.25` printed 'trim.err
    without the 10 % smallest and largest').  They now state the trim and steps used, and that
    'STARK best (Table 3)' is on the paper's scale only with its 10 % and 10 steps."""
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "2", "--family", "stark.tracking.range", "--trim", "0.25",
                 "--out", str(out), "--quiet"]) == 0
    short = capsys.readouterr().out
    assert "trim.err without the 25 % smallest and largest.\n" in short and "10 % smallest" not in short
    assert ("'STARK best (Table 3)' is the paper's best model on its own tasks, on that scale when made as the "
            "paper does (10 % trimmed, tracking over the first 10 steps), which --trim 0.25 is not.\n") in short
    tasks, answers = str(out / "tasks.jsonl"), str(out / "answers.jsonl")
    assert main(["score", tasks, answers, "--trim", "0.25", "--max-steps", "5", "--explain"]) == 0
    full = capsys.readouterr().out
    assert "one per scored step of a tracking task (the first 5, --max-steps), one per task otherwise." in full
    assert "trim.err is their root mean square after dropping the 25 % smallest and largest; STARK §4.1 drops 10 %." in full
    assert "one value per tracking instance over its first 5 steps pooled" in full
    assert "the mean of the per-item values after dropping the 25 % smallest and largest." in full
    assert ("'STARK best (Table 3)' is on this scale only with STARK's 10 % trim and first 10 steps, not with "
            "this table's --trim 0.25 and --max-steps 5.") in full
    assert "10 % smallest" not in full and "first 10 by default" not in full
    # --trim 0 trims nothing, --max-steps 0 scores every step
    assert main(["score", tasks, answers, "--trim", "0", "--max-steps", "0"]) == 0
    assert "trim.err: nothing trimmed (--trim 0), as RMS.err.\n" in capsys.readouterr().out
    assert main(["score", tasks, answers, "--trim", "0", "--max-steps", "0", "--explain"]) == 0
    full = capsys.readouterr().out
    assert "(every step, --max-steps)" in full and "over all its steps pooled" in full
    assert "trim.err is their root mean square with nothing dropped (--trim 0); STARK §4.1 drops 10 %." in full
    # the defaults: the paper's convention, said as before
    assert main(["score", tasks, answers, "--explain"]) == 0
    full = capsys.readouterr().out
    assert "after dropping the 10 % smallest and largest (STARK §4.1)." in full
    assert "over its first 10 steps pooled" in full and "'STARK best (Table 3)' is on this scale.\n" in full


def test_a_score_summary_records_the_trim_and_steps_of_its_figures(tmp_path, capsys):
    """`stsim score --out`'s summary.json held trimmed figures without the --trim or
    --max-steps that made them (a run's summary has both); it now records them, so that
    `stsim compare` also names a different --max-steps between two scores."""
    run = tmp_path / "run"
    assert main(["run", "quickstart", "--n", "1", "--family", "stark.tracking.range", "--out", str(run), "--quiet"]) == 0
    files = [str(run / "tasks.jsonl"), str(run / "answers.jsonl")]
    assert main(["score", *files, "--trim", "0.25", "--max-steps", "5", "--out", str(tmp_path / "s5")]) == 0
    assert main(["score", *files, "--max-steps", "0", "--out", str(tmp_path / "all")]) == 0
    s5, every = (json.loads((tmp_path / d / "summary.json").read_text()) for d in ("s5", "all"))
    assert (s5["trim"], s5["max_steps"], every["trim"], every["max_steps"]) == (0.25, 5, 0.1, None)
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "s5"), str(tmp_path / "all")]) == 0
    assert "the runs differ in max_steps: A 5, B None" in capsys.readouterr().err
