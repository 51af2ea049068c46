"""Parallel languages of geoqa questions (seed 003 §3.5): placeholders verbatim in every
translated template, the seven scripts, CLDR country labels, same ids across languages."""
from __future__ import annotations

import json
import string
import unicodedata

import pytest

from stsim.geoqa.languages import LANGUAGES, QUESTIONS, country_label


def _fields(text: str) -> list[str]:
    return sorted(f for _, f, _, _ in string.Formatter().parse(text) if f is not None)


def test_placeholders_verbatim_in_every_language():
    from stsim.geoqa.executor import load_templates
    T = load_templates()
    assert len(LANGUAGES) >= 8 and set(QUESTIONS) == set(LANGUAGES) - {"en"}
    for lang, table in QUESTIONS.items():
        assert set(table) == set(QUESTIONS["de"]), lang  # one template set for every language
        for tid, text in table.items():
            assert tid in T, (lang, tid)
            assert _fields(text) == _fields(T[tid].paraphrases[0]), (lang, tid, text)


def _scripts(text: str) -> set[str]:
    out = set()
    for ch in text:
        if not ch.isalpha():
            continue
        name = unicodedata.name(ch, "")
        for script, key in (("Latin", "LATIN"), ("Cyrillic", "CYRILLIC"), ("Greek", "GREEK"),
                            ("Perso-Arabic", "ARABIC"), ("Han", "CJK UNIFIED"), ("Kana", "HIRAGANA"),
                            ("Kana", "KATAKANA"), ("Georgian", "GEORGIAN")):
            if name.startswith(key):
                out.add(script)
    return out


def test_seven_scripts_are_covered():
    seen = {lang: set().union(*(_scripts(t) for t in table.values())) for lang, table in QUESTIONS.items()}
    assert {"Cyrillic"} <= seen["ru"] and {"Greek"} <= seen["el"] and {"Perso-Arabic"} <= seen["fa"]
    assert {"Han"} <= seen["zh"] and {"Kana", "Han"} <= seen["ja"] and {"Georgian"} <= seen["ka"]
    assert "Latin" in seen["de"] and "Latin" in seen["es"]


def test_cldr_country_labels():
    assert country_label("DE", "Germany", "ru") == ("Германия", True)
    assert country_label("JP", "Japan", "ja") == ("日本", True)
    assert country_label("GE", "Georgia", "ka") == ("საქართველო", True)
    assert country_label("QQ", "Nowhere", "de") == ("Nowhere", False)


def test_generate_all_languages_same_ids(capsys):
    from stsim.cli import main
    assert main(["generate", "geoqa-small", "--family", "*admin.count_in_admin1", "--n", "2", "--language", "all"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    by_id: dict[str, list] = {}
    for r in rows:  # one question id, each language's task its own id (ID@LANG: a scorable file)
        by_id.setdefault(r["inputs"].get("question_id", r["id"]), []).append(r)
    assert len({r["id"] for r in rows}) == len(rows)
    assert len(by_id) == 4 and all(len(v) == len(LANGUAGES) for v in by_id.values())
    for qid, versions in by_id.items():
        assert [v["id"] for v in versions] == [qid] + [f"{qid}@{lang}" for lang in list(LANGUAGES)[1:]]
    for versions in by_id.values():
        en = versions[0]
        assert {json.dumps(v["answer"]) for v in versions} == {json.dumps(en["answer"])}
        assert len({v["inputs"]["question"] for v in versions}) == len(LANGUAGES)
        for v in versions[1:]:
            assert v["inputs"]["question_en"] == en["inputs"]["question"]
            # the division stays English (no tagged source), the country is CLDR's: 1 of 2 labels
            assert v["inputs"]["labels"] == [1, 2]
            assert en["inputs"]["binding"]["params"]["admin1"] in v["prompt"]
            assert v["prompt"].endswith(en["prompt"].split("\n", 1)[1])  # instruction stays English


def test_untranslated_template_falls_back_and_bad_language():
    from stsim.benchmarks.suites import get_suite
    from stsim.cli import main
    from stsim.generators.geoqa_languages import with_language
    (t,) = list(get_suite("geoqa-small").tasks(n=1, only="geoqa.shape.parts"))
    k = with_language(t, "ka")
    assert k.prompt == t.prompt and k.inputs["language_fallback"] == "template"
    with pytest.raises(ValueError):
        with_language(t, "xx")
    assert main(["generate", "geoqa-mini", "--language", "xx"]) == 2
