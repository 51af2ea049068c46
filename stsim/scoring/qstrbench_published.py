"""QSTRBench's published scores (rubric ``qstrbench-published``): what its released scorer
``bin/process.py`` (RobBlackwell/QSTRBench; facts only, no code taken) computes per question,
so published numbers can be reproduced from published replies.

Per question, with ``A`` the gold set (``meta["canonical_answer"]``), ``X`` the names read by
:func:`stsim.answers.qstrbench_published_relations` and ``b`` the number of base relations of
the calculus (:data:`BASIS`, process.py's table):

* ``strict``: 1 if ``set(X) == A`` (names compared exactly, case included), else 0;
* ``jaccard``: ``|X & A| / |X | A|`` (seed 000 §4);
* ``guess_rate``: ``1/b`` for converse questions, ``1/(2^b - 1)`` otherwise (a uniform guess
  among the relations, or among the non-empty subsets);
* ``jaccard_guess_rate``: the mean Jaccard index of ``A`` against every such guess, computed
  here in closed form (by subset size and overlap) instead of enumerating 2^b - 1 subsets;
* ``normalized_strict = (strict - guess_rate) / (1 - guess_rate)`` and
  ``normalized_jaccard = (jaccard - jaccard_guess_rate) / (1 - jaccard_guess_rate)``.

A question with no reply (missing) is not scored by process.py (its inner join drops it); here
it is counted in ``missing`` and left out of the means, as there.
"""
from __future__ import annotations

from functools import lru_cache
from math import comb
from typing import Any, Iterable

from ..answers import qstrbench_published_relations
from ..records import Answer, Task

#: base relations per calculus, as process.py assigns them (``basis``).
BASIS: dict[str, int] = {"RCC-8": 8, "RCC-5": 5, "RCC-22": 22, "INDU": 25, "STAR": 9, "CDC": 9,
                         "9IM": 8, "IA": 13, "PA": 3}


def jaccard(x: set[str], a: set[str]) -> float:
    """Intersection over union of two sets (1.0 when both are empty)."""
    u = x | a
    return len(x & a) / len(u) if u else 1.0


def guess_rate(b: int, converse: bool) -> float:
    """Chance of the exact answer by a uniform guess: ``1/b`` (converse) or ``1/(2^b - 1)``."""
    return 1.0 / b if converse else 1.0 / (2 ** b - 1)


@lru_cache(maxsize=None)
def jaccard_guess_rate(b: int, a: int, converse: bool) -> float:
    """Mean Jaccard index between a gold set of ``a`` of the ``b`` relations and every guess:
    the ``b`` singletons (converse) or the ``2^b - 1`` non-empty subsets.

    A guess of size ``k`` sharing ``i`` relations with the gold has index ``i / (a + k - i)``;
    there are ``C(a, i) C(b - a, k - i)`` of them.  Raises ``ValueError`` unless 1 <= a <= b.
    """
    if not 1 <= a <= b:
        raise ValueError(f"gold size {a} must be in 1..{b}")
    sizes = [1] if converse else range(1, b + 1)
    total = count = 0.0
    for k in sizes:
        for i in range(max(0, k - (b - a)), min(a, k) + 1):
            n = comb(a, i) * comb(b - a, k - i)
            total += n * i / (a + k - i)
            count += n
    return total / count


def published_scores(task: Task, text: Any) -> dict[str, float]:
    """process.py's per-question values for one reply text (see the module docstring).

    Raises:
        KeyError: the task has no ``calculus`` / ``canonical_answer`` / ``qtype`` in its meta.
    """
    gold = set(task.meta["canonical_answer"])
    b = BASIS.get(task.meta["calculus"]) or len(task.meta["answer_spec"]["choices"])
    converse = task.meta["qtype"] == "converse"
    names = set(qstrbench_published_relations(text))
    strict = float(names == gold)
    jac = jaccard(names, gold)
    gr = guess_rate(b, converse)
    jgr = jaccard_guess_rate(b, len(gold), converse)
    return {"strict": strict, "jaccard": jac, "guess_rate": gr, "jaccard_guess_rate": jgr,
            "normalized_strict": (strict - gr) / (1 - gr), "normalized_jaccard": (jac - jgr) / (1 - jgr)}


def summarise_published(tasks: Iterable[Task], answers: Iterable[Answer]) -> dict[str, dict[str, Any]]:
    """Per family: the means of :func:`published_scores` over questions with a reply text
    (``n``), and ``missing`` (questions without one)."""
    texts = {a.task_id: a.text for a in answers if a.text is not None}
    groups: dict[str, list[dict[str, float]]] = {}
    missing: dict[str, int] = {}
    for t in tasks:
        if "canonical_answer" not in t.meta or "qtype" not in t.meta:
            continue
        if t.id not in texts:
            missing[t.family] = missing.get(t.family, 0) + 1
            groups.setdefault(t.family, [])
            continue
        groups.setdefault(t.family, []).append(published_scores(t, texts[t.id]))
    out: dict[str, dict[str, Any]] = {}
    for fam, rows in sorted(groups.items()):
        keys = ("strict", "jaccard", "normalized_strict", "normalized_jaccard")
        out[fam] = {"n": len(rows), "missing": missing.get(fam, 0),
                    **{k: (round(sum(r[k] for r in rows) / len(rows), 6) if rows else None) for k in keys}}
    return out


def format_published(rows: dict[str, dict[str, Any]]) -> str:
    """Fixed-width table of :func:`summarise_published`."""
    w = max([len(f) for f in rows] + [len("family (QSTRBench process.py)")])
    f4 = lambda x: "-".rjust(9) if x is None else f"{x:9.4f}"  # noqa: E731
    lines = [f"{'family (QSTRBench process.py)':<{w}}  {'n':>5}  {'missing':>7}  {'strict':>9}  {'jaccard':>9}  "
             f"{'norm.str':>9}  {'norm.jac':>9}"]
    for f, r in rows.items():
        lines.append(f"{f:<{w}}  {r['n']:>5}  {r['missing']:>7}  {f4(r['strict'])}  {f4(r['jaccard'])}  "
                     f"{f4(r['normalized_strict'])}  {f4(r['normalized_jaccard'])}")
    return "\n".join(lines)
