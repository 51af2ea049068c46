"""The geoqa templates, families, suites and baselines (issue 16): inventory, executor rules,
determinism, the majority baseline and the one-table report."""
from __future__ import annotations

import json
import string
from collections import Counter
from dataclasses import replace

import pytest

from stsim.answers_geo import GEO_FORMATS
from stsim.baselines.geoqa import majority_answers, solve_majority
from stsim.cli import main
from stsim.geoqa import executor as ex
from stsim.registry import generate_task, load_families


@pytest.fixture(scope="module")
def templates():
    return ex.load_templates()


def test_inventory_65_templates_14_sfids_15_formats(templates):
    assert len(templates) >= 65
    assert {t.sfid for t in templates.values()} == set(ex.SFIDS) and len(ex.SFIDS) == 14
    assert {t.answer_format for t in templates.values()} == {f.name for f in GEO_FORMATS}
    assert all(len(t.paraphrases) >= 2 for t in templates.values())
    per_sfid = Counter(t.sfid for t in templates.values())
    assert min(per_sfid.values()) >= 4
    fams = load_families()
    assert all(f"geoqa.{tid}" in fams for tid in templates)


def test_paraphrases_use_the_same_placeholders(templates):
    for t in templates.values():
        fields = [{f for _, f, _, _ in string.Formatter().parse(p) if f} for p in t.paraphrases]
        assert all(f == fields[0] for f in fields), t.tid


def test_every_paraphrase_renders_for_the_first_question(templates):
    for tid, t in templates.items():
        inst = ex.instance(tid, 0)
        for k in range(len(t.paraphrases)):
            assert "{" not in inst.question(t, k)
        assert "{" not in inst.instruction(t)


def test_pool_prefix_equals_the_complete_pool_and_has_no_duplicates(templates):
    from stsim.geoqa.strata import stratum
    t = replace(templates["grid.same_h3"], cap=40)
    full = ex._PoolBuilder(t, 0).extend(10 ** 6)
    assert len(full) == 40  # the cap bounds the pool before every stratum cell is full
    b = ex._PoolBuilder(t, 0)
    assert b.extend(7) == full[:7] and b.extend(40) == full
    keys = [(t.paraphrases[0].format(**i.values), json.dumps(i.gold)) for i in full]
    assert len(keys) == len(set(keys))
    # yes/no balanced within each stratum cell: at most K // 2 of each answer per cell
    whole = ex.pool("grid.same_h3")
    cells = Counter((stratum(i.binding), i.gold) for i in whole)
    assert max(cells.values()) <= ex.K_PER_CELL // 2
    yes, no = (sum(v for (_, g), v in cells.items() if g is want) for want in (True, False))
    assert abs(yes - no) <= 0.05 * len(whole)


def test_degenerate_executions_are_dropped(templates):
    ctx = ex_context()
    t = templates["metric.closer"]
    a = ctx.pick_major(__import__("numpy").random.default_rng(1))[0]
    with pytest.raises(ex.Degenerate):  # a tie: B and C the same city
        t.query(ctx, {"ids": {"a": a, "b": a, "c": a}, "params": {}})
    with pytest.raises(ex.Degenerate):  # zero distance
        templates["metric.distance"].query(ctx, {"ids": {"a": a, "b": a}, "params": {"unit": "km"}})


def ex_context():
    from stsim.geoqa.context import get_context
    return get_context()


def test_generation_is_deterministic_and_keeps_gold_triples():
    a = generate_task("geoqa.metric.distance", 3, suite="s", suite_seed=5)
    b = generate_task("geoqa.metric.distance", 3, suite="s", suite_seed=5)
    assert a.to_dict() == b.to_dict()
    assert a.inputs["triples"] and all(len(x) == 3 for x in a.inputs["triples"])
    assert a.inputs["sfid"] == "metric" and a.meta["subtemplate"] in ("unit=km", "unit=miles")
    assert "Answer:" in a.prompt


def test_index_beyond_the_pool_is_a_clear_error():
    with pytest.raises(ValueError, match="has exactly"):
        generate_task("geoqa.shape.parts", 10 ** 6)


def test_network_questions_show_the_map():
    t = generate_task("geoqa.routing.length", 0)
    assert t.prompt.startswith("Map of ") and "Blocks (two-way):" in t.prompt


def test_majority_baseline_answers_the_subtemplate_mode(templates):
    table = majority_answers("direction.compass8")
    golds = Counter(i.gold for i in ex.pool("direction.compass8"))
    assert table[""] == golds.most_common(1)[0][0]
    t = generate_task("geoqa.direction.compass8", 0)
    assert solve_majority(t)[0].value == table[""]
    # continuous formats answer the median of the sub-template
    med = majority_answers("metric.distance")
    kms = sorted(i.gold for i in ex.pool("metric.distance") if i.subtemplate == "unit=km")
    n = len(kms)
    assert med["unit=km"] == pytest.approx((kms[(n - 1) // 2] + kms[n // 2]) / 2)


def test_run_prints_one_em_ne_table(capsys, tmp_path):
    code = main(["run", "geoqa-mini", "--solver", "baseline:majority", "--family", "geoqa.grid.*",
                 "--out", str(tmp_path / "run"), "--quiet"])
    out = capsys.readouterr().out
    assert code == 0
    assert "SFID" in out and "answer format" in out and "EM_cov" in out
    assert "trim.RMSE" not in out and "accuracy" not in out  # no per-family table
    report = json.loads((tmp_path / "run" / "geoqa_report.json").read_text())
    assert report["sfid"]["grid"]["n"] == 20 * 9 and report["overall"]["coverage"] == 1.0


def test_oracle_is_exact_by_construction(capsys, tmp_path):
    assert main(["run", "geoqa-mini", "--solver", "oracle", "--family", "geoqa.shape.*", "--n", "3",
                 "--out", str(tmp_path / "o"), "--quiet"]) == 0
    report = json.loads((tmp_path / "o" / "geoqa_report.json").read_text())
    assert report["overall"]["em"] == 1.0 and report["overall"]["ne"] == 0.0


def test_subtemplates_do_not_give_the_answer_away(templates):
    # the majority baseline answers per sub-template: a sub-template that is a function of the
    # gold (e.g. 'own country' / 'other country') would hand it the answer
    for tid, t in templates.items():
        if t.answer_format != "geo_boolean":
            continue
        by_sub: dict[str, set] = {}
        for k in range(30):
            inst = ex.instance(tid, k)
            by_sub.setdefault(inst.subtemplate, set()).add(inst.gold)
        leaking = [s for s, g in by_sub.items() if len(g) == 1 and len(by_sub) > 1]
        assert len(leaking) < len(by_sub), (tid, by_sub)


def test_amenity_plurals_are_english():
    """`{kind_plural}` was `kind + "s"` ("pharmacys"); every amenity kind a question can name,
    present or absent, now takes its English plural."""
    from stsim.geoqa.premise import ABSENT_KINDS
    from stsim.geoqa.templates import plural
    from stsim.sim.city import AMENITY_COUNTS
    assert [plural(k) for k in ("pharmacy", "police station", "church", "bus", "day", "box")] == [
        "pharmacies", "police stations", "churches", "buses", "days", "boxes"]
    for kind in set(AMENITY_COUNTS) | set(ABSENT_KINDS):
        p = plural(kind)
        assert p.endswith("s") and not p.endswith(("ys", "chs", "shs")) or p.endswith(("ays", "eys", "oys")), (kind, p)



def test_generated_questions_use_the_plurals():
    """The questions of both templates that name ``{kind_plural}`` spell it as :func:`plural`."""
    from stsim.registry import generate_task, load_families
    from stsim.sim.city import AMENITY_COUNTS
    load_families()
    seen = set()
    for fam in ("geoqa.aggregation.count_amenities", "geoqa.enumeration.amenities_within"):
        for i in range(60):
            task = generate_task(fam, i)
            text = task.prompt
            assert not any(k + "s " in text for k in ("pharmacy", "police stationes")), text
            seen |= {k for k in AMENITY_COUNTS if (k[:-1] + "ies" if k.endswith("y") else k + "s") in text}
    assert "pharmacy" in seen and len(seen) >= 4, seen
