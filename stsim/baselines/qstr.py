"""The QSTRBench oracle: answers every qstr question with the calculus engine itself, reading
only ``task.inputs`` (calculus, question type, relations asked about, display names)."""
from __future__ import annotations

from ..records import Answer, Task


def solve_qstr(task: Task, solver: str = "baseline") -> list[Answer]:
    """Converse, composition, neighbourhood or chain answer, in the prompt's relation names."""
    from ..qstr import all_calculi
    from ..qstr.reasoner import chain_relations
    inp = task.inputs
    cal = all_calculi()[inp["calculus"]]
    names = inp.get("names") or {n: n for n in cal.names}
    q, rels = inp["question"], inp["relations"]
    if q == "converse":
        return [Answer(task.id, None, "ok", value=names[cal.converse[rels[0]]], solver=solver)]
    if q == "ct":
        res = cal.compose(rels[0], rels[1])
    elif q == "cn":
        res = cal.neighbours[rels[0]]
    elif q == "chain":
        res = chain_relations(cal, rels)
    else:
        return [Answer(task.id, None, "no_estimate", detail=f"unknown question type {q!r}", solver=solver)]
    return [Answer(task.id, None, "ok", value=sorted(names[n] for n in res), solver=solver)]
