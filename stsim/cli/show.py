"""``stsim show``: one task (prompt, gold, baseline answer, how each reply was read), drawn with
``--png``."""
from __future__ import annotations

import sys
from pathlib import Path

from ..records import RecordError
from .common import CLIError


def add_show(sub) -> None:
    """``stsim show TASK_ID --tasks FILE [--answers FILE] [--png OUT]``."""
    sh = sub.add_parser("show", help="one task: prompt, gold, baseline answer, how a reply was read; "
                        "--png draws the scenario")
    sh.add_argument("task_id", help="the task's id, as in the tasks file (e.g. quickstart/stark.tracking.range/000000)")
    sh.add_argument("--tasks", type=Path, required=True, metavar="FILE", help="tasks JSONL holding the task")
    sh.add_argument("--answers", type=Path, default=None, metavar="FILE",
                    help="answers JSONL: show how each reply to this task was read and scored")
    sh.add_argument("--png", type=Path, default=None, metavar="OUT", help="draw the scenario into this PNG file")


def cmd_show(args) -> int:
    """``stsim show``: describe one task (and how each reply to it was read); ``--png`` draws it."""
    from ..benchmarks.show import ShowError, describe, draw
    from ..records import read_task_lines
    numbered = read_task_lines(args.tasks)
    tasks = [t for _, t in numbered]
    line, task = next(((n, t) for n, t in numbered if t.id == args.task_id), (None, None))
    if task is None:
        near = [t.id for t in tasks if args.task_id in t.id][:5] or [t.id for t in tasks[:3]]
        raise CLIError(f"no task {args.task_id!r} in {args.tasks}; e.g. {', '.join(near)}")
    from ..registry import validate_task
    from ..scoring.audit_relations import RELATION_FAMILIES
    try:  # as score and audit do: a task whose inputs break its family's rules is named, not drawn
        validate_task(task)
    except RecordError as exc:
        if task.family not in RELATION_FAMILIES:
            raise CLIError(f"{exc} (in {args.tasks}, line {line})") from None
        # a degenerate relation item (e.g. a released one `stsim audit` tags [degenerate]): shown
        print(f"stsim: warning: {exc}", file=sys.stderr)
    answers = None
    if args.answers is not None:
        from ..solvers.answers_file import read_answers
        # against every task of the file: an answers file that answers others but not this one
        # is not "answers of another suite" (it says 'no answer for this task')
        answers, _ = read_answers(args.answers, {t.id: t for t in tasks})
    if args.png is not None and not args.png.parent.is_dir():
        raise CLIError(f"--png {args.png}: folder {args.png.parent} does not exist")
    if args.png is not None and args.png.suffix.lower() != ".png":  # matplotlib picks the format by it
        raise CLIError(f"--png {args.png}: give a file name ending in .png, e.g. {args.png.with_suffix('.png')}")
    print(describe(task, answers))
    if args.png is not None:
        try:
            fig, _ = draw(task, args.png)
        except ShowError as exc:
            raise CLIError(str(exc)) from None
        except OSError as exc:
            raise CLIError(f"--png {args.png}: cannot write ({exc.strerror or exc})") from None
        print(f"wrote {args.png}", file=sys.stderr)
    return 0
