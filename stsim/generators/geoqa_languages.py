"""``--language CODE``: geoqa tasks in another language (seed 003 §3.5; :mod:`stsim.geoqa.languages`).

The task keeps its binding, gold and answer format; the question sentence in its prompt is
replaced by the translated canonical wording with localised labels.  Its id becomes
``ID@LANG`` (so the versions of one question in several languages can share a tasks file and an
answers file, ``stsim generate --language all``), and ``inputs`` gain ``question_id`` (``ID``,
the same in every language: the key that pairs a question's languages), ``language``,
``question_en`` (the English question it replaced), ``labels`` = ``[translated, total]`` entity
labels, and ``language_fallback = "template"`` when the template has no translation (the
question then stays English).  English tasks and non-geoqa tasks pass through unchanged.
"""
from __future__ import annotations

from dataclasses import replace

from ..records import Task


def with_language(task: Task, lang: str) -> Task:
    """``task`` in language ``lang``.

    Raises:
        ValueError: an unknown language, or a task already in another language.
    """
    from ..geoqa.executor import instance, load_templates
    from ..geoqa.languages import LANGUAGES, question_in
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; known: {', '.join(LANGUAGES)}")
    if lang == "en" or not task.family.startswith("geoqa."):
        return task
    if "language" in task.inputs:
        raise ValueError(f"task {task.id} is already in language {task.inputs['language']!r}")
    tid = task.inputs["template"]
    index = int(task.id.rsplit("/", 1)[1])
    if task.inputs.get("premise") == "false":
        from ..geoqa.premise import false_instance
        values = false_instance(tid, index).values
    else:
        values = instance(tid, index).values
    t = load_templates()[tid]
    text, done, total = question_in(tid, values, task.inputs["binding"], t.roles, lang)
    inputs = {**task.inputs, "question_id": task.id, "language": lang, "labels": [done, total]}
    lang_id = f"{task.id}@{lang}"
    if text is None:
        return replace(task, id=lang_id, inputs={**inputs, "language_fallback": "template"})
    en = task.inputs["question"]
    if en not in task.prompt:
        raise ValueError(f"task {task.id}: its question is not in its prompt")
    inputs.update(question=text, question_en=en)
    return replace(task, id=lang_id, prompt=task.prompt.replace(en, text, 1), inputs=inputs)
