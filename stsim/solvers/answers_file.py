"""Answers files (``stsim score TASKS ANSWERS``): read any solver's answers, in every answer
format, and give each scored item an *outcome*.

One JSON object per line, keyed by ``task_id`` and ``step`` (``null`` or absent for
single-answer tasks), in one of three shapes::

    {"task_id": ..., "step": ..., "text": "... [RESULTS_START] [1.2, 3.4] [RESULTS_END]"}
    {"task_id": ..., "step": ..., "value": [1.2, 3.4]}
    {"task_id": ..., "step": ..., "status": "ok" | "refusal" | ..., "value": ..., "detail": ...}

``text`` is a raw model reply, read by the task's rubric and answer format (STARK Appendix 7.9
``[RESULTS_START] ... [RESULTS_END]`` by default); ``value`` is a typed answer, checked
against the format; the third shape is what ``stsim run`` writes to ``answers.jsonl``.

Outcomes (:data:`OUTCOMES`) of a scored item: ``correct`` / ``wrong`` (categorical formats;
numeric formats too when a tolerance is given: error <= tolerance), ``scored`` (numeric, no
tolerance: the error is in the metrics), ``format_failure`` (unreadable text, or a value that
does not fit the format), ``refusal``, ``missing`` (no line for the item) and ``no_answer``
(the solver gave up: no_estimate or a sandbox failure).
"""
from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Iterable

from ..answers import (LEGACY_RUBRICS, MAX_REPLY_CHARS, ParseError, RUBRICS, WHOLE_REPLY_RUBRICS, check_value,
                       get_format, parse_answer, reading_spec)
from ..records import ANSWER_STATUSES, Answer, RecordError, Score, Task, iter_jsonl

OUTCOMES = ("correct", "wrong", "scored", "format_failure", "refusal", "missing", "no_answer")


def _typed(task: Task, value: Any) -> Any:
    """Normalise a typed value in the task's format; raise ParseError (or TypeError, ...) if it
    does not fit: the rules of gold answers (:func:`stsim.answers.check_value`), so ``true`` in
    a point, a number given as the string ``"1.5"`` inside a list, or a NaN / infinite number
    (JSON ``NaN``, ``Infinity``, ``1e400``) is a format failure, never a score."""
    fmt = get_format(task.answer_format)
    spec = reading_spec(task)
    if isinstance(value, str):  # a typed answer given as text, e.g. "north" or "[1, 2]"
        return fmt.normalise(fmt.parse(value, spec), spec)
    return check_value(task.answer_format, value, spec, what="answer")


def _step_problem(task: Task, step: int | None) -> str | None:
    """Why ``step`` is not an item of ``task`` (``None`` when it is)."""
    if not task.steps:
        return None if step is None else (f"task {task.id} has a single answer, no steps (got step {step}; "
                                          "omit 'step' or give null)")
    indices = sorted(s.index for s in task.steps)
    if step is None:
        return f"task {task.id} is answered per step ({indices[0]}..{indices[-1]}) but the line has no 'step'"
    if step not in indices:
        return f"task {task.id} has no step {step} (steps {indices[0]}..{indices[-1]})"
    return None


def read_answers(path: str | Path, tasks_by_id: dict[str, Task]) -> tuple[list[Answer], list[str]]:
    """Read an answers JSONL against the tasks it answers.

    Returns:
        (answers, warnings): one :class:`Answer` per recognised line (the first line wins for a
        repeated item); one warning per ignored or ambiguous line, naming it (a repeated item,
        saying which line is kept; a step the task does not have; a line with both ``text`` and
        ``value``, of which ``text`` is used), one for all lines of unknown tasks and one for all
        replies longer than :data:`stsim.answers.MAX_REPLY_CHARS` (read from their end only) and
        one for those of them to a rubric that reads the whole reply (not read: format failures).
    Raises:
        RecordError: malformed file or line (not JSON, no ``task_id``, no answer field, a line
            of a scores file (``family`` and ``error`` / ``correct``, no ``text`` or ``value``), a
            ``step`` that is not an integer or null -- ``true`` included -- or a bad ``status``),
            naming file and line; a file with no line at all (empty or blank, refused as
            :func:`stsim.records.read_tasks` refuses an empty tasks file, not scored as every
            item missing); or a file none of whose lines answers a task of the tasks file (every
            ``task_id`` unknown: the answers of another suite, seed or ``--n``; or every line's
            ``step`` not one of its task's items).
    """
    answers: list[Answer] = []
    first_line: dict[tuple[str, int | None], int] = {}
    unknown = 0
    unknown_lines: list[str] = []
    warnings: list[str] = []
    lines = 0
    for lineno, obj in iter_jsonl(path):
        lines += 1
        where = f"{path}:{lineno}"
        if "task_id" not in obj:
            raise RecordError(f"{where}: missing 'task_id'")
        if "text" not in obj and "value" not in obj and "family" in obj and ("error" in obj or "correct" in obj):
            # a run's scores.jsonl: each line would be scored as a format failure
            raise RecordError(f"{where}: this is a line of a scores file ('family', 'error', 'correct'; no "
                              "'text' or 'value'), not an answer: give the answers file (a run's answers.jsonl)")
        step = obj.get("step")
        if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
            raise RecordError(f"{where}: 'step' must be an integer or null, got {json.dumps(step)}")
        task = tasks_by_id.get(str(obj["task_id"]))
        if task is None:
            unknown += 1
            if len(unknown_lines) < 5:
                unknown_lines.append(f"line {lineno} ({str(obj['task_id'])[:60]})")
            continue
        problem = _step_problem(task, step)
        if problem is not None:
            warnings.append(f"{where}: ignored: {problem}")
            continue
        key = (task.id, step)
        if key in first_line:
            item = f"task {task.id}" + (f" step {step}" if step is not None else "")
            warnings.append(f"{where}: ignored: a second answer for {item}; the first, "
                            f"on line {first_line[key]}, is kept")
            continue
        if "text" in obj and "value" in obj:
            warnings.append(f"{where}: has both 'text' and 'value'; 'text' (the model reply) is "
                            "scored and 'value' ignored")
        first_line[key] = lineno
        answers.append(_answer_of(obj, task, step, where))
    if not lines:  # as read_tasks: an empty file is refused, not scored as all missing
        raise RecordError(f"{path}: contains no answers (the file is empty or blank)")
    if warnings and not answers and not unknown:
        raise RecordError(f"{path}: none of its {len(warnings)} answer(s) is usable; first: {warnings[0]}")
    if unknown and not answers and not warnings:
        example = next(iter(tasks_by_id), None)
        raise RecordError(f"{path}: none of its {unknown} answer(s) has a task_id in the tasks file ("
                          + ", ".join(unknown_lines) + (", ..." if unknown > len(unknown_lines) else "")
                          + (f"; the tasks file's ids look like {example!r}" if example else "")
                          + "): answers of another suite, seed or --n?")
    if unknown:
        warnings.append(f"{path}: ignored {unknown} answer(s) whose task_id is not in the tasks file: "
                        + ", ".join(unknown_lines) + (", ..." if unknown > len(unknown_lines) else ""))
    if not answers:
        warnings.append(f"{path} holds no usable answers: every item counts as missing")
    long = [(a, tasks_by_id[a.task_id].meta.get("rubric", "stark")) for a in answers
            if a.text is not None and len(a.text) > MAX_REPLY_CHARS]
    unread = [a for a, rubric in long if rubric in WHOLE_REPLY_RUBRICS]
    cut = [a for a, rubric in long if rubric not in WHOLE_REPLY_RUBRICS and rubric != "stark-legacy"]
    if unread:
        warnings.append(f"{path}: {len(unread)} repl{'y' if len(unread) == 1 else 'ies'} longer than "
                        f"{MAX_REPLY_CHARS:,} characters to a question whose rubric reads the whole reply "
                        f"({', '.join(WHOLE_REPLY_RUBRICS)}; the first: task {unread[0].task_id}, "
                        f"{len(unread[0].text):,}) not read: format failures (stsim.answers.MAX_REPLY_CHARS)")
    if cut:
        warnings.append(f"{path}: {len(cut)} repl{'y' if len(cut) == 1 else 'ies'} longer than "
                        f"{MAX_REPLY_CHARS:,} characters (the first: task {cut[0].task_id}, "
                        f"{len(cut[0].text):,}) read from the last {MAX_REPLY_CHARS:,} only, where the "
                        "answer block is (stsim.answers.MAX_REPLY_CHARS; each answer's detail says so)")
    return answers, warnings


def _answer_of(obj: dict[str, Any], task: Task, step: int | None, where: str) -> Answer:
    solver = obj.get("solver") or "answers-file"
    if "text" in obj:
        rubric = task.meta.get("rubric", "stark")
        if rubric not in RUBRICS and rubric not in LEGACY_RUBRICS:
            raise RecordError(f"{where}: task {task.id} asks for rubric {rubric!r}; known: {', '.join(RUBRICS)}")
        return parse_answer(obj["text"], task_id=task.id, step=step, answer_format=task.answer_format,
                            rubric=rubric, spec=reading_spec(task), solver=solver)
    status = obj.get("status", "ok" if "value" in obj else None)
    if status is None:
        raise RecordError(f"{where}: an answer needs 'text' (model reply), 'value', or 'status'")
    if status not in ANSWER_STATUSES:
        raise RecordError(f"{where}: unknown status {status!r}; known: {', '.join(ANSWER_STATUSES)}")
    if status != "ok":
        return Answer(task.id, step, status, detail=obj.get("detail"), solver=solver)
    if "value" not in obj:  # not 'answer is null': the line has no value at all
        return Answer(task.id, step, "format_failure", detail="status 'ok' but no 'value' (the answer); a "
                      "model reply goes in 'text'", solver=solver)
    try:
        value = _typed(task, obj.get("value"))
    except (ParseError, TypeError, ValueError, IndexError, KeyError) as exc:
        return Answer(task.id, step, "format_failure", detail=f"value does not fit format "
                      f"{task.answer_format}: {exc}", solver=solver)
    return Answer(task.id, step, "ok", value=value, solver=solver)


def outcome(score: Score, tolerance: float | None = None) -> str:
    """The :data:`OUTCOMES` entry of one scored item."""
    if score.status == "ok":
        if score.correct is not None:
            return "correct" if score.correct else "wrong"
        if tolerance is not None and score.error is not None:
            return "correct" if score.error <= tolerance else "wrong"
        return "scored"
    if score.status in ("format_failure", "bad_shape"):
        return "format_failure"
    if score.status in ("refusal", "missing"):
        return score.status
    return "no_answer"


def tag_outcomes(scores: Iterable[Score], tolerance: float | None = None) -> list[Score]:
    """Write each score's outcome into ``score.extra['outcome']`` (in place); return the list."""
    out = list(scores)
    for s in out:
        s.extra["outcome"] = outcome(s, tolerance)
    return out


def outcome_counts(scores: Iterable[Score]) -> dict[str, dict[str, int]]:
    """Per family (and ``"all"``): how many items had each outcome (tagged scores)."""
    per: dict[str, Counter] = defaultdict(Counter)
    for s in scores:
        o = s.extra.get("outcome") or outcome(s)
        per[s.family][o] += 1
        per["all"][o] += 1
    return {f: {o: c[o] for o in OUTCOMES if c[o]} for f, c in sorted(per.items())}


def format_outcomes(counts: dict[str, dict[str, int]]) -> str:
    """A fixed-width table of :func:`outcome_counts`."""
    cols = [o for o in OUTCOMES if any(o in c for c in counts.values())]
    w = max(len(f) for f in counts)
    lines = [f"{'family':<{w}}  " + "  ".join(f"{c:>14}" for c in cols)]
    for f, c in counts.items():
        lines.append(f"{f:<{w}}  " + "  ".join(f"{c.get(o, 0):>14}" for o in cols))
    return "\n".join(lines)
