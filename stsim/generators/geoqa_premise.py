"""False-premise geoqa families (seed 003 §3.4): ``geoqa.fp.<SFID>.<name>``, one per template
with a perturbation (:data:`stsim.geoqa.premise.PERTURBATIONS`).

Task ``index`` is false-premise question ``index`` of the template (its pool perturbed in
order, :func:`stsim.geoqa.premise.false_instance`); the prompt is built exactly as for the
template's answerable questions (same paraphrases, instruction and ``Answer:`` line), so only
the premise differs.  The gold is ``"false premise"`` in format ``geo_rejection``: a reply that
refuses or rejects the premise (:func:`stsim.refusal.looks_like_refusal`) is correct, any answer
wrong.  ``inputs["premise"] = "false"``, ``inputs["perturbation"]`` names the kind,
``inputs["base_index"]`` the perturbed pool question and ``inputs["triples"]`` the facts that
refute the premise.
"""
from __future__ import annotations

from typing import Any

from ..records import RecordError, Task
from ..refusal import REJECT
from ..registry import Family, TaskBody, register_family
from .geoqa import VERSION, make_prompt, question_inputs

PREFIX = "geoqa.fp."


def family_name(tid: str) -> str:
    """``geoqa.fp.<tid>``."""
    return f"{PREFIX}{tid}"


def _make(tid: str):
    def make(rng, cfg: dict[str, Any], index: int) -> TaskBody:
        from ..geoqa.executor import load_templates
        from ..geoqa.premise import FORMAT, false_instance
        t = load_templates()[tid]
        fi = false_instance(tid, index)
        k = int(rng.integers(len(t.paraphrases)))
        inputs = question_inputs(tid, fi, k, {"premise": "false", "perturbation": fi.kind,
                                              "base_index": fi.base_index})
        from ..geoqa.executor import instance
        from ..geoqa.schema import answer_schema
        # the schema of the template's own answer type: it must not give the premise away
        meta = {"answer_spec": {}, "sfid": t.sfid, "template": tid, "subtemplate": fi.subtemplate,
                "premise": "false", "answer_type": t.answer_format,
                "answer_schema": answer_schema(t.answer_format, instance(tid, fi.base_index).spec)}
        body = TaskBody(prompt=make_prompt(tid, fi, k), inputs=inputs, answer=REJECT, meta=meta)
        assert FORMAT == "geo_rejection"
        return body
    return make


def validate_premise(task: Task) -> None:
    """Reject inputs a false-premise family cannot have produced."""
    from ..geoqa.premise import PERTURBATIONS
    tid = task.inputs.get("template")
    if tid not in PERTURBATIONS or task.family != family_name(tid):
        raise RecordError(f"task {task.id}: inputs.template {tid!r} does not match family {task.family!r}")
    if task.inputs.get("premise") != "false" or not isinstance(task.inputs.get("binding"), dict):
        raise RecordError(f"task {task.id}: a false-premise task needs inputs.premise 'false' and a binding")
    triples = task.inputs.get("triples")
    if not isinstance(triples, list) or not all(isinstance(t, list) and len(t) == 3 for t in triples):
        raise RecordError(f"task {task.id}: inputs.triples must be a list of [subject, predicate, object]")


def _register() -> None:
    from ..geoqa.executor import load_templates
    from ..geoqa.premise import FORMAT, PERTURBATIONS, false_pool_size
    templates = load_templates()
    for tid in PERTURBATIONS:
        register_family(Family(
            name=family_name(tid), answer_format=FORMAT, make=_make(tid), defaults={},
            description=f"[{templates[tid].sfid}, false premise] {templates[tid].paraphrases[0][:56]}",
            version=VERSION, rubric="geoqa", validate=validate_premise,
            size=(lambda tid=tid: false_pool_size(tid))))


_register()
