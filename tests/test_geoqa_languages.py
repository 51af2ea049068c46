"""Parallel languages of geoqa questions (seed 003 §3.5): every template translated in every
language (stsim/data/geoqa_translations), placeholders verbatim, each text in its language's
script, CLDR country labels, same ids across languages, English tasks unchanged."""
from __future__ import annotations

import json
import string
import unicodedata
from collections import Counter

import pytest

from stsim.geoqa import languages
from stsim.geoqa.languages import LANGUAGES, all_questions, country_label, questions, translated_share


def _fields(text: str) -> Counter:
    """The placeholders of ``text`` as a multiset (``{a}`` twice counts twice)."""
    return Counter(f for _, f, _, _ in string.Formatter().parse(text) if f is not None)


def _templates():
    from stsim.geoqa.executor import load_templates
    return load_templates()


def test_every_template_in_every_language_placeholders_verbatim():
    T = _templates()
    table = all_questions()
    assert len(T) == 88 and len(LANGUAGES) >= 8 and set(table) == set(LANGUAGES) - {"en"}
    for lang, texts in table.items():
        assert set(texts) == set(T), (lang, sorted(set(T) ^ set(texts)))  # full coverage
        for tid, text in texts.items():
            english = T[tid].paraphrases[0]
            assert _fields(text) == _fields(english), (lang, tid, text)
            assert text.strip() and text not in T[tid].paraphrases, (lang, tid)  # really translated
            text.format(**{f: "X" for f in _fields(text)})  # no stray braces
    assert questions("en") == {}
    with pytest.raises(ValueError, match="unknown language"):
        questions("xx")


def test_placeholder_check_catches_a_dropped_or_doubled_placeholder():
    # the multiset comparison above must fail on these (a check that cannot fail is a defect)
    en = "Which is the most populous place within {r} km of {a}, not counting {a}?"
    assert _fields("Welcher Ort im Umkreis von {r} km um {a}?") != _fields(en)
    assert _fields("{a} {a} {a} {r}") != _fields(en)
    assert _fields("{r} … {a} … {a}") == _fields(en)


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


#: language -> scripts of which each of its texts must contain at least one.
EXPECTED_SCRIPT = {"de": {"Latin"}, "es": {"Latin"}, "ru": {"Cyrillic"}, "el": {"Greek"},
                   "fa": {"Perso-Arabic"}, "zh": {"Han"}, "ja": {"Kana", "Han"}, "ka": {"Georgian"}}
#: scripts a language's texts must not contain (Latin is allowed everywhere: GeoNames, H3, EPSG...)
FOREIGN = {"Cyrillic", "Greek", "Perso-Arabic", "Han", "Kana", "Georgian"}


def test_every_text_is_in_its_languages_script():
    assert set(EXPECTED_SCRIPT) == set(LANGUAGES) - {"en"}
    for lang, texts in all_questions().items():
        own = EXPECTED_SCRIPT[lang] | ({"Han"} if lang == "ja" else set())
        for tid, text in texts.items():
            bare = "".join(lit for lit, _, _, _ in string.Formatter().parse(text))  # without placeholders
            bare = bare.replace("4πA/P²", "")  # the Polsby-Popper formula's pi is maths, not Greek text
            seen = _scripts(bare)
            assert seen & EXPECTED_SCRIPT[lang], (lang, tid, text)
            assert not (seen & FOREIGN) - own, (lang, tid, seen)
        if lang in ("de", "es"):  # their own letters, not only borrowed terms
            assert any(set(t) & set("äöüßÄÖÜ" if lang == "de" else "áéíóúñ¿¡") for t in texts.values())
    assert any("Kana" in _scripts(t) for t in all_questions()["ja"].values())
    assert _scripts("Привет {a}") == {"Cyrillic", "Latin"} and _scripts("東京") == {"Han"}


def test_english_word_parameters_have_a_text_in_every_language():
    from stsim.geoqa.premise import ABSENT_KINDS
    from stsim.geoqa.templates import _GH_DIRS
    from stsim.sim.city import AMENITY_COUNTS
    english = {"unit": {"km", "miles"}, "dir": set(_GH_DIRS), "kind": set(AMENITY_COUNTS) | set(ABSENT_KINDS)}
    assert len(english["dir"]) == 8 and len(english["kind"]) == 12
    for lang in EXPECTED_SCRIPT:
        vals = languages.parameter_values(lang)
        assert {k: set(v) for k, v in vals.items()} == english, lang
        for name, table in vals.items():
            for en, text in table.items():
                assert text.strip(), (lang, name, en)
                assert _scripts(text) & EXPECTED_SCRIPT[lang] or text == "km", (lang, name, en, text)
        assert len(set(vals["dir"].values())) == 8 and len(set(vals["kind"].values())) == 12, lang
    assert languages.parameter_values("en") == {}


def test_parameter_values_are_inserted():
    from stsim.benchmarks.suites import get_suite
    from stsim.generators.geoqa_languages import with_language
    (t,) = list(get_suite("geoqa-small").tasks(n=1, only="geoqa.grid.geohash_neighbour"))
    d = t.inputs["binding"]["params"]["dir"]
    gh = t.inputs["binding"]["params"]["gh"] if "gh" in t.inputs["binding"]["params"] else None
    for lang in EXPECTED_SCRIPT:
        q = with_language(t, lang).inputs["question"]
        assert languages.parameter_values(lang)["dir"][d] in q and d not in q, (lang, q)
        assert gh is None or gh in q
    (t,) = list(get_suite("geoqa-small").tasks(n=1, only="geoqa.aggregation.count_amenities"))
    kind = t.inputs["binding"]["params"]["kind"]
    q = with_language(t, "ru").inputs["question"]
    assert "«" + languages.parameter_values("ru")["kind"][kind] + "»" in q and kind not in q


def test_translation_files_are_package_data():
    import tomllib
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["stsim"]
    assert f"{languages.TRANSLATIONS_DIR}/*" in data
    folder = root / "stsim" / languages.TRANSLATIONS_DIR
    assert sorted(p.stem for p in folder.glob("*.json")) == sorted(set(LANGUAGES) - {"en"})
    readme = (folder / "README.md").read_text()
    assert "not human-verified" in readme.lower().replace("**", "") and "translation service" in readme
    for p in folder.glob("*.json"):
        d = json.loads(p.read_text(encoding="utf-8"))
        assert d["language"] == p.stem and "not human-verified" in d["provenance"]


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


def test_missing_translation_falls_back_and_bad_language(monkeypatch):
    from stsim.benchmarks.suites import get_suite
    from stsim.cli import main
    from stsim.generators.geoqa_languages import with_language
    (t,) = list(get_suite("geoqa-small").tasks(n=1, only="geoqa.shape.parts"))
    k = with_language(t, "ka")
    assert k.inputs["question"] != t.inputs["question"] and "language_fallback" not in k.inputs
    assert k.inputs["question"] in k.prompt and t.inputs["question"] not in k.prompt
    table = {tid: text for tid, text in questions("ka").items() if tid != "shape.parts"}
    monkeypatch.setattr(languages, "questions", lambda lang: table)
    k = with_language(t, "ka")  # a template missing from a file stays English, recorded
    assert k.prompt == t.prompt and k.inputs["language_fallback"] == "template"
    assert translated_share([k])["ka"]["question_share"] == 0.0
    with pytest.raises(ValueError):
        with_language(t, "xx")
    assert main(["generate", "geoqa-mini", "--language", "xx"]) == 2


def _generate_all_languages(capsys, monkeypatch, args):
    """Generate ``args`` in every language; checks the translated shares (every question
    translated, labels partly) and that the English tasks do not depend on the translations."""
    from stsim.cli import main
    assert main(["generate", *args, "--language", "all"]) == 0
    out = capsys.readouterr()
    rows = [json.loads(x) for x in out.out.splitlines()]
    shares = translated_share(rows)
    assert list(shares) == list(LANGUAGES)
    n = shares["en"]["tasks"]
    for lang, s in shares.items():
        assert s["tasks"] == n and s["questions_translated"] == n and s["question_share"] == 1.0
        if lang != "en":
            assert 0 < s["labels_translated"] <= s["labels_total"]
            assert s["label_share"] == s["labels_translated"] / s["labels_total"]
    assert shares["en"]["label_share"] is None
    assert "language ka: %d geoqa tasks, questions translated 100.0 %%" % n in out.err
    # English tasks are byte-identical with and without translations (they never read them)
    english = [json.dumps(r, sort_keys=True) for r in rows if "language" not in r["inputs"]]
    assert [r["inputs"]["question_en"] for r in rows if r["inputs"].get("language") == "ja"] == \
        [json.loads(e)["inputs"]["question"] for e in english]
    assert len(english) == n
    monkeypatch.setattr(languages, "questions", lambda lang: {})
    assert main(["generate", *args]) == 0
    again = [json.dumps(json.loads(x), sort_keys=True) for x in capsys.readouterr().out.splitlines()]
    assert again == english
    return rows


def test_generated_tasks_translated_share(capsys, monkeypatch):
    rows = _generate_all_languages(capsys, monkeypatch, ["geoqa-small", "--family", "*admin.capital", "--n", "2"])
    assert {r["inputs"]["template"] for r in rows} == {"admin.capital"}
    ru = [r for r in rows if r["inputs"].get("language") == "ru"]
    assert len(ru) == 2 and all(r["inputs"]["labels"] == [1, 1] for r in ru)  # the CLDR country name
    assert all(r["inputs"]["question"].startswith("Какой город является столицей страны ") for r in ru)


@pytest.mark.slow  # builds the pools of all 88 templates (about a minute on a cold cache)
def test_all_languages_every_template_translated_and_english_unchanged(capsys, monkeypatch):
    rows = _generate_all_languages(capsys, monkeypatch, ["geoqa-small", "--n", "1"])
    assert {r["inputs"]["template"] for r in rows} == set(_templates())
    shares = translated_share(rows)  # cities stay English: labels partly translated in each language
    assert all(0 < s["label_share"] < 1 for lang, s in shares.items() if lang != "en")
