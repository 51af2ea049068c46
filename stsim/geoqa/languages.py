"""Parallel languages of the geoqa questions (seed 003 §3.5).

The same question (same task id, binding and gold) in another language: the question sentence
is translated, placeholders are filled with localised entity labels, and -- as in the paper's
evaluation ("the instructions, answer format and tool catalog remain English", §5.3) -- the
answer instruction, the ``Answer:`` line and the maps of simulated cities stay English, and
gold answers stay the English names.

* **Template translations** (:func:`questions`; data files
  ``stsim/data/geoqa_translations/<lang>.json``) are written by the stsim developers for the
  canonical wording (paraphrase 0) of every template in every language; they were **not**
  produced by a translation service and are **not human-verified** by native speakers (the
  paper's post-editing step has no counterpart here).  Placeholders are kept verbatim (a test
  checks every template in every language).  A template missing from a file would stay English
  and the task would record ``inputs["language_fallback"] = "template"`` (none is missing).
* **Entity labels**: country names from CLDR territory names (Babel, by ISO-3166 alpha-2 code);
  city and admin-1 names have no language-tagged source offline (GeoNames ``alternateNames``
  is not packaged), so they stay English and are counted as fallbacks: every task records
  ``inputs["labels"] = [translated, total]`` and :func:`translated_share` reports the share per
  language.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Iterable

#: Language code (ISO 639-1, as CLDR) -> (English name, script).
LANGUAGES: dict[str, tuple[str, str]] = {
    "en": ("English", "Latin"),
    "de": ("German", "Latin"),
    "es": ("Spanish", "Latin"),
    "ru": ("Russian", "Cyrillic"),
    "el": ("Greek", "Greek"),
    "fa": ("Persian", "Perso-Arabic"),
    "zh": ("Chinese (Simplified)", "Han"),
    "ja": ("Japanese", "Japanese (Kanji/Kana)"),
    "ka": ("Georgian", "Georgian"),
}

#: Package folder (under ``stsim/``) of the template translations, one ``<lang>.json`` per
#: non-English language (``README.md`` there: provenance and format).
TRANSLATIONS_DIR = "data/geoqa_translations"


@lru_cache(maxsize=None)
def _load(lang: str) -> dict[str, Any]:
    """The translation file of ``lang`` (``{}`` for English), checked; see :func:`questions`."""
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; known: {', '.join(LANGUAGES)}")
    if lang == "en":
        return {"questions": {}, "values": {}}
    import json
    from importlib import resources
    res = resources.files("stsim").joinpath(f"{TRANSLATIONS_DIR}/{lang}.json")
    where = f"stsim/{TRANSLATIONS_DIR}/{lang}.json"
    try:
        data = json.loads(res.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{where}: missing (translations of language {lang!r})") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{where}: not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("language") != lang:
        raise ValueError(f"{where}: its 'language' is {data.get('language') if isinstance(data, dict) else None!r}, "
                         f"expected {lang!r}")

    def strings(x) -> bool:
        return isinstance(x, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in x.items())

    if not strings(data.get("questions")):
        raise ValueError(f"{where}: 'questions' must be an object of template id -> text")
    vals = data.get("values", {})
    if not (isinstance(vals, dict) and all(strings(v) for v in vals.values())):
        raise ValueError(f"{where}: 'values' must be an object of placeholder -> {{English value: text}}")
    return {"questions": dict(data["questions"]), "values": {k: dict(v) for k, v in vals.items()}}


def questions(lang: str) -> dict[str, str]:
    """Template id -> the canonical question (paraphrase 0) in ``lang``, read from the package
    data file ``stsim/data/geoqa_translations/<lang>.json`` (``{"language": lang, "name": ...,
    "provenance": ..., "questions": {template id: text}, "values": {placeholder: {English value:
    text}}}``).  English has no file: returns ``{}``.

    Raises:
        ValueError: an unknown language, a missing file, or a file whose ``language`` is not
            ``lang`` or whose ``questions`` / ``values`` are not objects of strings (the file
            is named).
    """
    return dict(_load(lang)["questions"])


def parameter_values(lang: str) -> dict[str, dict[str, str]]:
    """Placeholder -> {English parameter value -> its text in ``lang``} for the parameters
    whose values are English words: ``unit`` (``km``, ``miles``, in the grammatical form the
    ``metric.distance`` translation needs), ``dir`` (the 8 directions of a geohash neighbour)
    and ``kind`` (amenity kinds of the simulated cities, singular: the templates name the kind
    as a category, so ``{kind_plural}`` takes the same text).  ``{}`` for English.

    Raises:
        ValueError: as :func:`questions`.
    """
    return {k: dict(v) for k, v in _load(lang)["values"].items()}


def all_questions() -> dict[str, dict[str, str]]:
    """Language -> :func:`questions` for every non-English language of :data:`LANGUAGES`."""
    return {lang: questions(lang) for lang in LANGUAGES if lang != "en"}


@lru_cache(maxsize=None)
def _territories(lang: str) -> dict[str, str]:
    from babel import Locale
    return dict(Locale.parse(lang).territories)


def country_label(iso2: str, english: str, lang: str) -> tuple[str, bool]:
    """The CLDR name of country ``iso2`` in ``lang`` (Babel), or ``english`` when CLDR has none.
    Returns ``(label, translated)``."""
    if lang == "en":
        return english, True
    name = _territories(lang).get(str(iso2).upper())
    return (name, True) if name else (english, False)


def localise_values(values: dict[str, str], binding: dict[str, Any], roles: dict[str, str],
                    lang: str) -> tuple[dict[str, str], int, int]:
    """Placeholder texts with entity labels in ``lang``; returns ``(values, translated, total)``
    counting every entity label (each city, each country name) once.

    City labels stay English (no offline language-tagged source); their country part
    (``Name, Country``) is replaced by its CLDR name.  A ``{country_name}`` parameter is looked
    up by the binding's ``cc`` (ISO alpha-2).  Parameters whose values are English words
    (``unit``, ``dir``, ``kind``, ``kind_plural``) take their :func:`parameter_values` text;
    they are not entity labels and are not counted.
    """
    from .context import get_context
    ctx = get_context()
    out = dict(values)
    done = total = 0
    for role, eid in binding.get("ids", {}).items():
        if role not in out or not isinstance(eid, str):
            continue
        if eid.startswith("gn:"):
            row = ctx.city(eid)
            total += 1  # the city's own name: English fallback (counted as not translated)
            cname = str(row["country_name"])
            if cname and out[role].endswith(", " + cname):
                label, ok = country_label(str(row["iso2"]), cname, lang)
                out[role] = out[role][: -len(cname)] + label
                total += 1
                done += ok
        elif eid.startswith("ne:"):
            total += 1
            row = ctx.countries.loc[eid[3:]] if eid[3:] in ctx.countries.index else None
            if row is not None and row.get("iso2"):
                label, ok = country_label(str(row["iso2"]), out[role], lang)
                out[role] = label
                done += ok
        else:
            total += 1  # simulated places keep their names
    cc = binding.get("params", {}).get("cc")
    if "country_name" in out and cc:
        label, ok = country_label(cc, out["country_name"], lang)
        out["country_name"] = label
        total += 1
        done += ok
    if "admin1" in out:
        total += 1
    if lang == "en":
        done = total
    else:
        table = _load(lang)["values"]
        for name in ("unit", "dir"):
            if name in out and out[name] in table.get(name, {}):
                out[name] = table[name][out[name]]
        kind = binding.get("params", {}).get("kind")
        if kind in table.get("kind", {}):
            for name in ("kind", "kind_plural"):
                if name in out:
                    out[name] = table["kind"][kind]
    return out, done, total


def question_in(tid: str, values: dict[str, str], binding: dict[str, Any], roles: dict[str, str],
                lang: str) -> tuple[str | None, int, int]:
    """The question of template ``tid`` in ``lang`` (None when no translation) and the label
    counts of :func:`localise_values`.

    Raises:
        ValueError: an unknown language.
    """
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; known: {', '.join(LANGUAGES)}")
    text = questions(lang).get(tid)
    vals, done, total = localise_values(values, binding, roles, lang)
    return (None if text is None else text.format(**vals)), done, total


def translated_share(tasks: Iterable[Any]) -> dict[str, dict[str, Any]]:
    """Per language, how much of the geoqa tasks is translated (seed 003 §3.5's English
    fallback, reported).

    ``tasks``: :class:`stsim.records.Task` objects or their dicts (``to_dict()``, JSONL rows);
    tasks whose family is not ``geoqa.*`` are skipped.  A task's language is
    ``inputs["language"]`` (English tasks carry none).  Returns language -> ``{"tasks": n,
    "questions_translated": k, "question_share": k / n, "labels_translated": t, "labels_total":
    m, "label_share": t / m}`` (shares in [0, 1]; ``label_share`` is None for English, whose
    labels are the source, and when no task has a label).  A question counts as translated
    unless ``inputs["language_fallback"]`` is set; labels are summed from ``inputs["labels"] =
    [translated, total]``.
    Languages appear in :data:`LANGUAGES` order.
    """
    acc: dict[str, list[int]] = {}
    for t in tasks:
        family = t["family"] if isinstance(t, dict) else t.family
        if not str(family).startswith("geoqa."):
            continue
        inputs = t["inputs"] if isinstance(t, dict) else t.inputs
        lang = inputs.get("language", "en")
        a = acc.setdefault(lang, [0, 0, 0, 0])
        a[0] += 1
        a[1] += "language_fallback" not in inputs
        if lang != "en":
            done, total = inputs.get("labels", (0, 0))
            a[2] += done
            a[3] += total
    out = {}
    for lang in sorted(acc, key=lambda x: list(LANGUAGES).index(x) if x in LANGUAGES else len(LANGUAGES)):
        n, k, done, total = acc[lang]
        out[lang] = {"tasks": n, "questions_translated": k, "question_share": k / n,
                     "labels_translated": done, "labels_total": total,
                     "label_share": done / total if total else None}
    return out
