"""``stsim score`` and ``stsim compare``: an answers file scored against its tasks (tables,
outcomes, legends, scores.jsonl and summary.json), and two runs compared per family."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from ..records import RecordError
from .common import (CLIError, command_again, int_at_least, out_dir, refuse_overwrite, refuse_run_folder,
                     settle_staged, stage_in, trim_fraction, written)


def add_score(sub) -> None:
    """``stsim score TASKS ANSWERS``."""
    s = sub.add_parser("score", help="score an answers JSONL against a tasks JSONL")
    s.add_argument("tasks", type=Path, help="the full tasks JSONL (stsim generate -o, or a run's tasks.jsonl)")
    s.add_argument("answers", type=Path, help="one JSON object per line: {\"task_id\", \"step\", \"text\"} "
                   "(a model's reply) or {\"task_id\", \"step\", \"value\"} (docs/answer-formats.md)")
    s.add_argument("--out", type=Path, default=None,
                   help="also write scores.jsonl and summary.json here (and an analysis's files, e.g. cardinal/); "
                        "a DIR holding such files with other content is refused (exit 2, nothing changed), "
                        "the same score again changes nothing")
    s.add_argument("--cluster", default=None, metavar="local:N|tcp://HOST:PORT",
                   help="score on a Dask cluster in chunks of tasks (docs/distributed.md)")
    s.add_argument("--max-steps", type=int_at_least(0), default=10, metavar="K",
                   help="tracking steps scored per task (default 10; 0 = all)")
    s.add_argument("--trim", type=trim_fraction, default=0.10, help="trim fraction each side (default 0.10)")
    s.add_argument("--explain", action="store_true",
                   help="print the full legend under the table (every column, convention and source), not the short one")
    s.add_argument("--tolerance", type=float, default=None, metavar="X",
                   help="numeric items count as correct when their error is at most X")
    s.add_argument("--rubric", choices=("default", "stark-legacy", "qstrbench-published"), default="default",
                   help="how reply texts are read: default (our strict readers, docs/answer-formats.md); "
                        "stark-legacy (STARK's released reader: first block, signs dropped, unreadable -> "
                        "[5, 5] guess) for STARK tasks; qstrbench-published (QSTRBench's bin/process.py: "
                        "strict, Jaccard and guess-normalised scores) for QSTRBench tasks")


def cmd_score(args) -> int:
    """``stsim score``: score the answers file against the tasks file and print the report
    (with ``--out``: scores.jsonl and summary.json too, unless the folder holds such files with
    other bytes: exit 2, nothing changed)."""
    from ..solvers.answers_file import read_answers
    from ..records import read_task_lines
    from ..registry import validate_task
    if args.tolerance is not None and not 0 <= args.tolerance < float("inf"):
        raise CLIError(f"--tolerance must be a finite non-negative number, got {args.tolerance} "
                       "(inf would count every readable answer as correct)")
    if args.cluster is not None:
        from ..benchmarks.cluster import check_cluster_spec
        check_cluster_spec(args.cluster)  # before anything is read or written
    numbered = read_task_lines(args.tasks)
    tasks = [t for _, t in numbered]
    for line, t in numbered:
        try:
            validate_task(t)
        except RecordError as exc:   # the file and line as well as the task: which of the two files it is
            raise CLIError(f"{exc} (in {args.tasks}, line {line})") from None
    if args.tolerance is not None:
        from ..answers import get_format
        if not any(get_format(t.answer_format).numeric for t in tasks):
            kinds = sorted({t.answer_format for t in tasks})
            raise CLIError(f"--tolerance {args.tolerance}: {args.tasks} has no task with a numeric error "
                           f"(formats point, scalar, time, vector); its formats ({', '.join(kinds[:6])}"
                           f"{', ...' if len(kinds) > 6 else ''}) are scored right or wrong by their own rules "
                           f"(geoqa: docs/answer-formats.md), so the option would be ignored")
    legacy = args.rubric != "default"
    if legacy:
        from ..answers import LEGACY_RUBRICS
        base = LEGACY_RUBRICS[args.rubric]
        mine = [t for t in tasks if t.meta.get("rubric", "stark") == base]
        if not mine:
            raise CLIError(f"--rubric {args.rubric} reads replies to {base!r}-rubric tasks; {args.tasks} has none")
        for t in mine:
            t.meta["rubric"] = args.rubric
    answers, warnings = read_answers(args.answers, {t.id: t for t in tasks})
    steps = None if args.max_steps == 0 else args.max_steps
    # the summary's settings: an earlier score with others (or another file) cannot be this one
    settings = {"tasks": str(args.tasks), "answers": str(args.answers), "tolerance": args.tolerance,
                "rubric": args.rubric, "trim": args.trim, "max_steps": steps}
    if args.out is not None:          # inputs are read first: a bad one leaves no folder behind
        refuse_run_folder(args.out, "--out", "scoring", "that run's scores.jsonl and summary.json")
        _keep_earlier_score(args.out, settings)
        out_dir(args.out)
    # a folder already holding files gets the score made beside them (a hidden folder in it),
    # then moved in file by file unless one of them would replace other bytes (settle_staged)
    stage = stage_in(args.out, ".stsim-score-") if args.out is not None else None
    try:
        return _score(args, tasks, answers, warnings, legacy, settings, stage)
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)


def _score(args, tasks, answers, warnings, legacy, settings, stage) -> int:
    """The score itself, its files (into ``stage``, a staging folder in ``--out``, when given:
    :func:`settle_staged` then moves them in or refuses) and its report."""
    from ..solvers.answers_file import format_outcomes, outcome_counts, tag_outcomes
    from ..solvers.random_guess import random_reference
    from ..scoring.report import format_table, legend, short_legend
    from ..scoring.score import run_analyses, score_answers, summarise
    from ..records import write_jsonl
    steps = settings["max_steps"]
    for w in warnings:
        print(f"stsim: warning: {w}", file=sys.stderr)
    if args.cluster is not None:
        from ..benchmarks.cluster import Cluster, score_on_cluster
        with Cluster(args.cluster) as cl:
            scores = score_on_cluster(cl.client, tasks, answers, steps)
    else:
        scores = score_answers(tasks, answers, max_steps=steps)
    tag_outcomes(scores, args.tolerance)
    fams = summarise(scores, args.trim)
    for fam, ref in random_reference(tasks, steps).items():
        fams.setdefault(fam, {}).update(ref)
    counts = outcome_counts(scores)
    for fam, row in fams.items():
        row["outcomes"] = counts[fam]
    lenient = _lenient_counts(tasks, answers)
    for fam, k in lenient.items():
        fams.setdefault(fam, {})["lenient_recoverable"] = k
    from ..scoring.stark_metric import stark_item, summarise_stark
    stark_items = [it for t in tasks if (it := stark_item(t, answers, steps, legacy=legacy)) is not None]
    for fam, row in summarise_stark(stark_items, args.trim).items():
        fams.setdefault(fam, {}).update(row)
    extra, qstr_table = _qstr_breakdown(tasks, answers)
    target = stage if stage is not None else args.out  # where the files are written first
    analyses = run_analyses(tasks, answers, target, named_in=args.out)
    published = None
    if args.rubric == "qstrbench-published":
        from ..scoring.qstrbench_published import summarise_published
        published = summarise_published(tasks, answers)
        extra["qstrbench_published"] = published
    unchanged = False
    if args.out is not None:  # files first, so a closed pipe on the report loses nothing
        write_jsonl(target / "scores.jsonl", scores)
        summary = {**settings,  # trim and max_steps as in a run's summary
                   "families": fams, "outcomes": counts["all"], "warnings": warnings, **extra}
        if analyses:
            summary["analyses"] = analyses
        (target / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        if stage is not None:  # moved in (or refused) and removed: not listed under 'Wrote'
            unchanged = settle_staged(stage, args.out, f"--out {args.out}",
                                      f"{_whose(args.out)} with other content than this score", "scoring")
    print(f"rubric: {args.rubric}" + (" (STARK's released reader: signs dropped, unreadable replies "
                                      "scored as its [5, 5] guess)" if args.rubric == "stark-legacy" else
                                      " (strict readers, docs/answer-formats.md)"))
    print(format_table(fams))
    print("\nOutcomes per item" + (f" (numeric: correct if error <= {args.tolerance})" if args.tolerance is not None
                                   else " ('scored': numeric, see the error metrics above)") + ":")
    print(format_outcomes(counts))
    if qstr_table:
        print(qstr_table)
    if published:
        from ..scoring.qstrbench_published import format_published
        print("\n" + format_published(published))
        print("(QSTRBench's released scorer bin/process.py: strict = exact set, names compared as written; "
              "jaccard = |X & A| / |X | A|; norm.* = (score - guess) / (1 - guess), seed 000 §4)")
    for result in analyses.values():
        print(result["headline"])
    fails = sum(1 for a in answers if a.status == "format_failure" and a.text is not None)
    if fails:
        print(f"\nstrictness: a lenient reader (words dropped: '4.49 s', 'x = 9.2, y = 1.6', 'approximately "
              f"[0.43, 1.46] units') would have read {sum(lenient.values())} of the {fails} format failure(s) "
              "with reply text (per family: 'lenient_recoverable' in summary.json); they stay failures.")
    shown = {"trim": args.trim, "max_steps": steps}  # what the table's figures were made with
    if args.explain:
        print("\n" + legend(fams, **shown))
    else:                                            # the hint: this score again, with --explain
        again = explain_command(args.tasks, args.answers, max_steps=args.max_steps, trim=args.trim,
                                tolerance=args.tolerance, rubric=args.rubric)
        print("\n" + short_legend(fams, f"add --explain ({again})", **shown))
    if args.out is not None:
        print(f"{args.out}/ already held this score, byte for byte: nothing changed ({', '.join(written(args.out))})"
              if unchanged else f"Wrote {args.out}/ ({', '.join(written(args.out))})")
    return 0


def explain_command(tasks, answers, *, max_steps: int, trim: float, tolerance: float | None,
                    rubric: str) -> str:
    """``stsim score TASKS ANSWERS --explain``, shell-quoted, with each of ``--max-steps``,
    ``--trim``, ``--tolerance`` and ``--rubric`` whose value here differs from its default
    (``max_steps`` 0: every step): the command that reprints a score's table with the full
    legend.  Without ``--out``: its files are already written, the hint only reprints the table."""
    from types import SimpleNamespace
    values = SimpleNamespace(max_steps=max_steps, trim=trim, tolerance=tolerance, rubric=rubric)
    return command_again(["stsim", "score", str(tasks), str(answers)], values, ["score", "T", "A"],
                         tuple((a, "--" + a.replace("_", "-")) for a in vars(values))) + " --explain"


#: what ``stsim score --out DIR`` writes (besides an analysis's own folder, e.g. DIR/cardinal/)
SCORE_FILES = ("scores.jsonl", "summary.json")


def _earlier_summary(out: Path) -> dict | None:
    """The ``summary.json`` an earlier ``stsim score`` left in ``out`` (``None``: none, or not one)."""
    try:
        old = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return old if isinstance(old, dict) else None


def _whose(out: Path) -> str:
    """' of an earlier `stsim score` (of ANSWERS)' when ``out`` holds one's summary, else ''."""
    old = _earlier_summary(out)
    return f" of an earlier `stsim score` (of {old['answers']})" if old is not None and "answers" in old else ""


def _keep_earlier_score(out: Path, settings: dict) -> None:
    """Refuse (exit 2) at once, before scoring, an ``--out`` folder holding a file ``stsim
    score`` writes (scores.jsonl / summary.json) that cannot be this score's: a summary.json
    that is not an earlier score's with the same ``settings`` (files, tolerance, rubric, trim,
    max_steps; the summary holds them, so its bytes would differ), in ``run --out``'s words
    (:func:`refuse_overwrite`).  The same score again goes on: its files are compared byte for
    byte when made (:func:`settle`), and refused then if any differs."""
    mine = [n for n in SCORE_FILES if (out / n).exists()]
    if not mine:
        return
    old = _earlier_summary(out)
    if not (out / "summary.json").exists() or \
            (old is not None and all(k in old and old[k] == v for k, v in settings.items())):
        return
    refuse_overwrite(f"--out {out}", f"holds {', '.join(mine)}{_whose(out)}", len(mine), "scoring")


def _lenient_counts(tasks, answers) -> dict[str, int]:
    """Per family: format failures (with reply text, numeric formats) that
    :func:`stsim.answers.lenient_read` would have read."""
    from ..answers import lenient_read
    by_id = {t.id: t for t in tasks}
    out: dict[str, int] = {}
    for a in answers:
        t = by_id.get(a.task_id)
        if t is None or a.status != "format_failure" or a.text is None:
            continue
        if lenient_read(a.text, t.answer_format, t.meta.get("answer_spec")) is not None:
            out[t.family] = out.get(t.family, 0) + 1
    return out


def _qstr_breakdown(tasks, answers) -> tuple[dict, str]:
    """For QSTRBench tasks answered with model text: TP/FP/FN, invalid relation names and
    guess rates per calculus and question type; returns (rows for summary.json, printed table)."""
    qt = [t for t in tasks if t.family.startswith(("qstr.", "qstrx."))]
    replies = {a.task_id: a.text for a in answers if a.text is not None}
    if not qt or not replies:
        return {}, ""
    from ..qstr.scoring import score_replies, summarise_scores
    rows = summarise_scores(score_replies(qt, replies))
    lines = [f"\n{'calculus/question':<20} {'n':>5} {'acc':>7} {'unans.':>6} {'TP':>6} {'FP':>6} {'FN':>6} "
             f"{'invalid':>7} {'guess':>9}"]
    for key, r in rows.items():
        lines.append(f"{key:<20} {r['n']:>5} {r['accuracy']:>7.4f} {r['unanswered']:>6} {r['tp']:>6} {r['fp']:>6} "
                     f"{r['fn']:>6} {r['invalid_names']:>7} {r['guess_rate']:>9.2e}")
    lines.append("(unans.: questions with no reply or no answer in it, wrong in 'acc' and left out of TP/FP/FN; "
                 "TP/FP/FN: relations correctly given / wrongly given / missed in the answered questions; "
                 "invalid: names that are not relations of the calculus; guess: chance of the exact set by "
                 "uniform guessing)")
    return {"qstr": rows}, "\n".join(lines)


def add_compare(sub) -> None:
    """``stsim compare RUN_A RUN_B``."""
    c = sub.add_parser("compare", help="per family, run B against run A on the items both runs scored: relative "
                       "change in trimmed RMSE or accuracy difference, each with a paired bootstrap 95%% CI")
    c.add_argument("run_a", type=Path, help="run folder (or scores.jsonl), e.g. direct answer")
    c.add_argument("run_b", type=Path, help="run folder (or scores.jsonl), e.g. code interpreter")
    c.add_argument("--trim", type=trim_fraction, default=0.25, help="fraction trimmed each side (STARK §4.4: 0.25)")
    c.add_argument("--json", action="store_true", help="print JSON instead of a table")


def cmd_compare(args) -> int:
    """``stsim compare``: print run B against run A per family."""
    from ..scoring.compare import compare_runs, family_keys, format_comparison, run_mismatches
    if not 0 <= args.trim < 0.5:
        raise CLIError(f"--trim must be in [0, 0.5), got {args.trim}")
    rows = compare_runs(args.run_a, args.run_b, args.trim)
    for w in run_mismatches(args.run_a, args.run_b, family_keys(args.run_a, args.run_b)):
        print(f"stsim: warning: {w}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2, sort_keys=True))
    else:
        print(f"A = {args.run_a}\nB = {args.run_b}\n")
        print(format_comparison(rows, args.trim))
        if any(r["kind"] == "numeric" for r in rows.values()):
            print(f"\nchange = (RMSE B - RMSE A) / RMSE A, with {args.trim:.0%} of each run's errors on the common "
                  f"items trimmed each side (RMSE t{100 * args.trim:g}%; STARK §4.4; `stsim run` and `stsim score` "
                  "trim 10 % by default); negative: B is better.")
        if any(r["kind"] == "categorical" for r in rows.values()):
            print("\nacc = accuracy on the common items, failures counting as wrong; B - A > 0: B is better.")
        print("95% CI: paired bootstrap percentile interval (1000 resamples of the common items).")
    return 0
