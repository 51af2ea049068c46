"""The ``stsim`` command.

::

    stsim list                                  suites and families
    stsim run SUITE [--solver S] [--n N] [--seed S] [--out DIR] [--data DIR]
    stsim generate SUITE [--n N] [--seed S] [-o FILE]
    stsim score TASKS ANSWERS [--out DIR]
    stsim audit TASKS
    stsim calculus list | show NAME [--format json|gqr] [--out DIR]

Exit codes: 0 success; 1 the audit found violations; 2 bad input (message on stderr, no
traceback); 130 interrupted (files written so far are kept).
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
import sys
from pathlib import Path
from typing import Sequence

from . import __version__
from .records import RecordError, UnknownName


class CLIError(Exception):
    """A user error: printed as ``stsim: error: ...`` with exit code 2."""


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=int, default=None, metavar="N",
                   help="tasks per family (default: the suite's own count)")
    p.add_argument("--seed", type=int, default=0, help="suite seed (default 0)")
    p.add_argument("--family", default=None, metavar="GLOB",
                   help="only families matching this pattern, e.g. 'stark.localization.*'")


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="stsim", description="Generate, solve and score verified "
                                 "spatial and temporal reasoning benchmarks.")
    ap.add_argument("--version", action="version", version=f"stsim {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    sub.add_parser("list", help="list suites, families and solvers")

    r = sub.add_parser("run", help="generate (or load), solve, score and report a suite")
    r.add_argument("suite")
    r.add_argument("--solver", default="baseline", help="solver spec (default: baseline)")
    _add_common(r)
    r.add_argument("--out", type=Path, default=None, help="output folder (default runs/<suite>-<time>/)")
    r.add_argument("--data", type=Path, default=None, help="data folder or archive for data suites")
    r.add_argument("--max-steps", type=int, default=-1, metavar="K",
                   help="tracking steps scored per task (default: suite's, 10; 0 = all)")
    r.add_argument("--trim", type=float, default=0.10, help="trim fraction each side (default 0.10)")
    r.add_argument("--workers", type=int, default=1, help="solver processes (default 1)")
    r.add_argument("--quiet", action="store_true", help="no progress bar")

    g = sub.add_parser("generate", help="write a suite's tasks as JSONL")
    g.add_argument("suite")
    _add_common(g)
    g.add_argument("--data", type=Path, default=None, help="data folder or archive for data suites")
    g.add_argument("-o", "--out", default="-", help="output file (default: standard output)")

    s = sub.add_parser("score", help="score an answers JSONL against a tasks JSONL")
    s.add_argument("tasks", type=Path)
    s.add_argument("answers", type=Path)
    s.add_argument("--out", type=Path, default=None, help="also write scores.jsonl and summary.json here")
    s.add_argument("--max-steps", type=int, default=10, metavar="K",
                   help="tracking steps scored per task (default 10; 0 = all)")
    s.add_argument("--trim", type=float, default=0.10)

    c = sub.add_parser("calculus", help="list the qualitative calculi or print one's tables")
    c.add_argument("action", choices=["list", "show"])
    c.add_argument("name", nargs="?", help="calculus for `show` (e.g. rcc8, IA, RCC-22)")
    c.add_argument("--format", choices=["json", "gqr"], default="json")
    c.add_argument("--out", type=Path, default=None,
                   help="with --format gqr: write NAME.comp, NAME.conv and NAME.spec into this directory")
    a = sub.add_parser("audit", help="check every gold answer against its readings and noise model, "
                       "or (relation tasks) against shapely / Allen on the printed numbers")
    a.add_argument("tasks", type=Path)
    a.add_argument("--limit", type=int, default=50, help="violations to print (default 50)")
    return ap


def _cmd_list(args) -> int:
    from .benchmarks.solvers import SOLVERS
    from .benchmarks.suites import all_suites
    from .registry import FAMILIES
    import stsim.generators  # noqa: F401
    print("Suites:")
    for name, s in sorted(all_suites().items()):
        print(f"  {name:<18} {s.description}")
    print("\nFamilies:")
    w = max(len(f) for f in FAMILIES)
    for name, f in sorted(FAMILIES.items()):
        print(f"  {name:<{w}}  [{f.answer_format}] {f.description}")
    print("\nSolvers: " + ", ".join(sorted(SOLVERS)) + "   (e.g. --solver baseline, baseline:grid)")
    return 0


def _cmd_run(args) -> int:
    from .benchmarks.report import format_table, legend
    from .benchmarks.runner import run
    max_steps = None if args.max_steps == 0 else args.max_steps
    if args.n is not None and args.n < 1:
        raise CLIError("--n must be at least 1")
    summary = run(args.suite, args.solver, n=args.n, seed=args.seed, out_dir=args.out, data=args.data,
                  max_steps=max_steps, trim=args.trim, workers=args.workers, progress=not args.quiet,
                  only=args.family)
    print(f"suite {summary['suite']}  solver {summary['solver']}  seed {summary['seed']}  "
          f"tasks {summary['n_tasks']}  ({summary['wall_s']:.1f} s)")
    print(format_table(summary["families"]))
    for result in summary.get("analyses", {}).values():
        print(result["headline"])
    print(f"\n{legend(summary['families'])}\nWrote {summary['out_dir']}/ (tasks.jsonl, answers.jsonl, scores.jsonl, summary.json)")
    return 0


def _cmd_generate(args) -> int:
    from .benchmarks.suites import get_suite
    from .records import dumps
    if args.n is not None and args.n < 1:
        raise CLIError("--n must be at least 1")
    suite = get_suite(args.suite)
    tasks = suite.tasks(n=args.n, seed=args.seed, data=args.data, only=args.family)
    fh = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8", newline="\n")
    count = 0
    try:
        for t in tasks:
            fh.write(dumps(t.to_dict()) + "\n")
            count += 1
    finally:
        if fh is not sys.stdout:
            fh.close()
    if args.out != "-":
        print(f"wrote {count} tasks to {args.out}", file=sys.stderr)
    return 0


def read_answers(path: Path, tasks_by_id: dict) -> tuple[list, list[str]]:
    """Read an answers JSONL: each line ``{"task_id", "step"?, "text"}`` (model text, parsed
    by the task's rubric) or ``{"task_id", "step"?, "status", "value"}`` (typed answers, as
    ``stsim run`` writes them).  Returns (answers, warnings)."""
    from .answers import parse_answer
    from .records import Answer, iter_jsonl
    answers, warnings = [], []
    unknown = 0
    for lineno, obj in iter_jsonl(path):
        where = f"{path}:{lineno}"
        if "task_id" not in obj:
            raise RecordError(f"{where}: missing 'task_id'")
        task = tasks_by_id.get(obj["task_id"])
        if task is None:
            unknown += 1
            continue
        step = obj.get("step")
        if step is not None and not isinstance(step, int):
            raise RecordError(f"{where}: 'step' must be an integer or null")
        if "text" in obj:
            answers.append(parse_answer(obj["text"], task_id=task.id, step=step,
                                        answer_format=task.answer_format,
                                        rubric=task.meta.get("rubric", "stark"),
                                        spec=task.meta.get("answer_spec"), solver="answers-file"))
        elif "status" in obj:
            try:
                answers.append(Answer(task.id, step, obj["status"], value=obj.get("value"),
                                      detail=obj.get("detail"), solver=obj.get("solver")))
            except RecordError as exc:
                raise RecordError(f"{where}: {exc}") from None
        else:
            raise RecordError(f"{where}: an answer needs 'text' (model reply) or 'status' and 'value'")
    if unknown:
        warnings.append(f"ignored {unknown} answer(s) whose task_id is not in the tasks file")
    if not answers and not unknown:
        warnings.append(f"{path} holds no answers: every item counts as missing")
    return answers, warnings


def _cmd_score(args) -> int:
    from .benchmarks.report import format_table, legend
    from .benchmarks.random_guess import random_reference
    from .benchmarks.scoring import run_analyses, score_answers, summarise
    from .records import read_tasks, write_jsonl
    from .registry import validate_task
    tasks = read_tasks(args.tasks)
    for t in tasks:
        validate_task(t)
    answers, warnings = read_answers(args.answers, {t.id: t for t in tasks})
    for w in warnings:
        print(f"stsim: warning: {w}", file=sys.stderr)
    scores = score_answers(tasks, answers, max_steps=None if args.max_steps == 0 else args.max_steps)
    fams = summarise(scores, args.trim)
    for fam, ref in random_reference(tasks, None if args.max_steps == 0 else args.max_steps).items():
        fams.setdefault(fam, {}).update(ref)
    print(format_table(fams))
    extra = _qstr_breakdown(tasks, answers)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    analyses = run_analyses(tasks, answers, args.out)
    for result in analyses.values():
        print(result["headline"])
    print("\n" + legend(fams))
    if args.out is not None:
        write_jsonl(args.out / "scores.jsonl", scores)
        summary = {"tasks": str(args.tasks), "answers": str(args.answers), "families": fams, **extra}
        if analyses:
            summary["analyses"] = analyses
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
        print(f"Wrote {args.out}/ (scores.jsonl, summary.json)")
    return 0


def _qstr_breakdown(tasks, answers) -> dict:
    """For QSTRBench tasks answered with model text: TP/FP/FN, invalid relation names and
    guess rates per calculus and question type (printed, and returned for summary.json)."""
    qt = [t for t in tasks if t.family.startswith(("qstr.", "qstrx."))]
    replies = {a.task_id: a.text for a in answers if a.text is not None}
    if not qt or not replies:
        return {}
    from .qstr.scoring import score_replies, summarise_scores
    rows = summarise_scores(score_replies(qt, replies))
    print(f"\n{'calculus/question':<20} {'n':>5} {'acc':>7} {'TP':>6} {'FP':>6} {'FN':>6} "
          f"{'invalid':>7} {'guess':>9}")
    for key, r in rows.items():
        print(f"{key:<20} {r['n']:>5} {r['accuracy']:>7.4f} {r['tp']:>6} {r['fp']:>6} {r['fn']:>6} "
              f"{r['invalid_names']:>7} {r['guess_rate']:>9.2e}")
    return {"qstr": rows}


def _cmd_audit(args) -> int:
    from .benchmarks.audit import audit_tasks
    from .records import read_tasks
    from .registry import validate_task
    from .benchmarks.audit import AuditResult
    from .benchmarks.audit_relations import RELATION_FAMILIES
    tasks = read_tasks(args.tasks)
    valid, report = [], []
    for t in tasks:
        try:
            validate_task(t)
            valid.append(t)
        except RecordError as exc:
            if t.family not in RELATION_FAMILIES:
                raise
            report.append(AuditResult(t.id, None, False, 1.0, f"[degenerate] {exc}"))
    report += audit_tasks(valid)
    bad = [r for r in report if not r.ok]
    skipped = sum(1 for r in report if r.skipped)
    checked = len(report) - skipped
    for r in bad[: args.limit]:
        print(f"FAIL {r.task_id}" + (f" step {r.step}" if r.step is not None else "") +
              f": {r.reason} (violation {r.violation:.6g})")
    if len(bad) > args.limit:
        print(f"... and {len(bad) - args.limit} more")
    tags = Counter(r.reason.split("]", 1)[0] + "]" for r in bad if r.reason.startswith("["))
    if tags:
        print("findings by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(tags.items())))
    print(f"audited {checked} item(s) of {len(tasks)} task(s): {len(bad)} inconsistent"
          + (f", {skipped} skipped (family has no audit rule)" if skipped else ""))
    return 1 if bad else 0


def _cmd_calculus(args) -> int:
    from .qstr import all_calculi, get_calculus
    from .qstr.calculus import CalculusError
    from .qstr.export import to_gqr, to_json
    if args.action == "list":
        for c in all_calculi().values():
            ct = "composition table" if c.has_composition else "no composition table"
            print(f"  {c.key:<6} {c.abbrev:<7} {len(c):>3} relations  {ct}  {c.title}")
        return 0
    if not args.name:
        raise CLIError("calculus show needs a NAME (see `stsim calculus list`)")
    try:
        cal = get_calculus(args.name)
    except CalculusError as exc:
        raise CLIError(str(exc)) from None
    if args.format == "json":
        print(json.dumps(to_json(cal), indent=2, ensure_ascii=False))
        return 0
    try:
        files = to_gqr(cal)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if args.out is None:
        sys.stdout.write(files["comp"])
        print(f"# converse ({cal.key}.conv)")
        sys.stdout.write(files["conv"])
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    for ext, text in files.items():
        (args.out / f"{cal.key}.{ext}").write_text(text, encoding="utf-8")
    print(f"wrote {cal.key}.comp, {cal.key}.conv, {cal.key}.spec to {args.out}", file=sys.stderr)
    return 0


COMMANDS = {"calculus": _cmd_calculus, "list": _cmd_list, "run": _cmd_run, "generate": _cmd_generate, "score": _cmd_score,
            "audit": _cmd_audit}


def main(argv: Sequence[str] | None = None) -> int:
    from .benchmarks.solvers import SolverError
    from .benchmarks.suites import SuiteError
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (CLIError, RecordError, SuiteError, SolverError) as exc:
        print(f"stsim: error: {exc}", file=sys.stderr)
        return 2
    except UnknownName as exc:  # registries name what is known
        print(f"stsim: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        where = f"; files written so far are kept in {exc}" if str(exc) else ""
        print(f"stsim: interrupted{where}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
