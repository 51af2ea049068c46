"""QSTRBench scoring (§4): exact-set accuracy, TP/FP/FN counts, invalid relation names, guess
rates and micro-averages per calculus and question type, and the RCC narrowing of §4.12.

Model replies are read with the ``qstrbench`` rubric (text after the last ``### Answer:``).
Names that are not relations of the calculus (hallucinated ones such as ``D>`` in INDU, or
RCC-8's ``EC`` given for RCC-22) are *invalid*: counted separately, never as true or false
positives; an answer with an invalid name is not exactly correct.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping

from ..answers import _token, qstrbench_rubric
from ..records import Task
from .topology import RCC8_TO_RCC5


@dataclass
class QuestionScore:
    """Verdict on one reply.  ``given``/``gold`` hold canonical relation names."""
    task_id: str
    calculus: str
    qtype: str
    variant: str
    answered: bool
    correct: int
    tp: int
    fp: int
    fn: int
    given: list[str] = field(default_factory=list)
    invalid: list[str] = field(default_factory=list)
    gold: list[str] = field(default_factory=list)
    guess_rate: float = 0.0


def read_relations(text: Any, task: Task) -> tuple[list[str], list[str], bool]:
    """(valid canonical names, invalid names, answer found) of a reply to a qstr task.

    Never raises: non-string or marker-less text gives ``([], [], False)``.
    """
    if not isinstance(text, str):
        return [], [], False
    body = qstrbench_rubric(text)
    if body is None:
        return [], [], False
    names: Mapping[str, str] = task.inputs.get("names") or {}
    spec = task.meta.get("answer_spec", {})
    to_canon = {_token(shown): canon for canon, shown in names.items()}
    for alias, shown in spec.get("aliases", {}).items():
        canon = next((c for c, s in names.items() if s == shown), None)
        if canon is not None:
            to_canon.setdefault(_token(alias), canon)
    if not names:  # chain tasks show canonical names
        to_canon = {_token(c): c for c in spec.get("choices", [])}
        to_canon.update({_token(a): s for a, s in spec.get("aliases", {}).items()})
    valid, invalid = [], []
    for tok in body.split(";"):
        tok = tok.strip()
        if not tok:
            continue
        c = to_canon.get(_token(tok))
        if c is None:
            invalid.append(tok)
        elif c not in valid:
            valid.append(c)
    return valid, invalid, True


def gold_canonical(task: Task) -> list[str]:
    if "canonical_answer" in task.meta:
        return list(task.meta["canonical_answer"])
    return list(task.answer) if isinstance(task.answer, list) else [task.answer]


def score_reply(task: Task, text: Any, coarsen: Mapping[str, str] | None = None) -> QuestionScore:
    """Score one reply; ``coarsen`` maps canonical names to a coarser calculus first.  A
    missing reply, or one without an answer, is wrong and ``answered=False``, with TP = FP =
    FN = 0: its gold relations are not counted as false negatives (they were never answered)."""
    given, invalid, found = read_relations(text, task)
    gold = gold_canonical(task)
    if coarsen is not None:
        given = sorted({coarsen[g] for g in given})
        gold = sorted({coarsen[g] for g in gold})
    g, a = set(gold), set(given)
    if not found:  # no reply, or no answer in it: wrong, but no relation was given or missed
        return QuestionScore(
            task_id=task.id, calculus=task.meta.get("calculus", "?"), qtype=task.meta.get("qtype", "?"),
            variant=task.meta.get("variant", "base"), answered=False, correct=0, tp=0, fp=0, fn=0,
            given=[], invalid=[], gold=sorted(g), guess_rate=float(task.meta.get("guess_rate", 0.0)))
    return QuestionScore(
        task_id=task.id, calculus=task.meta.get("calculus", "?"), qtype=task.meta.get("qtype", "?"),
        variant=task.meta.get("variant", "base"), answered=found,
        correct=int(found and not invalid and a == g), tp=len(a & g), fp=len(a - g), fn=len(g - a),
        given=sorted(a), invalid=invalid, gold=sorted(g), guess_rate=float(task.meta.get("guess_rate", 0.0)))


def score_replies(tasks: Iterable[Task], replies: Mapping[str, Any]) -> list[QuestionScore]:
    """Score every task; a task without a reply counts as unanswered (wrong)."""
    return [score_reply(t, replies.get(t.id)) for t in tasks]


def summarise_scores(scores: Iterable[QuestionScore]) -> dict[str, dict[str, Any]]:
    """Micro-averaged rows keyed ``calculus/qtype``, ``calculus/all``, ``all/qtype`` and
    ``all/all``: n, correct, accuracy, tp, fp, fn, invalid_names, replies_with_invalid,
    unanswered, guess_rate (mean of the per-question guess rates)."""
    groups: dict[str, list[QuestionScore]] = defaultdict(list)
    for s in scores:
        for key in (f"{s.calculus}/{s.qtype}", f"{s.calculus}/all", f"all/{s.qtype}", "all/all"):
            groups[key].append(s)
    out = {}
    for key in sorted(groups):
        g = groups[key]
        n = len(g)
        out[key] = {
            "n": n, "correct": sum(s.correct for s in g), "accuracy": round(sum(s.correct for s in g) / n, 6),
            "tp": sum(s.tp for s in g), "fp": sum(s.fp for s in g), "fn": sum(s.fn for s in g),
            "invalid_names": sum(len(s.invalid) for s in g),
            "replies_with_invalid": sum(1 for s in g if s.invalid),
            "unanswered": sum(1 for s in g if not s.answered),
            "guess_rate": round(sum(s.guess_rate for s in g) / n, 9)}
    return out


#: QSTRBench §4.12: RCC-22 collapsed to RCC-8 (every *_EC to EC, every *_DC to DC).
def rcc22_to_rcc8(name: str) -> str:
    return "EC" if name.endswith("_EC") else "DC" if name.endswith("_DC") else name


NARROWINGS = {
    ("RCC-22", "RCC-8"): rcc22_to_rcc8,
    ("RCC-22", "RCC-5"): lambda n: RCC8_TO_RCC5[rcc22_to_rcc8(n)],
    ("RCC-8", "RCC-5"): lambda n: RCC8_TO_RCC5[n],
}


def narrowed_accuracy(tasks: Iterable[Task], replies: Mapping[str, Any], source: str, target: str) -> dict[str, Any]:
    """Accuracy of ``source``-calculus replies after collapsing gold and answers to ``target``
    (QSTRBench §4.12), with the un-narrowed accuracy for comparison.

    Raises:
        KeyError: a (source, target) pair not in :data:`NARROWINGS`.
    """
    f = NARROWINGS[(source, target)]
    ts = [t for t in tasks if t.meta.get("calculus") == source]
    cal_names = {n for t in ts for n in (t.inputs.get("names") or {})}
    mapping = {n: f(n) for n in cal_names}
    plain = [score_reply(t, replies.get(t.id)) for t in ts]
    narrow = [score_reply(t, replies.get(t.id), coarsen=mapping) for t in ts]
    n = len(ts)
    return {"source": source, "target": target, "n": n,
            "accuracy": sum(s.correct for s in plain) / n if n else None,
            "narrowed_accuracy": sum(s.correct for s in narrow) / n if n else None}


def as_dicts(scores: Iterable[QuestionScore]) -> list[dict[str, Any]]:
    return [asdict(s) for s in scores]
