"""``--language CODE``: geoqa tasks in another language (seed 003 §3.5; :mod:`stsim.geoqa.languages`).

The task keeps its id, binding, gold and answer format; the question sentence in its prompt is
replaced by the translated canonical wording with localised labels.  ``inputs`` gain
``language``, ``question_en`` (the English question it replaced), ``labels`` =
``[translated, total]`` entity labels, and ``language_fallback = "template"`` when the template
has no translation (the question then stays English).  Non-geoqa tasks pass through.
"""
from __future__ import annotations

from dataclasses import replace

from ..records import Task


def with_language(task: Task, lang: str) -> Task:
    """``task`` in language ``lang``.

    Raises:
        ValueError: an unknown language.
    """
    from ..geoqa.executor import instance, load_templates
    from ..geoqa.languages import LANGUAGES, question_in
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; known: {', '.join(LANGUAGES)}")
    if lang == "en" or not task.family.startswith("geoqa."):
        return task
    tid = task.inputs["template"]
    index = int(task.id.rsplit("/", 1)[1])
    if task.inputs.get("premise") == "false":
        from ..geoqa.premise import false_instance
        values = false_instance(tid, index).values
    else:
        values = instance(tid, index).values
    t = load_templates()[tid]
    text, done, total = question_in(tid, values, task.inputs["binding"], t.roles, lang)
    inputs = {**task.inputs, "language": lang, "labels": [done, total]}
    if text is None:
        return replace(task, inputs={**inputs, "language_fallback": "template"})
    en = task.inputs["question"]
    if en not in task.prompt:
        raise ValueError(f"task {task.id}: its question is not in its prompt")
    inputs.update(question=text, question_en=en)
    return replace(task, prompt=task.prompt.replace(en, text, 1), inputs=inputs)
