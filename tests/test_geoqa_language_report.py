"""EM per language relative to English in the geoqa report (`stsim score`, `stsim run`): a
tasks file holding one question set in three languages and a hand-built answers file whose
per-language EM, paired EM and translation shares are derived by hand below."""
from __future__ import annotations

import json
from dataclasses import replace

from stsim.answers_geo import answer_text
from stsim.benchmarks.suites import get_suite
from stsim.cli import main
from stsim.generators.geoqa_languages import with_language
from stsim.records import dumps

FAMILY = "geoqa.coordinates.city"


def _tasks():
    en = list(get_suite("geoqa-mini").tasks(n=5, seed=0, only=FAMILY))
    de = [with_language(t, "de") for t in en[:4]]
    ja = [with_language(t, "ja") for t in en[1:4]]
    # hand-set translation bookkeeping (what the transform records), so the shares below are
    # ours whatever the translation data holds: de task 3 fell back to the English template;
    # labels de: [1,2] x 3 and [0,2]; ja: [2,2] x 3
    de = [replace(t, inputs={**t.inputs, "labels": [1, 2]}) for t in de[:3]] + \
         [replace(de[3], inputs={**{k: v for k, v in de[3].inputs.items() if k != "question_en"},
                                 "labels": [0, 2], "language_fallback": "template"})]
    ja = [replace(t, inputs={**t.inputs, "labels": [2, 2]}) for t in ja]
    return en, de, ja


def test_em_per_language_relative_to_english(tmp_path, capsys):
    en, de, ja = _tasks()
    assert len({t.id for t in en + de + ja}) == 12
    assert [t.inputs["question_id"] for t in de] == [t.id for t in en[:4]]
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(dumps(t.to_dict()) + "\n" for t in en + de + ja))

    def right(t):
        return {"task_id": t.id, "text": f"Answer: {answer_text(t.answer_format, t.answer)}"}

    def wrong(t):
        return {"task_id": t.id, "text": "Answer: 0.5, 0.5"}
    # questions q0..q4.  en: q0 right, q1 right, q2 wrong, q3 right, q4 wrong  -> EM 3/5
    # de (q0..q3): q0 right, q1 wrong, q2 wrong, q3 refused                   -> EM 1/4
    #    paired with en over q0..q3: en EM 3/4, de 1/4, ratio 1/3
    # ja (q1..q3): q1 right, q2 right, q3 (no line: missing)                   -> EM 2/3
    #    paired over q1..q3: en EM 2/3 (q1, q3), ja 2/3, ratio 1
    rows = [right(en[0]), right(en[1]), wrong(en[2]), right(en[3]), wrong(en[4]),
            right(de[0]), wrong(de[1]), wrong(de[2]), {"task_id": de[3].id, "text": "I don't know."},
            right(ja[0]), right(ja[1])]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "scored"
    assert main(["score", str(tasks), str(answers), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    lang = json.loads((out / "geoqa_report.json").read_text())["languages"]
    assert set(lang) == {"en", "de", "ja"}
    assert lang["en"] == {"n": 5, "em": 0.6, "n_paired": 5, "em_paired": 0.6, "em_en_paired": 0.6,
                          "rel_en": 1.0, "templates": 1.0, "labels": 1.0}
    assert lang["de"] == {"n": 4, "em": 0.25, "n_paired": 4, "em_paired": 0.25, "em_en_paired": 0.75,
                          "rel_en": round(1 / 3, 6), "templates": 0.75, "labels": 0.375}
    assert lang["ja"] == {"n": 3, "em": round(2 / 3, 6), "n_paired": 3, "em_paired": round(2 / 3, 6),
                          "em_en_paired": round(2 / 3, 6), "rel_en": 1.0, "templates": 1.0, "labels": 1.0}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["analyses"]["geoqa."]["languages"] == lang
    # the printed table: one row per language
    rows_printed = [line.split()[0] for line in printed.splitlines() if line.split()[:1] in (["en"], ["de"], ["ja"])]
    assert rows_printed == ["en", "de", "ja"]  # English first
    row = next(line for line in printed.splitlines() if line.startswith("de "))
    assert row.split() == ["de", "4", "25.0", "4", "25.0", "75.0", "0.333", "75.0", "37.5"]
    # the overall EM mixes the languages: 6 right of 12 true-premise questions
    assert json.loads((out / "geoqa_report.json").read_text())["overall"]["em"] == 0.5


def test_english_only_has_no_language_block(tmp_path):
    from stsim.scoring.geoqa_languages import language_table
    en, _, _ = _tasks()
    assert language_table(en, []) is None


def test_run_in_one_language_reports_its_shares(tmp_path, capsys):
    """`stsim run --language de`: one row, nothing paired with English (EM/EM_en '-')."""
    out = tmp_path / "de"
    assert main(["run", "geoqa-mini", "--family", FAMILY, "--n", "3", "--language", "de", "--solver", "oracle",
                 "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    lang = json.loads((out / "geoqa_report.json").read_text())["languages"]
    assert list(lang) == ["de"] and lang["de"]["n"] == 3 and lang["de"]["em"] == 1.0
    assert lang["de"]["n_paired"] == 0 and lang["de"]["rel_en"] is None
    tasks = [json.loads(x) for x in (out / "tasks.jsonl").read_text().splitlines()]
    done = sum(t["inputs"]["labels"][0] for t in tasks)
    total = sum(t["inputs"]["labels"][1] for t in tasks)
    assert lang["de"]["labels"] == round(done / total, 6)
    assert any(line.startswith("de ") for line in printed.splitlines())
