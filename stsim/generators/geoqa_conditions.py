"""Evaluation conditions of the geoqa families (seed 003 §4, Appendix G.3): the gold triples a
question's answer rests on (``inputs["triples"]``; for a false-premise question, the facts that
refute its premise) injected into the prompt.

* ``none`` -- the prompt as generated (parametric knowledge only);
* ``triples-raw`` -- N-Triples-like lines ``<subject> <predicate> "object" .``;
* ``triples-json`` -- a JSON list of ``{"subject", "predicate", "object"}`` objects;
* ``triples-prose`` -- one verbalised sentence per triple ("The geo:asWKT of gn:2988507 is
  POINT (2.3488 48.85341).") -- the paper's best oracle format (§5, Table 4 "T1-o").

The facts come first, under the heading ``Facts:``; the question, instruction and ``Answer:``
line follow unchanged.  ``inputs["context"]`` records the condition.  Tasks of other families
pass through unchanged.
"""
from __future__ import annotations

import json
from dataclasses import replace

from ..records import Task

CONTEXTS = ("none", "triples-raw", "triples-json", "triples-prose")


def _term(x) -> str:
    return json.dumps(x, ensure_ascii=False) if not isinstance(x, str) else x


def render_facts(triples: list[list], mode: str) -> str:
    """The facts block of ``mode`` (one of :data:`CONTEXTS` except ``none``).

    Raises:
        ValueError: an unknown mode.
    """
    if mode == "triples-raw":
        return "\n".join(f"<{s}> <{p}> {json.dumps(o, ensure_ascii=False)} ." for s, p, o in triples)
    if mode == "triples-json":
        return json.dumps([{"subject": s, "predicate": p, "object": o} for s, p, o in triples],
                          ensure_ascii=False)
    if mode == "triples-prose":
        return "\n".join(f"The {p} of {s} is {_term(o)}." for s, p, o in triples)
    raise ValueError(f"unknown context {mode!r}; known: {', '.join(CONTEXTS)}")


def with_context(task: Task, mode: str) -> Task:
    """``task`` with the gold facts of ``mode`` before its prompt (geoqa families only).

    Raises:
        ValueError: an unknown mode.
    """
    if mode not in CONTEXTS:
        raise ValueError(f"unknown context {mode!r}; known: {', '.join(CONTEXTS)}")
    if mode == "none" or not task.family.startswith("geoqa."):
        return task
    facts = render_facts(task.inputs.get("triples") or [], mode)
    prompt = f"Facts:\n{facts}\n\n{task.prompt}"
    return replace(task, prompt=prompt, inputs={**task.inputs, "context": mode})
