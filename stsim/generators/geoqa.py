"""Geospatial QA families over real places (MultiGlobeQA, seed 003): one family per template,
``geoqa.<SFID>.<name>`` (e.g. ``geoqa.metric.distance``).

Each family is *exhaustive*: its tasks are the verified, de-duplicated questions the executor
(:mod:`stsim.geoqa.executor`) drew for the template from the entity store
(:mod:`stsim.geoqa.store`), in draw order, so a prefix is a random sample and the whole range is
the template's question set.  Task ``index`` is a pure function of the installed sources and the
index; the suite seed only draws which paraphrase words it (uniformly, seed 003 §3.3).

Prompt: (for questions about a simulated city, its map), the question, how to write the
answer, and the ``Answer:`` line the ``geoqa`` rubric reads.  ``inputs`` keep the template, its
SFID, the sub-template, the binding (entity ids and parameters), the entities' names and the
gold triples (subject, predicate, object) the answer rests on; ``meta["answer_spec"]`` holds the
format's tolerances and accepted aliases.
"""
from __future__ import annotations

from typing import Any

from ..records import RecordError, Task
from ..registry import Family, TaskBody, register_family

ANSWER_LINE = 'End your reply with a final line of the form "Answer: <your answer>".'

#: Bump when the executor, the templates or the store change the questions.
VERSION = "2"


def _templates():
    from ..geoqa.executor import load_templates
    return load_templates()


def make_prompt(tid: str, inst, k: int) -> str:
    """The prompt of a pool instance in paraphrase ``k``."""
    from ..geoqa.templates import network_text
    t = _templates()[tid]
    parts = []
    if "network" in inst.binding:
        parts.append(network_text(int(inst.binding["network"])))
        parts.append("")
    parts += [inst.question(t, k), inst.instruction(t), ANSWER_LINE]
    return "\n".join(parts)


def question_inputs(tid: str, q, k: int, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """``task.inputs`` of a geoqa question ``q`` (a pool :class:`~stsim.geoqa.executor.Instance`
    or a :class:`~stsim.geoqa.premise.FalseInstance`) asked in paraphrase ``k``: template, SFID,
    sub-template, the question, its binding, entities with their display names, the facts, then
    ``extra`` and the stratum (this key order is part of the task bytes)."""
    from ..geoqa.strata import stratum
    t = _templates()[tid]
    entities = {role: {"id": eid, "name": q.values.get(role, eid)}
                for role, eid in q.binding.get("ids", {}).items()}
    return {"template": tid, "sfid": t.sfid, "subtemplate": q.subtemplate, "paraphrase": k,
            "question": q.question(t, k), "binding": q.binding, "entities": entities,
            "triples": q.triples, **(extra or {}), "stratum": stratum(q.binding)}


def _make(tid: str):
    def make(rng, cfg: dict[str, Any], index: int) -> TaskBody:
        from ..geoqa.executor import instance
        t = _templates()[tid]
        inst = instance(tid, index)
        k = int(rng.integers(len(t.paraphrases)))
        inputs = question_inputs(tid, inst, k)
        from ..geoqa.schema import answer_schema
        meta = {"answer_spec": inst.spec, "sfid": t.sfid, "template": tid, "subtemplate": inst.subtemplate,
                "answer_schema": answer_schema(t.answer_format, inst.spec)}
        return TaskBody(prompt=make_prompt(tid, inst, k), inputs=inputs, answer=inst.gold, meta=meta)
    return make


def validate_geoqa(task: Task) -> None:
    """Reject inputs a geoqa family cannot have produced (unknown template, missing binding)."""
    where = f"task {task.id}"
    tid = task.inputs.get("template")
    if tid not in _templates() or task.family != f"geoqa.{tid}":
        raise RecordError(f"{where}: inputs.template {tid!r} does not match family {task.family!r}")
    if not isinstance(task.inputs.get("binding"), dict):
        raise RecordError(f"{where}: inputs.binding must be an object")
    triples = task.inputs.get("triples")
    if not isinstance(triples, list) or not all(isinstance(t, list) and len(t) == 3 for t in triples):
        raise RecordError(f"{where}: inputs.triples must be a list of [subject, predicate, object]")


def family_name(tid: str) -> str:
    return f"geoqa.{tid}"


def _register() -> None:
    from ..geoqa.executor import pool
    for tid, t in _templates().items():
        register_family(Family(
            name=family_name(tid), answer_format=t.answer_format, make=_make(tid), defaults={},
            description=f"[{t.sfid}] {t.paraphrases[0][:70]}", version=VERSION, rubric="geoqa",
            validate=validate_geoqa, size=(lambda tid=tid: len(pool(tid)))))


_register()
