"""Cardinal-direction questions (Cohn & Blackwell, seed 002, §3): templates T1-T6 and a
disambiguated T4.

An agent moves along the edge of a feature -- the shore of a lake (T1, T2), the middle of one
side of a park with a bandstand at its centre (T3), one side of a road (T4), the shore of an
island (T5, T6) -- heading one of eight compass points, on one of the two sides perpendicular
to that heading; in T2 and T6 the agent then turns around.  The question asks the compass
direction of the lake, the bandstand, the road or the sea.  Every gold answer is computed by
:func:`stsim.spatial.compass.direction_of_feature` from the template's parameters.

The set is exhaustive (seed 002 §3): 6 templates x 10 forms of locomotion x 6 person forms x
8 headings x 2 sides = 5,760 questions in ``cardinal.large``.  ``cardinal.t4_from_agent``
(10 x 6 x 8 x 2 = 960) asks T4's question "from" the agent, the remedy §5 proposes for T4's
ambiguity (a linear road also has an orientation, "east to west", which a reader may give).

Index order: ``index = 96 * s + k`` (``16 * s + k`` for T4-from-agent) where ``k`` enumerates
(template, heading, side) and ``s`` in 0..59 shifts the (locomotion, person) pair per ``k``,
so every prefix of 96 tasks covers each (template, heading, side) once, and the whole range
covers every combination exactly once.

The wording is ours; the situations, the ten forms of locomotion and the six person forms are
the paper's.
"""
from __future__ import annotations

from typing import Any

from ..records import GoldError, RecordError, Task, UnknownName
from ..registry import Family, TaskBody, register_family
from ..spatial.compass import (COMPASS8, SPELLING, direction_of_feature, is_perpendicular,
                               opposite, perpendiculars, turn_around)

#: The ten forms of locomotion of seed 002 §3, alphabetical as printed there.
LOCOMOTION = ("cycling", "driving", "hiking", "jogging", "perambulating", "racing", "riding",
              "running", "unicycling", "walking")

#: Person forms (seed 002 §3): key -> (subject, "be", object pronoun, "turn"), agreeing in
#: number and person (I am / we are / you are / he is / she is / they are; he turns, ...).
PERSONS: dict[str, tuple[str, str, str, str]] = {
    "I": ("I", "am", "me", "turn"),
    "we": ("we", "are", "us", "turn"),
    "you": ("you", "are", "you", "turn"),
    "he": ("he", "is", "him", "turns"),
    "she": ("she", "is", "her", "turns"),
    "they": ("they", "are", "them", "turn"),
}
PERSON_KEYS = tuple(PERSONS)

#: template -> (feature, target noun, where the target lies relative to the edge, turned around)
TEMPLATES: dict[str, tuple[str, str, str, bool]] = {
    "T1": ("lake", "lake", "inside", False),
    "T2": ("lake", "lake", "inside", True),
    "T3": ("park", "bandstand", "inside", False),
    "T4": ("road", "road", "inside", False),
    "T5": ("island", "sea", "outside", False),
    "T6": ("island", "sea", "outside", True),
}
T4_FROM_AGENT = "T4-from-agent"

INSTRUCTION = ("Reply with exactly one of these eight directions and nothing else: north, "
               "north-east, east, south-east, south, south-west, west, north-west.")


def _cap(s: str) -> str:
    return s[0].upper() + s[1:]


def question_text(template: str, heading: str, side: str, locomotion: str, person: str) -> str:
    """The question in words (our own wording of seed 002's situations).

    Raises:
        KeyError: unknown template or person; DirectionError: unknown direction.
    """
    subj, be, obj, turn = PERSONS[person]
    h, sd = SPELLING[heading], SPELLING[side]
    start = f"{_cap(subj)} {be} {locomotion} {h}"
    back = f", and then {subj} {turn} round to go back the way {subj} came"
    if template in ("T1", "T2"):
        scene = f"{start}, following the {sd} shore of a lake{back if template == 'T2' else ''}."
        return f"{scene} Which direction is the lake in?"
    if template == "T3":
        return (f"{start} past the midpoint of the {sd} edge of a park. Which direction is the "
                "bandstand at the centre of the park in?")
    if template in ("T4", T4_FROM_AGENT):
        scene = (f"{start} on the {sd} side of a road running from {h} to "
                 f"{SPELLING[opposite(heading)]}.")
        if template == "T4":
            return f"{scene} Which direction is the road in?"
        return f"{scene} In which direction from {obj} is the road?"
    if template in ("T5", "T6"):
        scene = f"{start}, following the {sd} shore of an island{back if template == 'T6' else ''}."
        return f"{scene} Which direction is the sea in?"
    raise UnknownName(f"unknown template {template!r}")


def scenario(template: str, heading: str, side: str, locomotion: str, person: str) -> dict[str, Any]:
    """Structured inputs of one question (what a first-principle solver reads).

    Keys: ``template``, ``feature``, ``target``, ``target_place`` (inside / outside, see
    :data:`stsim.spatial.compass.TARGET_PLACES`), ``heading`` (initial), ``side``,
    ``turned_around``, ``road_runs`` ([from, to] for roads, else ``None``), ``locomotion``,
    ``person``.
    """
    base = "T4" if template == T4_FROM_AGENT else template
    feature, target, place, turned = TEMPLATES[base]
    return {"template": template, "feature": feature, "target": target, "target_place": place,
            "heading": heading, "side": side, "turned_around": turned,
            "road_runs": [heading, opposite(heading)] if feature == "road" else None,
            "locomotion": locomotion, "person": person}


def gold_direction(inputs: dict[str, Any]) -> str:
    """The answer, computed with the direction model: the agent's final heading (turned around
    in T2/T6) and side give the direction of the target (seed 002 §3)."""
    heading = inputs["heading"]
    if inputs["turned_around"]:
        heading = turn_around(heading)
    return direction_of_feature(heading, inputs["side"], inputs["target_place"])


def _combo(index: int, templates: tuple[str, ...]) -> tuple[str, str, str, str, str]:
    n_k = len(templates) * 16
    k, s = index % n_k, index // n_k
    template = templates[k // 16]
    heading = COMPASS8[(k % 16) // 2]
    side = perpendiculars(heading)[k % 2]
    locomotion = LOCOMOTION[(s % 10 + k) % 10]
    person = PERSON_KEYS[(s // 10 + k) % 6]
    return template, heading, side, locomotion, person


def _make(templates: tuple[str, ...]):
    def make(rng, cfg: dict[str, Any], index: int) -> TaskBody:
        template, heading, side, locomotion, person = _combo(index, templates)
        inputs = scenario(template, heading, side, locomotion, person)
        question = question_text(template, heading, side, locomotion, person)
        answer = gold_direction(inputs)
        meta = {"template": template, "direction": answer, "heading": heading, "side": side,
                "locomotion": locomotion, "person": person, "question": question,
                "instruction": INSTRUCTION}
        return TaskBody(prompt=f"{question}\n{INSTRUCTION}", inputs=inputs, answer=answer, meta=meta)
    return make


def validate_inputs(task: Task) -> None:
    """Reject a cardinal task whose inputs this generator cannot have produced.

    Raises:
        RecordError: unknown template/person/locomotion/direction, a heading not perpendicular
            to the side, a road not running along the heading, or a gold answer that disagrees
            with the direction model (:class:`~stsim.records.GoldError`).
    """
    x, where = task.inputs, f"task {task.id}"
    template = x.get("template")
    if template not in (*TEMPLATES, T4_FROM_AGENT):
        raise RecordError(f"{where}: unknown template {template!r}")
    for key, allowed in (("heading", COMPASS8), ("side", COMPASS8), ("locomotion", LOCOMOTION),
                         ("person", PERSON_KEYS)):
        if x.get(key) not in allowed:
            raise RecordError(f"{where}: {key} {x.get(key)!r} is not one of {', '.join(allowed)}")
    if not is_perpendicular(x["heading"], x["side"]):
        raise RecordError(f"{where}: heading {x['heading']} does not run along the {x['side']} side")
    expected = scenario(template, x["heading"], x["side"], x["locomotion"], x["person"])
    for key in ("feature", "target", "target_place", "turned_around", "road_runs"):
        if x.get(key) != expected[key]:
            raise RecordError(f"{where}: {key} is {x.get(key)!r}; template {template} has "
                              f"{expected[key]!r}")
    if task.answer != gold_direction(x):
        raise GoldError(f"{where}: gold answer {task.answer!r} disagrees with the direction "
                        f"model ({gold_direction(x)})")


LARGE_TEMPLATES = tuple(TEMPLATES)
LARGE_SIZE = len(LARGE_TEMPLATES) * len(LOCOMOTION) * len(PERSONS) * 8 * 2
T4_FROM_AGENT_SIZE = len(LOCOMOTION) * len(PERSONS) * 8 * 2

register_family(Family(
    "cardinal.large", "direction", _make(LARGE_TEMPLATES), {},
    "Cohn & Blackwell T1-T6: direction of a lake, bandstand, road or sea (5,760 questions)",
    rubric="cardinal", validate=validate_inputs, size=LARGE_SIZE,
    source="Cohn & Blackwell, cardinal directions (seed 002) §3, templates T1-T6"))
register_family(Family(
    "cardinal.t4_from_agent", "direction", _make((T4_FROM_AGENT,)), {},
    "T4 asked 'from' the agent (seed 002 §5's disambiguation; 960 questions)",
    rubric="cardinal", validate=validate_inputs, size=T4_FROM_AGENT_SIZE,
    source="Cohn & Blackwell, cardinal directions (seed 002) §5, T4 asked from the agent"))
