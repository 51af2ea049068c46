"""Score answers against tasks: one :class:`~stsim.records.Score` per scored item, and a
per-family summary.

The same code scores every solver (baseline, answers file, live model, sandboxed code).  An
item without an ``ok`` answer is a *failure* (no_estimate, format_failure, refusal, missing,
or a sandbox outcome); failures are counted, never silently dropped, and have no error value.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable

from ..answers import get_format
from ..records import Answer, Score, Task
from .metrics import median_error, rmse, trimmed_rmse


def scored_steps(task: Task, max_steps: int | None) -> list[int | None]:
    """Item keys of a task: ``[None]`` for single-answer tasks, else the first ``max_steps``
    step indices (STARK scores the first 10 tracking steps)."""
    if not task.steps:
        return [None]
    steps = [s.index for s in task.steps]
    return steps if max_steps is None else steps[:max_steps]


def gold_of(task: Task, step: int | None) -> Any:
    if step is None:
        return task.answer
    return next(s.answer for s in task.steps if s.index == step)


def _labels(task: Task) -> dict[str, Any]:
    """Extras every score of a task carries: its breakdown labels (``meta["breakdown"]``, e.g.
    predicate x geometry pair, Allen relation; STARK Tables 29-31) and the format's chance level."""
    extra: dict[str, Any] = {}
    if isinstance(task.meta.get("breakdown"), dict):
        extra["breakdown"] = {str(k): str(v) for k, v in task.meta["breakdown"].items()}
    fmt = get_format(task.answer_format)
    if not fmt.numeric:
        chance = fmt.chance(task.meta.get("answer_spec"))
        if chance is not None:
            extra["chance"] = chance
    elif ((task.answer_format == "time" or (task.answer_format == "vector" and task.family.endswith("event_xyt")))
          and isinstance(task.inputs.get("time_unit"), str)):
        # the unit of a time error (s, min): a time, or the t of an x-y-t vector; a field
        # family's vector (temperatures, its inputs' time_unit h naming the sampling) has none
        extra["time_unit"] = task.inputs["time_unit"]
    return extra


def score_item(task: Task, step: int | None, answer: Answer | None) -> Score:
    """Score one item.  Numeric formats get ``error``; categorical ones ``correct`` (and
    ``extra["partial"]`` for formats with partial credit, e.g. DE-9IM per-cell accuracy).

    A single-answer task whose ``meta['error_scale']`` is a positive number gets a *relative*
    error (``error / error_scale``, e.g. ``||pred - gold|| / ||gold||``), so the summary's
    RMSE figures are RMSPE as STARK reports for field variables (§4.1).  Set-valued answers
    get TP/FP/FN counts in ``extra``.
    """
    fmt = get_format(task.answer_format)
    labels = _labels(task)
    wrong = None if fmt.numeric else 0  # a categorical item without an answer counts as wrong
    if answer is None:
        return Score(task.id, task.family, step, "missing", correct=wrong, extra=labels)
    if answer.status != "ok":
        return Score(task.id, task.family, step, answer.status, correct=wrong,
                     extra={**labels, **({"detail": answer.detail} if answer.detail else {})})
    gold = gold_of(task, step)
    if fmt.numeric:
        try:
            err = float(fmt.error(answer.value, gold))
        except (TypeError, ValueError, IndexError):
            return Score(task.id, task.family, step, "format_failure",
                         extra={**labels, "detail": f"value {answer.value!r} does not fit format {fmt.name}"})
        if math.isnan(err):
            return Score(task.id, task.family, step, "format_failure",
                         extra={**labels, "detail": "error is NaN (non-finite value)"})
        scale = task.meta.get("error_scale") if step is None else None
        if scale:  # percentage error (STARK §4.1 RMSPE for field variables)
            return Score(task.id, task.family, step, "ok", error=err / float(scale),
                         extra={**labels, "relative": True})
        return Score(task.id, task.family, step, "ok", error=err, extra=labels)
    if answer.detail:
        labels["detail"] = answer.detail
    if hasattr(fmt, "em_ne"):  # geoqa formats: EM and NE with the task's tolerances (seed 003 §4)
        spec = task.meta.get("answer_spec")
        try:
            em, ne = fmt.em_ne(answer.value, gold, spec)
        except (TypeError, ValueError, IndexError, KeyError, AttributeError):
            return Score(task.id, task.family, step, "format_failure", correct=0,
                         extra={**labels, "detail": f"value {answer.value!r:.80} does not fit format {fmt.name}"})
        labels.update(ne=round(float(ne), 6), partial=round(1.0 - float(ne), 6))
        return Score(task.id, task.family, step, "ok", correct=int(em), extra=labels)
    if isinstance(gold, list) and isinstance(answer.value, list):  # set answers: TP/FP/FN
        g, a = {str(v).lower() for v in gold}, {str(v).lower() for v in answer.value}
        labels.update(tp=len(a & g), fp=len(a - g), fn=len(g - a))
    partial = fmt.partial(answer.value, gold)
    if partial is not None:
        labels["partial"] = round(float(partial), 6)
    return Score(task.id, task.family, step, "ok", correct=int(fmt.correct(answer.value, gold)),
                 extra=labels)


def score_answers(tasks: Iterable[Task], answers: Iterable[Answer],
                  max_steps: int | None = 10) -> list[Score]:
    """Score every item of ``tasks``; items with no answer count as ``missing``."""
    by_key = {(a.task_id, a.step): a for a in answers}
    out = []
    for t in tasks:
        for st in scored_steps(t, max_steps):
            out.append(score_item(t, st, by_key.get((t.id, st))))
    return out


def summarise(scores: Iterable[Score], trim: float = 0.10) -> dict[str, dict[str, Any]]:
    """Per-family summary: ``n`` (items), ``failures`` (non-ok items) with their breakdown,
    and ``trimmed_rmse`` / ``rmse`` / ``median_error`` for numeric families or ``accuracy``
    (failures count as wrong) for categorical ones, plus summed ``tp``/``fp``/``fn`` for
    set-valued answers."""
    groups: dict[str, list[Score]] = defaultdict(list)
    for s in scores:
        groups[s.family].append(s)
    out: dict[str, dict[str, Any]] = {}
    for fam in sorted(groups):
        items = groups[fam]
        ok = [s for s in items if s.status == "ok"]
        fails = Counter(s.status for s in items if s.status != "ok")
        row: dict[str, Any] = {"n": len(items), "failures": sum(fails.values()),
                               "failure_kinds": dict(sorted(fails.items()))}
        errs = [s.error for s in ok if s.error is not None]
        if errs or not any(s.correct is not None for s in items):
            if ok and all(s.extra.get("relative") for s in ok):
                row["metric"] = "rmspe"
            units = {s.extra.get("time_unit") for s in items} - {None}
            if len(units) == 1:
                row["time_unit"] = units.pop()  # of the time errors (time) or time parts (x-y-t)
            row.update(trimmed_rmse=_r(trimmed_rmse(errs, trim)), rmse=_r(rmse(errs)),
                       median_error=_r(median_error(errs)))
        else:
            # a solver with no answer for any item (e.g. no baseline for world-knowledge items)
            # has no accuracy: None ("n/a"), not 0.0
            none = fails.get("no_estimate", 0) == len(items)
            row["accuracy"] = None if none else _r(sum(s.correct or 0 for s in ok) / len(items))
            if any("tp" in s.extra for s in ok):
                for k in ("tp", "fp", "fn"):
                    row[k] = sum(s.extra.get(k, 0) for s in ok)
            chances = [s.extra["chance"] for s in items if "chance" in s.extra]
            if chances:
                row["chance"] = _r(sum(chances) / len(chances))
            if any("partial" in s.extra for s in ok):
                row["partial_accuracy"] = _r(sum(s.extra.get("partial", 0.0) for s in ok) / len(items))
            breakdown = summarise_breakdown(items)
            if breakdown:
                row["breakdown"] = breakdown
        out[fam] = row
    return out


def summarise_breakdown(items: list[Score]) -> dict[str, dict[str, dict[str, Any]]]:
    """Accuracy per breakdown key and label (``Score.extra["breakdown"]``), failures counting as
    wrong: ``{key: {label: {"n", "accuracy"}}}`` (e.g. STARK Tables 29-31)."""
    groups: dict[str, dict[str, list[Score]]] = defaultdict(lambda: defaultdict(list))
    for s in items:
        for key, label in (s.extra.get("breakdown") or {}).items():
            groups[key][label].append(s)
    return {key: {label: {"n": len(ss), "accuracy": _r(sum((x.correct or 0) for x in ss
                                                            if x.status == "ok") / len(ss))}
                  for label, ss in sorted(by_label.items())}
            for key, by_label in sorted(groups.items())}


def _r(x: float) -> float | None:
    """A metric for summary.json: rounded to 6 decimals; ``inf`` kept (an error too large for
    a float), NaN (no data) as ``None``."""
    if x is None or math.isnan(x):
        return None
    return x if math.isinf(x) else round(float(x), 6)


# ------------------------------------------------------------------------------- analyses
def _cardinal_analysis(tasks: list[Task], answers: list[Answer], out_dir: Path | None,
                       named_in: Path | None = None) -> dict[str, Any]:
    from .cardinal_report import write_cardinal_report
    return write_cardinal_report(tasks, answers, out_dir, named_in=named_in)


def _geoqa_analysis(tasks: list[Task], answers: list[Answer], out_dir: Path | None,
                    named_in: Path | None = None) -> dict[str, Any]:
    from .geoqa_report import geoqa_analysis
    return geoqa_analysis(tasks, answers, out_dir)  # names no file in its result


#: family-name prefix -> ``analysis(tasks, answers, out_dir | None, named_in=None) -> dict``
#: (with a one-line ``"headline"``): benchmark-specific breakdowns beyond :func:`summarise`,
#: e.g. the cardinal-direction confusion matrix (seed 002 §4).  ``stsim run`` and ``stsim
#: score`` run every analysis whose prefix starts some task's family and keep the result in
#: summary.json under ``"analyses"``; an analysis may write its own files under ``out_dir``,
#: naming them (in its result and its files) under ``named_in`` when given: ``out_dir`` is then
#: a staging folder whose files are moved to ``named_in`` afterwards (``stsim score --out``).
ANALYSES: dict[str, Callable[..., dict[str, Any]]] = {
    "cardinal.": _cardinal_analysis,
    "geoqa.": _geoqa_analysis,
}


def wants_analysis(family: str) -> bool:
    """True if some registered analysis covers ``family``."""
    return any(family.startswith(p) for p in ANALYSES)


def run_analyses(tasks: Iterable[Task], answers: Iterable[Answer],
                 out_dir: str | Path | None = None, *, named_in: str | Path | None = None) -> dict[str, dict[str, Any]]:
    """Run each analysis of :data:`ANALYSES` on the tasks its prefix covers (and their answers);
    analyses with no matching task are skipped.  Returns ``{prefix: result}``.  Files go under
    ``out_dir``, named under ``named_in`` (default ``out_dir``): the folder they will be moved
    to when ``out_dir`` is a staging folder."""
    tasks, answers = list(tasks), list(answers)
    out: dict[str, dict[str, Any]] = {}
    for prefix, fn in ANALYSES.items():
        mine = [t for t in tasks if t.family.startswith(prefix)]
        if mine:
            ids = {t.id for t in mine}
            out[prefix] = fn(mine, [a for a in answers if a.task_id in ids],
                             None if out_dir is None else Path(out_dir),
                             named_in=None if named_in is None else Path(named_in))
    return out
