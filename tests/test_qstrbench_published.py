"""Rubric qstrbench-published: QSTRBench's released scorer (bin/process.py) rebuilt from its
description; hand-derived values, its own parser examples, and a brute-force second computation
of the Jaccard guess rate."""
from __future__ import annotations

import json
from itertools import chain, combinations

import pytest

from stsim.answers import parse_answer, qstrbench_published_relations
from stsim.scoring.qstrbench_published import jaccard, jaccard_guess_rate


@pytest.mark.parametrize("text, names", [  # the examples process.py checks itself against
    ("A < B", ["<"]),
    ("TPPi(x, y), x NTPP y", ["TPPi", "NTPP"]),
    ("A >B, C<D,E=F)", [">", "<", "="]),
    ("###>(x,z)", [">"]),
    ("PP(x,y) and PP(y,z) means that x and y are not coincident.\n\n### Answer: PP, PP, EQ", ["PP", "PP", "EQ"]),
    ("\n\n### Answer: ID(y,x)\n\nDisclaimer: general guidance only", ["ID"]),
    ('\n\n### Answer: ID(y,x),PPi(x,y)".', ["ID", "PPi"]),
    ("no marker\n**EC**; dc", ["EC", "dc"]),  # no "answer:": the last line; case kept
    ("no marker\nlast line: EC", ["line:"]),  # three words: the middle one, as process.py reads it
])
def test_published_reader(text, names):
    assert qstrbench_published_relations(text) == names


def _brute(b: int, a: int, converse: bool) -> float:
    B = range(b)
    guesses = [{x} for x in B] if converse else [set(c) for c in chain.from_iterable(
        combinations(B, r) for r in range(1, b + 1))]
    A = set(range(a))
    return sum(jaccard(g, A) for g in guesses) / len(guesses)


@pytest.mark.parametrize("b, a, converse", [(3, 1, True), (8, 1, True), (5, 2, False), (8, 3, False), (9, 9, False)])
def test_jaccard_guess_rate_closed_form_equals_enumeration(b, a, converse):
    assert jaccard_guess_rate(b, a, converse) == pytest.approx(_brute(b, a, converse), abs=1e-12)


def test_jaccard_guess_rate_by_hand():
    # gold = all 5 relations of RCC-5: J = |X| / 5, mean over the 31 subsets = (5 * 16) / (5 * 31)
    assert jaccard_guess_rate(5, 5, False) == pytest.approx(16 / 31)
    assert jaccard_guess_rate(8, 1, True) == pytest.approx(1 / 8)


def test_parse_answer_with_published_rubric_keeps_case_and_repeats_once():
    a = parse_answer("### Answer: DR, EQ, DR", task_id="t", step=None, answer_format="relation_set",
                     rubric="qstrbench-published")
    assert a.status == "ok" and a.value == ["DR", "EQ"]
    a = parse_answer("### Answer: DR, EQ", task_id="t", step=None, answer_format="relation",
                     rubric="qstrbench-published")
    assert a.status == "format_failure"


def test_stsim_score_with_qstrbench_published(tmp_path, capsys):
    from stsim.cli import main
    from stsim.records import read_tasks
    parts = []
    for fam in ("qstr.pa.converse", "qstr.rcc5.ct"):
        f = tmp_path / f"{fam}.jsonl"
        assert main(["generate", "qstrbench", "--family", fam, "--n", "1", "-o", str(f)]) == 0
        parts.append(f.read_text())
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text("".join(parts))
    ts = {t.family: t for t in read_tasks(tasks)}
    rcc5 = ts["qstr.rcc5.ct"]
    gold5 = set(rcc5.meta["canonical_answer"])
    assert gold5 == {"DR", "EQ", "PO", "PP", "PPi"}  # DR o DR: every RCC-5 relation
    pa = ts["qstr.pa.converse"]
    replies = {pa.id: f"Thinking...\n### Answer: {pa.meta['canonical_answer'][0]}",
               rcc5.id: "### Answer: DR(x,z), EQ(x,z)"}
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"task_id": k, "text": v}) + "\n" for k, v in replies.items()))
    out = tmp_path / "out"
    assert main(["score", str(tasks), str(answers), "--rubric", "qstrbench-published", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    pub = json.loads((out / "summary.json").read_text())["qstrbench_published"]
    assert pub["qstr.pa.converse"] == {"n": 1, "missing": 0, "strict": 1.0, "jaccard": 1.0,
                                       "normalized_strict": 1.0, "normalized_jaccard": 1.0}
    r = pub["qstr.rcc5.ct"]
    assert r["strict"] == 0.0 and r["jaccard"] == pytest.approx(2 / 5)
    assert r["normalized_strict"] == pytest.approx((0 - 1 / 31) / (1 - 1 / 31), abs=1e-6)
    assert r["normalized_jaccard"] == pytest.approx((2 / 5 - 16 / 31) / (1 - 16 / 31), abs=1e-6)
    assert "QSTRBench's released scorer" in printed and "rubric: qstrbench-published" in printed
