"""Audit of qualitative spatial and temporal reasoning items (QSTRBench and the multi-hop
chains): is the gold answer the calculus' own answer for the relations the task states?

The answer is recomputed from the calculus' tables (:mod:`stsim.qstr`, equal to GQR's and
SparQ's): the converse table for ``converse``, the composition table for ``ct`` (QSTRBench §4),
the conceptual neighbourhood for ``cn``, and the algebraic closure of the path for a ``chain``
(:func:`stsim.qstr.reasoner.chain_relations`), then shown under the task's display names
(``inputs.names``: symbols, words, nonce words, ...).  A finding's reason starts with
``[label]`` and names the answer the tables give.
"""
from __future__ import annotations

from ..generators.qstrbench import gold
from ..qstr import all_calculi
from ..qstr.reasoner import chain_relations
from ..records import Task

#: how each question's answer is computed, for the reasons
_SOURCE = {"converse": "converse table", "ct": "composition table", "cn": "conceptual neighbourhood",
           "chain": "algebraic closure of the chain"}


def is_qstr_task(task: Task) -> bool:
    """Whether ``task`` is a QSTR question this audit recomputes (a ``qstr.*`` or, for the
    extended prompt styles, ``qstrx.*`` family whose inputs name a calculus and a question type
    it knows)."""
    inp = task.inputs if isinstance(task.inputs, dict) else {}
    return (task.family.split(".", 1)[0] in ("qstr", "qstrx") and inp.get("question") in _SOURCE
            and "calculus" in inp)


def audit_qstr(task: Task) -> tuple[bool, str]:
    """``(ok, reason)`` for one QSTR task: the gold against the answer recomputed from the
    calculus (module docstring); order does not matter for a set answer.  The task must have
    passed its family's validator (known calculus, relation names and display names)."""
    inp = task.inputs
    cal = all_calculi()[inp["calculus"]]
    q, rels = inp["question"], list(inp["relations"])
    canon = ([n for n in cal.names if n in chain_relations(cal, rels)] if q == "chain"
             else gold(cal, q, rels))                      # the generators' own rule
    names = inp.get("names") or {n: n for n in cal.names}
    want = [names[n] for n in canon]
    given = task.answer
    if q == "converse":
        ok = [given] == want
    else:
        ok = isinstance(given, list) and sorted(map(str, given)) == sorted(want)
    if ok:
        return True, ""
    shown = want[0] if q == "converse" and len(want) == 1 else want
    return False, (f"[label] gold {given!r}, but the {cal.abbrev} {_SOURCE[q]} gives {shown!r} "
                   f"for {q} of {rels}")
