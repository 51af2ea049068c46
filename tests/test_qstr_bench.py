"""The QSTRBench generator: exact question counts (QSTRBench §3, §4), distinct prompts,
determinism, the prompt structure of Table 4, and the oracle solver scoring 100 %."""
from __future__ import annotations

from collections import Counter

import pytest

from stsim.scoring.score import score_answers, summarise
from stsim.solvers.base import get_solver
from stsim.benchmarks.suites import get_suite
from stsim.generators.qstrbench import EXTENDED_FAMILIES, EXTENDED_VARIANTS
from stsim.qstr.prompts import nonce_words
from stsim.registry import generate_task

#: QSTRBench §4 section headings: questions per calculus (n + n + n^2).
PAPER_COUNTS = {"PA": 15, "RCC-5": 35, "CDC": 99, "IA": 195, "RCC-8": 80, "INDU": 675,
                "STAR": 99, "9IM": 80, "RCC-22": 528}


@pytest.fixture(scope="module")
def base_tasks():
    return list(get_suite("qstrbench").tasks())


def test_counts_per_calculus_match_paper(base_tasks):
    got = Counter(t.meta["calculus"] for t in base_tasks)
    assert dict(got) == PAPER_COUNTS


def test_total_is_1806(base_tasks):
    assert len(base_tasks) == 1806


def test_questions_distinct_and_deterministic(base_tasks):
    assert len({t.prompt for t in base_tasks}) == len(base_tasks)
    assert len({t.id for t in base_tasks}) == len(base_tasks)
    again = generate_task(base_tasks[100].family, base_tasks[100].meta["index"], suite="qstrbench")
    assert again.to_dict() == base_tasks[100].to_dict()
    qtypes = Counter(t.meta["qtype"] for t in base_tasks)
    assert qtypes["converse"] == qtypes["cn"] == 102


def test_prompt_structure(base_tasks):
    """Table 4: role, description, [CN text], announcement, [multi-answer], answer form, question."""
    by = {(t.meta["calculus"], t.meta["qtype"]): t for t in base_tasks}
    conv, ct, cn = by[("RCC-8", "converse")], by[("RCC-8", "ct")], by[("RCC-8", "cn")]
    for t in (conv, ct, cn):
        assert "### Answer:" in t.prompt and t.prompt.splitlines()[-1].startswith(("Given", "Which"))
    assert "More than one relation" not in conv.prompt and "More than one relation" in ct.prompt
    assert "conceptual neighbourhood" in cn.prompt and "conceptual neighbourhood" not in ct.prompt
    assert "deform" in cn.prompt and "deform" not in by[("CDC", "cn")].prompt
    assert "topological distance" in by[("9IM", "cn")].prompt


def test_extended_counts():
    """§3: 6 x 1806 + schematic (30+390+1350+70+160+1056) + 6 x 80 RCC-8 variants = 14,372."""
    per_variant = Counter()
    for fam, n in EXTENDED_FAMILIES.items():
        per_variant[fam.split(".")[1]] += n
    for v in ("point", "latex", "unicode", "reverse", "none", "swapped"):
        assert per_variant[v] == 80
    assert per_variant["schematic-eponymous"] == per_variant["schematic-anonymous"] == (30 + 390 + 1350 + 70 + 160 + 1056) // 2
    assert per_variant["prefix-symbol"] == 1806
    assert sum(per_variant.values()) == 14372
    assert set(per_variant) == set(EXTENDED_VARIANTS)


def test_nonce_words_rules():
    """§3: seven letters; distinct; enough for the 102 relations of the benchmark."""
    words = nonce_words()
    assert len(words) >= 102 and len(set(words)) == len(words)
    assert all(len(w) == 7 and w.isalpha() and w.islower() for w in words)


def test_nonce_and_swapped_prompts_hide_the_calculus():
    t = generate_task("qstrx.prefix-nonce.rcc8.ct", 0)
    assert "RCC" not in t.prompt and "The calculus in this question" in t.prompt
    s = generate_task("qstrx.swapped.rcc8.converse", 0)  # DC shown as PO
    assert "PO(x,y) means that x and y share no point" in s.prompt and s.answer == "PO"


@pytest.mark.parametrize("calc", ["rcc22", "indu", "star", "rcc8", "ia"])
@pytest.mark.parametrize("variant", ["prefix-nonce", "infix-nonce", "schematic-anonymous"])
def test_anonymous_prompts_name_no_calculus_and_no_relation(calc, variant):
    """Nonce prompts hide the calculus and its relation names (QSTRBench §3, Appendix A.8): the
    RCC-22 paragraph used to say "refines the RCC-8 relations DC and EC", INDU's named Allen
    and claimed "each relation name is an Allen relation followed by <, = or >"."""
    import re
    from stsim.qstr import all_calculi
    family = f"qstrx.{variant}.{calc}.converse"
    if family not in EXTENDED_FAMILIES:
        pytest.skip(f"no {variant} variant for {calc}")
    t = generate_task(family, 0)
    words = {n for c in all_calculi().values() for n in c.names if re.fullmatch(r"[A-Za-z_]{2,}", n)}
    words |= {"RCC", "Allen", "INDU", "STAR", "relation name"}
    hits = [w for w in words if re.search(rf"(?<![\w]){re.escape(w)}(?![\w])", t.prompt)]
    assert not hits, hits


@pytest.mark.parametrize("variant, shown", [("prefix-symbol", True), ("prefix-word", False)])
def test_indu_symbol_note_only_with_symbols(variant, shown):
    t = generate_task(f"qstrx.{variant}.indu.converse", 0)
    assert ("Allen relation followed by <, = or >" in t.prompt) == shown


def _oracle_accuracy(tasks):
    solver = get_solver("baseline")
    answers = [a for t in tasks for a in solver.solve(t)]
    return summarise(score_answers(tasks, answers, max_steps=None))


def test_oracle_scores_100_percent_on_qstrbench(base_tasks):
    summ = _oracle_accuracy(base_tasks)
    assert all(row["accuracy"] == 1.0 and row["failures"] == 0 for row in summ.values())
    assert sum(row["n"] for row in summ.values()) == len(base_tasks)


def test_oracle_scores_100_percent_on_extended_sample():
    fams = list(EXTENDED_FAMILIES)
    tasks = [generate_task(f, i) for f in fams for i in range(min(3, EXTENDED_FAMILIES[f]))]
    summ = _oracle_accuracy(tasks)
    assert all(row["accuracy"] == 1.0 for row in summ.values())


def test_chain_gold_matches_composition_for_k2():
    """A two-step chain's gold is the composition table entry (no other constraint)."""
    from stsim.qstr import get_calculus
    for i in range(30):
        t = generate_task("qstr.chain.ia", i, config={"k_min": 2, "k_max": 2})
        a, b = t.inputs["relations"]
        assert set(t.answer) == get_calculus("ia").compose(a, b)


def test_index_out_of_range_is_a_clear_error():
    with pytest.raises(ValueError, match="has exactly 8 tasks"):
        generate_task("qstr.rcc8.converse", 8)


@pytest.mark.parametrize("key", ["rcc8", "rcc5"])
def test_region_schematics_read_back_to_their_relation(key):
    """Every drawn 1-D picture, read back as two intervals, has the relation it illustrates."""
    from stsim.qstr.descriptions import rcc8_1d, schematics
    from stsim.qstr.topology import RCC8_TO_RCC5
    pics = schematics(key)
    for rel, drawings in pics.items():
        assert drawings, rel
        for d in drawings:
            xs = [i for i, ch in enumerate(d) if ch in "XB"]
            ys = [i for i, ch in enumerate(d) if ch in "YB"]
            got = rcc8_1d(xs[0], xs[-1] + 1, ys[0], ys[-1] + 1)
            assert (RCC8_TO_RCC5[got] if key == "rcc5" else got) == rel, d
