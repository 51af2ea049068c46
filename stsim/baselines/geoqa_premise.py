"""The oracle of the false-premise geoqa families (``geoqa.fp.*``): re-evaluate the template's
premise on the task's perturbed binding (:func:`stsim.geoqa.premise.premise_holds`) and reject
the question when it is false (it always is for a generated task; a hand-edited binding whose
premise holds gets ``no_estimate``)."""
from __future__ import annotations

from ..records import Answer, Task


def solve_premise(task: Task, solver: str = "baseline") -> list[Answer]:
    """Reject the question when its premise is false on the entity store."""
    from ..geoqa.premise import premise_holds
    from ..refusal import REJECT
    try:
        holds = premise_holds(task.inputs["template"], task.inputs["binding"])
    except (KeyError, TypeError, ValueError) as exc:
        return [Answer(task.id, None, "no_estimate", solver=solver, detail=f"premise check failed: {exc}")]
    if holds:
        return [Answer(task.id, None, "no_estimate", solver=solver, detail="the premise holds: no rejection")]
    return [Answer(task.id, None, "ok", value=REJECT, solver=solver)]


def _alternatives():
    from ..geoqa.premise import PERTURBATIONS
    from .geoqa import solve_majority
    # the majority baseline answers the template's majority gold: it never rejects (NRR 0)
    return {f"geoqa.fp.{tid}": {"majority": solve_majority} for tid in PERTURBATIONS}


ALTERNATIVES = _alternatives()
