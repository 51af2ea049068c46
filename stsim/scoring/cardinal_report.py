"""Cardinal-direction analysis (Cohn & Blackwell, seed 002, §3.1 and §4): accuracy with its
standard error, rubric-failure counts, breakdowns by template, direction, locomotion and
person, and the 8 x 8 (+ invalid) confusion matrix as numbers and as a PNG heatmap.

Every reply is read by :func:`stsim.answers.read_cardinal`: a bare direction follows the
rubric; a longer reply naming exactly one direction is scored on it but counted as a rubric
failure; anything else (no direction, several directions, a refusal or an unreadable answer)
is *invalid*, counts as wrong and lands in the confusion matrix's ``invalid`` column.  An item
with no answer at all (no line in the answers file, a failed request) is *missing*: it counts
as wrong too but has its own bucket and column, so a broken run is not read as a model that
answers badly.
"""
from __future__ import annotations

import csv
import json
import math
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable

from ..answers import COMPASS8, MAX_REPLY_CHARS, read_cardinal
from ..records import Answer, Task

#: Columns of the confusion matrix: the eight points, then ``invalid`` and ``missing``.
PREDICTED = (*COMPASS8, "invalid", "missing")
#: Best accuracy on the 5,760-question set among the eight models of seed 002 (§4), for context.
PAPER_BEST_LARGE = (0.5951389, "gpt-3.5-turbo-0125")

#: Task meta keys the breakdowns group by ("direction" is the gold answer's direction).
BREAKDOWNS = ("family", "template", "direction", "heading", "locomotion", "person")


def accuracy_with_sem(correct: list[int]) -> dict[str, Any]:
    """``{"n", "correct", "accuracy", "sem"}`` of 0/1 outcomes.

    ``sem`` is the standard error of the mean, ``s / sqrt(n)`` with the sample standard
    deviation ``s`` (ddof 1), i.e. ``sqrt(p (1 - p) / (n - 1))`` for accuracy ``p`` (seed 002
    §3.1 reports "variability using the standard error of the mean"); ``None`` when n < 2.
    """
    n = len(correct)
    k = int(sum(correct))
    if n == 0:
        return {"n": 0, "correct": 0, "accuracy": None, "sem": None}
    p = k / n
    sem = math.sqrt(p * (1.0 - p) / (n - 1)) if n > 1 else None
    return {"n": n, "correct": k, "accuracy": round(p, 6), "sem": None if sem is None else round(sem, 6)}


def _prediction(answer: Answer | None) -> tuple[str, bool, str | None]:
    """(predicted column, rubric followed, note) of one answer."""
    if answer is None or answer.status == "missing":
        return "missing", False, "missing"
    if answer.text is not None and len(answer.text) > MAX_REPLY_CHARS:   # not read: a format failure
        followed, note = False, answer.detail
    elif answer.text is not None:
        reading = read_cardinal(answer.text)
        followed = reading.strict
        note = reading.note
    else:  # a typed answer (solver output): the rubric is followed by construction
        followed, note = True, answer.detail
    if answer.status != "ok" or answer.value not in COMPASS8:
        return "invalid", followed and answer.status == "ok", note or answer.status
    return str(answer.value), followed, note


def cardinal_report(tasks: Iterable[Task], answers: Iterable[Answer]) -> dict[str, Any]:
    """The full analysis of answers to cardinal-direction tasks.

    Returns a JSON-serialisable dict: ``overall`` (n, correct, accuracy, sem), ``rubric``
    (``followed``, ``failures`` = replies not a bare direction, of which ``scored`` named one
    direction and ``scored_correct`` were right; ``invalid`` = no usable direction),
    ``missing`` = no answer at all, not counted among the rubric failures),
    ``by_<key>`` for each of :data:`BREAKDOWNS`, and ``confusion`` (``rows`` gold in COMPASS8
    order, ``columns`` :data:`PREDICTED`, ``counts`` 8 x 10 integers).
    """
    by_id = {(a.task_id, a.step): a for a in answers}
    counts = [[0] * len(PREDICTED) for _ in COMPASS8]
    outcomes: list[int] = []
    groups: dict[str, dict[str, list[int]]] = {k: defaultdict(list) for k in BREAKDOWNS}
    rubric = {"followed": 0, "failures": 0, "scored": 0, "scored_correct": 0, "invalid": 0, "missing": 0}
    for t in tasks:
        predicted, followed, _ = _prediction(by_id.get((t.id, None)))
        ok = int(predicted == t.answer)
        outcomes.append(ok)
        counts[COMPASS8.index(t.answer)][PREDICTED.index(predicted)] += 1
        if predicted == "missing":
            rubric["missing"] += 1
        else:
            rubric["followed" if followed else "failures"] += 1
        if predicted == "invalid":
            rubric["invalid"] += 1
        elif predicted != "missing" and not followed:
            rubric["scored"] += 1
            rubric["scored_correct"] += ok
        labels = {"family": t.family, **{k: t.meta.get(k) for k in BREAKDOWNS[1:]}}
        for key, value in labels.items():
            groups[key][str(value)].append(ok)
    report: dict[str, Any] = {"overall": accuracy_with_sem(outcomes), "rubric": rubric}
    for key in BREAKDOWNS:
        report[f"by_{key}"] = {v: accuracy_with_sem(o) for v, o in sorted(groups[key].items())}
    report["confusion"] = {"rows": list(COMPASS8), "columns": list(PREDICTED), "counts": counts}
    return report


def headline(report: dict[str, Any]) -> str:
    """One line: accuracy +- SEM and n (with fewer than 2 items the SEM is undefined and says
    so), rubric failures and invalid answers."""
    o, r = report["overall"], report["rubric"]
    acc = "-" if o["accuracy"] is None else f"{o['accuracy']:.4f}"
    spread = (f"+- {o['sem']:.4f} (SEM, n={o['n']})" if o["sem"] is not None
              else f"(n={o['n']}, SEM undefined)")
    return (f"cardinal directions: accuracy {acc} {spread}; rubric not followed "
            f"{r['failures']} (scored on one direction {r['scored']}, of which correct "
            f"{r['scored_correct']}); invalid {r['invalid']}; missing (no answer) {r.get('missing', 0)}  [paper's best on the large set: "
            f"{PAPER_BEST_LARGE[0]:.3f}, {PAPER_BEST_LARGE[1]}, seed 002 §4]")


def plot_confusion(report: dict[str, Any], path: str | Path, title: str = "") -> None:
    """Write the confusion matrix as a PNG heatmap (matplotlib, Agg backend): gold rows,
    predicted columns (8 points, invalid, missing), each cell annotated with its count."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    c = report["confusion"]
    counts = c["counts"]
    fig, ax = plt.subplots(figsize=(7.5, 6.0), dpi=100)
    im = ax.imshow(counts, cmap="Blues")
    short = {"invalid": "inv.", "missing": "miss."}
    ax.set_xticks(range(len(c["columns"])), [short.get(s, s.upper()) for s in
                                             ("n", "ne", "e", "se", "s", "sw", "w", "nw", *c["columns"][8:])])
    ax.set_yticks(range(len(c["rows"])), [s.upper() for s in ("n", "ne", "e", "se", "s", "sw", "w", "nw")])
    ax.set_xlabel("predicted")
    ax.set_ylabel("gold")
    peak = max(max(row) for row in counts) or 1
    for i, row in enumerate(counts):
        for j, v in enumerate(row):
            if v:
                ax.text(j, i, str(v), ha="center", va="center", fontsize=8,
                        color="white" if v > peak / 2 else "black")
    ax.set_title(title or "cardinal directions: confusion matrix")
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.04)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_cardinal_report(tasks: list[Task], answers: list[Answer], out_dir: str | Path | None,
                          title: str = "", *, named_in: str | Path | None = None) -> dict[str, Any]:
    """Compute :func:`cardinal_report`; when ``out_dir`` is given, write ``cardinal/report.json``,
    ``cardinal/confusion.csv`` (gold rows x predicted columns) and ``cardinal/confusion.png``
    under it.  Returns the report with ``headline`` (and ``files``: their paths, under
    ``named_in`` when given, the folder a staging ``out_dir``'s files are moved to) added."""
    report = cardinal_report(tasks, answers)
    report["headline"] = headline(report)
    if out_dir is not None:
        d = Path(out_dir) / "cardinal"
        d.mkdir(parents=True, exist_ok=True)
        with open(d / "confusion.csv", "w", newline="", encoding="utf-8") as fh:
            w = csv.writer(fh)
            w.writerow(["gold \\ predicted", *PREDICTED])
            for gold, row in zip(COMPASS8, report["confusion"]["counts"]):
                w.writerow([gold, *row])
        plot_confusion(report, d / "confusion.png", title)
        shown = Path(named_in if named_in is not None else out_dir) / "cardinal"
        report["files"] = [str(shown / n) for n in ("report.json", "confusion.csv", "confusion.png")]
        (d / "report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    return report
