"""False-refusal and negative-rejection rates of a geoqa run (seed 003 §4, §5.3, Appendix G.7).

* **NRR** (negative rejection rate): the share of false-premise questions (``geoqa.fp.*``) the
  solver rejected (refused, or said the premise is false: :func:`stsim.refusal.looks_like_refusal`).
* **FRR** (false-refusal rate): the share of *answerable* questions the solver refused, over the
  **same sub-templates** as the false-premise questions of the run ((template, sub-template)
  pairs), because refusal rates differ between sub-templates and an FRR over the whole
  benchmark would overstate selectivity (G.7).  ``frr_all`` is the FRR over every answerable
  question, for reference.

Refusals are answers with status ``refusal`` (the shared reader decides it for every rubric).
Outcomes of a budget or harness (``budget_exhausted`` of the agentic tier's step budget,
``syntax_error``, ``timeout``, ``memory``, ``crashed``, ``no_result``...) are not refusals: they are excluded from
both rates (§4: "Budget exhaustion is not a refusal and is excluded from both").
"""
from __future__ import annotations

from typing import Any

from ..records import SANDBOX_FAILURES, Answer, Task

#: Answer statuses that are neither an answer nor a refusal (harness / budget outcomes).
EXCLUDED = (*SANDBOX_FAILURES, "budget_exhausted")


def premise_table(tasks: list[Task], answers: list[Answer]) -> dict[str, Any] | None:
    """``{"nrr", "n_false", "frr", "n_answerable", "frr_all", "n_all", "subtemplates"}``
    (rates in [0, 1], ``None`` when their denominator is 0); ``None`` when the run has no
    false-premise question.  One answer per task (the last wins)."""
    from ..refusal import REJECT
    last = {a.task_id: a for a in answers}
    fp = [t for t in tasks if t.inputs.get("premise") == "false"]
    if not fp:
        return None
    subs = sorted({(t.inputs["template"], t.inputs.get("subtemplate", "")) for t in fp})
    subset = set(subs)

    def status(t):
        a = last.get(t.id)
        return "missing" if a is None else a.status

    def rate(hits, n):
        return round(hits / n, 6) if n else None
    fp_n = [t for t in fp if status(t) not in EXCLUDED]
    rejected = sum(1 for t in fp_n if status(t) in ("ok", "refusal")
                   and (status(t) == "refusal" or last[t.id].value == REJECT))
    true = [t for t in tasks if t.inputs.get("premise") != "false" and status(t) not in EXCLUDED]
    same = [t for t in true if (t.inputs.get("template"), t.inputs.get("subtemplate", "")) in subset]
    frr = sum(status(t) == "refusal" for t in same)
    frr_all = sum(status(t) == "refusal" for t in true)
    return {"nrr": rate(rejected, len(fp_n)), "n_false": len(fp_n), "frr": rate(frr, len(same)),
            "n_answerable": len(same), "frr_all": rate(frr_all, len(true)), "n_all": len(true),
            "subtemplates": [f"{a}|{b}" for a, b in subs]}


def format_premise(r: dict[str, Any]) -> str:
    """Two lines: NRR over the false-premise questions, FRR over the same sub-templates."""
    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}"
    return (f"\nfalse premises: NRR {pct(r['nrr'])} % of {r['n_false']} false-premise questions rejected; "
            f"FRR {pct(r['frr'])} % of {r['n_answerable']} answerable questions of the same "
            f"{len(r['subtemplates'])} sub-templates refused (FRR over all answerable: {pct(r['frr_all'])} % "
            f"of {r['n_all']}). Seed 003 §4, G.7.")
