"""The QSTRBench answer reader on replies in the forms QSTRBench §4 describes (prefix and
infix atoms, braces, words, symbols, nonce names, case variants, hallucinated names, RCC-8
names given for RCC-22), through both the QSTR scorer and the generic answer pipeline."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stsim.answers import parse_answer
from stsim.scoring.score import score_item
from stsim.qstr.scoring import narrowed_accuracy, read_relations, score_reply, summarise_scores
from stsim.registry import generate_task

RCC8_DC_EC = ("qstr.rcc8.ct", 4)  # DC ∘ EC = {DC, EC, PO, TPP, NTPP}
FIVE = ["DC", "EC", "NTPP", "PO", "TPP"]

# (family, index, reply, valid canonical names read, invalid names, exactly correct)
CASES = [
    (*RCC8_DC_EC, "### Answer: DC(x,z); EC(x,z); PO(x,z); TPP(x,z); NTPP(x,z)", FIVE, [], 1),
    (*RCC8_DC_EC, "### Answer: {DC, EC, PO, TPP, NTPP}", FIVE, [], 1),
    (*RCC8_DC_EC, "### Answer: DC; EC; PO; TPP; NTPP", FIVE, [], 1),
    (*RCC8_DC_EC, "### Answer: dc; ec; po; tpp; ntpp", FIVE, [], 1),
    (*RCC8_DC_EC, "reasoning...\n### Answer:\n- DC\n- EC\n- PO\n- TPP\n- NTPP", FIVE, [], 1),
    (*RCC8_DC_EC, "**### Answer:** DC, EC, PO, TPP, NTPP", FIVE, [], 1),
    (*RCC8_DC_EC, "### Answer: x DC z; x EC z; x PO z; x TPP z; x NTPP z", FIVE, [], 1),
    (*RCC8_DC_EC, "### Answer: DC, EC, PO, TPP and NTPP.", FIVE, [], 1),
    (*RCC8_DC_EC, "### Answer: [DC, EC, PO, TPP, NTPP]", FIVE, [], 1),
    (*RCC8_DC_EC, "### Answer: DC(x, z); EC(x, z); PO(x, z); TPP(x, z); NTPP(x, z)", FIVE, [], 1),
    (*RCC8_DC_EC, "### Answer: `DC`; `EC`; `PO`; `TPP`; `NTPP`", FIVE, [], 1),
    (*RCC8_DC_EC, "### Answer: DC; EC; PO; TPP", ["DC", "EC", "PO", "TPP"], [], 0),
    (*RCC8_DC_EC, "### Answer: DC; EC; PO; TPP; NTPP; EQ", FIVE + ["EQ"], [], 0),
    (*RCC8_DC_EC, "### Answer: DC; EC; PO; TPPP; NTPP", ["DC", "EC", "NTPP", "PO"], ["TPPP"], 0),
    (*RCC8_DC_EC, "### Answer: DC; EC; PO; TTP; NTPP", ["DC", "EC", "NTPP", "PO"], ["TTP"], 0),
    (*RCC8_DC_EC, "I think it is DC or EC.", [], [], 0),
    (*RCC8_DC_EC, "### Answer: first ### Answer: DC; EC; PO; TPP; NTPP", FIVE, [], 1),
    (*RCC8_DC_EC, "### Answer:", [], [], 0),
    ("qstr.rcc8.converse", 6, "### Answer: TPP(y,x)", ["TPP"], [], 1),        # TPPi -> TPP
    ("qstr.rcc8.converse", 3, "### Answer: TPPI", ["TPPi"], [], 1),
    ("qstr.rcc8.converse", 3, "### Answer: TPPi(y,x)", ["TPPi"], [], 1),
    ("qstr.rcc8.converse", 3, "### Answer: tppi", ["TPPi"], [], 1),
    ("qstr.rcc8.converse", 3, "### Answer: TPPPi", [], ["TPPPi"], 0),
    ("qstr.rcc8.converse", 3, "### Answer: NTPPPi", [], ["NTPPPi"], 0),
    ("qstr.indu.ct", 0, "### Answer: b<(x,z)", ["b<"], [], 1),
    ("qstr.indu.ct", 0, "### Answer: B<", ["b<"], [], 1),
    ("qstr.indu.ct", 0, "### Answer: b<; D>", ["b<"], ["D>"], 0),
    ("qstr.indu.ct", 0, "### Answer: S=; D=", [], ["S=", "D="], 0),
    ("qstr.pa.ct", 0, "### Answer: <(x,z)", ["<"], [], 1),
    ("qstr.pa.ct", 0, "### Answer: <(x,z);=(x,z);>(x,z)", ["<", "=", ">"], [], 0),
    ("qstr.pa.ct", 0, "### Answer: x < z", ["<"], [], 1),
    ("qstr.ia.converse", 0, "### Answer: >", [">"], [], 1),
    ("qstr.rcc22.converse", 6, "### Answer: PINSIDE_INSIDEi_EC(y,x)", ["PINSIDE_INSIDEi_EC"], [], 1),
    ("qstr.rcc22.converse", 6, "### Answer: PIE", ["PINSIDE_INSIDEi_EC"], [], 1),
    ("qstr.rcc22.converse", 6, "### Answer: EC", [], ["EC"], 0),                # RCC-8 name
    ("qstr.rcc22.converse", 6, "### Answer: PINSIDE_INSII_DC", [], ["PINSIDE_INSII_DC"], 0),
    ("qstr.rcc22.cn", 6, "### Answer: PO; EC; DC", ["PO"], ["EC", "DC"], 0),
    ("qstrx.prefix-nonce.rcc8.ct", 1, "### Answer: ansproy(x,z)", ["DC"], [], 1),
    ("qstrx.prefix-nonce.rcc8.ct", 1, "### Answer: DC(x,z)", [], ["DC"], 0),    # symbol, not nonce
    ("qstrx.infix-word.rcc8.ct", 1, "### Answer: x disconnected z", ["DC"], [], 1),
    ("qstrx.infix-word.rcc8.ct", 1, "### Answer: Disconnected", ["DC"], [], 1),
    ("qstr.star.ct", 4, "### Answer: 3", ["3"], [], 1),
    ("qstr.star.ct", 4, "### Answer: 3(x,z); 9(x,z)", ["3"], ["9"], 0),
    ("qstr.cdc.cn", 8, "### Answer: N; NE; E; SE; S; SW; W; NW", ["E", "N", "NE", "NW", "S", "SE", "SW", "W"], [], 1),
    ("qstr.9im.cn", 1, "### Answer: D; O", ["D", "O"], [], 1),
    ("qstr.9im.cn", 1, "### Answer: D; IB", ["D"], ["IB"], 0),
    ("qstrx.swapped.rcc8.converse", 3, "### Answer: NTPP", ["TPPi"], [], 1),
]


@pytest.mark.parametrize("family,index,reply,valid,invalid,correct", CASES)
def test_reply_forms(family, index, reply, valid, invalid, correct):
    task = generate_task(family, index)
    got_valid, got_invalid, _ = read_relations(reply, task)
    assert sorted(got_valid) == sorted(valid)
    assert got_invalid == invalid
    assert score_reply(task, reply).correct == correct
    # the generic pipeline agrees on correctness (invalid names are format failures there)
    ans = parse_answer(reply, task_id=task.id, step=None, answer_format=task.answer_format,
                       rubric=task.meta["rubric"], spec=task.meta["answer_spec"])
    generic = score_item(task, None, ans)
    assert (generic.status == "ok" and generic.correct == 1) == bool(correct)


def test_at_least_forty_cases():
    assert len(CASES) >= 40


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.text())
def test_reader_never_raises(text):
    task = generate_task(*RCC8_DC_EC)
    read_relations(text, task)
    read_relations("### Answer: " + text, task)
    parse_answer("### Answer: " + text, task_id=task.id, step=None, answer_format=task.answer_format,
                 rubric="qstrbench", spec=task.meta["answer_spec"])


def test_tp_fp_fn_and_summary():
    t1 = generate_task(*RCC8_DC_EC)
    t2 = generate_task("qstr.rcc8.converse", 3)
    s1 = score_reply(t1, "### Answer: DC; EC; PO; EQ; XX")   # 3 TP, 1 FP (EQ), 2 FN, 1 invalid
    s2 = score_reply(t2, "no marker")
    assert (s1.tp, s1.fp, s1.fn, s1.invalid) == (3, 1, 2, ["XX"])
    summ = summarise_scores([s1, s2])
    assert summ["all/all"]["n"] == 2 and summ["all/all"]["unanswered"] == 1
    assert summ["RCC-8/ct"]["invalid_names"] == 1
    # guess rates, QSTRBench §4: 1/(2^8 - 1) for CT, 1/8 for converse; micro-average of both
    assert summ["RCC-8/ct"]["guess_rate"] == pytest.approx(1 / 255)
    assert summ["all/all"]["guess_rate"] == pytest.approx((1 / 255 + 1 / 8) / 2)


def test_rcc_narrowing():
    """An RCC-22 reply with the wrong EC refinement is wrong, but right once collapsed to RCC-8."""
    task = generate_task("qstr.rcc22.converse", 6)   # gold PINSIDE_INSIDEi_EC
    replies = {task.id: "### Answer: OUTSIDE_OUTSIDEi_EC"}
    r8 = narrowed_accuracy([task], replies, "RCC-22", "RCC-8")
    assert (r8["accuracy"], r8["narrowed_accuracy"]) == (0.0, 1.0)
    wrong = {task.id: "### Answer: OUTSIDE_OUTSIDEi_DC"}
    assert narrowed_accuracy([task], wrong, "RCC-22", "RCC-8")["narrowed_accuracy"] == 0.0
    assert narrowed_accuracy([task], wrong, "RCC-22", "RCC-5")["narrowed_accuracy"] == 1.0


def test_relation_set_chance_is_the_guess_rate_of_section_4():
    """QSTRBench §4: 1/(2^n - 1) for CT and CN; counted by enumerating every non-empty subset
    of PA's three relations and scoring each as a guess for a fixed gold."""
    from itertools import combinations
    from stsim.answers import FORMATS
    fmt = FORMATS["relation_set"]
    spec = {"choices": ["<", "=", ">"]}
    guesses = [list(c) for k in (1, 2, 3) for c in combinations(spec["choices"], k)]
    hits = sum(fmt.correct(g, ["<", ">"]) for g in guesses)
    assert fmt.chance(spec) == pytest.approx(hits / len(guesses)) == pytest.approx(1 / 7)
    assert fmt.chance({"choices": list("abcdefgh")}) == pytest.approx(1 / 255)
    assert fmt.chance(None) is None
