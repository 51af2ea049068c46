"""EM per language relative to English (seed 003 §5.4 "Languages": the languages are
translations of one fixed question set, so a per-language comparison isolates language from
question difficulty).

A task's language is ``inputs["language"]`` (English when absent) and its question id
``inputs["question_id"]`` (its own id when absent; stsim/generators/geoqa_languages.py gives the
version of question ``ID`` in language ``L`` the task id ``ID@L``).  Per language ``L``, over
its true-premise questions:

* ``n``, ``em``: the count and EM (refusals, format errors and missing answers score 0);
* ``n_paired``: those of its questions that English also has; ``em_paired`` and
  ``em_en_paired`` the EM of ``L`` and of English over exactly these, and
  ``rel_en = em_paired / em_en_paired`` (``None`` when English scores 0 there or nothing is
  paired);
* ``templates``: the share of ``L``'s tasks (false premises included) whose template was
  translated (no ``inputs["language_fallback"]``), and ``labels``: translated entity labels /
  all entity labels over them (``inputs["labels"]`` = ``[translated, total]``); both 1 for
  English, ``labels`` ``None`` when no task has a label.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any


def language_table(tasks, scores) -> dict[str, dict[str, Any]] | None:
    """Language -> row of the module docstring, English first then by code; ``None`` when every
    task is English (nothing to compare)."""
    by_task = {t.id: t for t in tasks}
    lang_of = {t.id: t.inputs.get("language", "en") for t in tasks}
    if set(lang_of.values()) <= {"en"}:
        return None
    em: dict[str, dict[str, int]] = defaultdict(dict)  # language -> question id -> EM
    for s in scores:
        t = by_task[s.task_id]
        if t.inputs.get("premise") == "false":
            continue
        em[lang_of[t.id]][t.inputs.get("question_id", t.id)] = int(s.correct or 0) if s.status == "ok" else 0
    shares: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])  # translated, tasks, labels done, total
    for t in tasks:
        row = shares[lang_of[t.id]]
        row[0] += "language_fallback" not in t.inputs
        row[1] += 1
        done, total = t.inputs.get("labels", [0, 0])
        row[2] += int(done)
        row[3] += int(total)
    en = em.get("en", {})
    out: dict[str, dict[str, Any]] = {}
    for lang in sorted(shares, key=lambda x: (x != "en", x)):
        mine = em.get(lang, {})
        paired = sorted(set(mine) & set(en))
        em_p = sum(mine[q] for q in paired) / len(paired) if paired else None
        em_en = sum(en[q] for q in paired) / len(paired) if paired else None
        tr, n_tasks, ldone, ltotal = shares[lang]
        out[lang] = {
            "n": len(mine), "em": round(sum(mine.values()) / len(mine), 6) if mine else None,
            "n_paired": len(paired),
            "em_paired": None if em_p is None else round(em_p, 6),
            "em_en_paired": None if em_en is None else round(em_en, 6),
            "rel_en": round(em_p / em_en, 6) if paired and em_en else None,
            "templates": 1.0 if lang == "en" else round(tr / n_tasks, 6),
            "labels": 1.0 if lang == "en" else (round(ldone / ltotal, 6) if ltotal else None),
        }
    return out


def format_languages(r: dict[str, dict[str, Any]]) -> str:
    """The language block of the geoqa table (percentages; ``-`` for ``None``)."""
    def pct(x):
        return "-" if x is None else f"{100 * x:.1f}"
    lines = ["", f"{'language':<10}  {'n':>6}  {'EM':>6}  {'paired':>6}  {'EM_p':>6}  {'EM_en':>6}  "
             f"{'EM_p/EM_en':>10}  {'templ%':>6}  {'label%':>6}"]
    for lang, row in r.items():
        rel = "-" if row["rel_en"] is None else f"{row['rel_en']:.3f}"
        lines.append(f"{lang:<10}  {row['n']:>6}  {pct(row['em']):>6}  {row['n_paired']:>6}  "
                     f"{pct(row['em_paired']):>6}  {pct(row['em_en_paired']):>6}  {rel:>10}  "
                     f"{pct(row['templates']):>6}  {pct(row['labels']):>6}")
    lines.append("Languages (true-premise questions): EM_p and EM_en are the language's and English's EM over "
                 "the questions both have (paired by question id); templ% / label%: share of tasks whose "
                 "template and of entity labels that are translated (the rest fall back to English).")
    return "\n".join(lines)
