"""Stratified sampling of the geoqa pools and the suites built on them (seed 003 §3.2, A.3;
docs/geoqa.md, "Sampling")."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from stsim.benchmarks.suites import get_suite
from stsim.geoqa import executor as ex
from stsim.geoqa.context import MAJOR_POPULATION, get_context
from stsim.geoqa.strata import DENSITY_TIERS, INCOME_TIERS, stratum

GRID = {f"{i}/{d}" for i in INCOME_TIERS for d in DENSITY_TIERS}


@pytest.fixture(scope="module")
def templates():
    return ex.load_templates()


def test_every_income_x_density_cell_holds_k_questions(templates):
    """A city template fills all 12 cells of the grid with exactly K questions, the
    low-density tier included (whose subjects are places below the major-city threshold)."""
    p = ex.pool("coordinates.city")
    cells = Counter(stratum(i.binding) for i in p)
    assert set(cells) == GRID and set(cells.values()) == {ex.K_PER_CELL}
    ctx = get_context()
    low = [i.binding["ids"]["a"] for i in p if stratum(i.binding).endswith("/low")]
    pops = [int(ctx.city(e)["population"]) for e in low]
    assert max(pops) < MAJOR_POPULATION <= max(int(ctx.city(i.binding["ids"]["a"])["population"]) for i in p)
    assert len(set(low)) == len(low)  # distinct subjects (GeoNames cities15000 also holds a few
    # administrative seats below 15,000 inhabitants, so no lower bound is asserted)


def test_country_and_sim_templates_are_sampled_in_their_own_cells(templates):
    assert ex.stratum_targets(templates["shape.parts"]) == [(i, "none") for i in INCOME_TIERS]
    from stsim.geoqa.store import N_NETWORKS
    assert ex.stratum_targets(templates["routing.length"]) == [("sim", str(k)) for k in range(N_NETWORKS)]
    parts = Counter(stratum(i.binding) for i in ex.pool("shape.parts"))
    assert set(parts) == {f"{i}/none" for i in INCOME_TIERS} and max(parts.values()) <= ex.K_PER_CELL
    # a simulated city has no income or density: each of them is its own sampling cell
    route = ex.pool("routing.length")
    assert Counter(stratum(i.binding) for i in route) == {"sim/sim": N_NETWORKS * ex.K_PER_CELL}
    assert Counter(ex.sampling_cell(i.binding) for i in route) == {f"sim/{k}": ex.K_PER_CELL for k in range(N_NETWORKS)}


def test_round_robin_prefix_spreads_over_the_strata(templates):
    """The draws go round-robin over the open cells: the first 12 questions of a city template
    whose executions never degenerate are one per cell, in the fixed cell order rotated to the
    template's own first cell."""
    import hashlib
    grid = [f"{i}/{d}" for i in INCOME_TIERS for d in DENSITY_TIERS]
    start = int(hashlib.sha256(b"coordinates.city").hexdigest()[:8], 16) % 12
    first = [stratum(i.binding) for i in ex.pool("coordinates.city")[:12]]
    assert first == grid[start:] + grid[:start]


def test_same_seed_same_bytes(templates):
    """A fresh draw of a pool gives the bytes of the cached one (written by whichever process
    drew it first); another seed gives other questions."""
    t = templates["direction.compass8"]
    cached = ex.pool("direction.compass8")
    fresh = ex._PoolBuilder(t, 0).extend(10 ** 9)
    assert json.dumps([i.__dict__ for i in fresh]) == json.dumps([i.__dict__ for i in cached])
    other = ex._PoolBuilder(t, 1).extend(30)
    assert [i.binding for i in other] != [i.binding for i in cached[:30]]
    a = [x.to_dict() for x in get_suite("geoqa-small").tasks(n=5, seed=3, only="geoqa.direction.compass8")]
    b = [x.to_dict() for x in get_suite("geoqa-small").tasks(n=5, seed=3, only="geoqa.direction.compass8")]
    assert json.dumps(a) == json.dumps(b)


def test_small_tasks_are_the_large_tasks_of_the_same_keys(templates):
    """geoqa-small's questions of a family are the first ones of geoqa's, with the same
    question, paraphrase, gold and stratum (only the suite name in the id differs)."""
    fam = "geoqa.metric.distance"
    small = list(get_suite("geoqa-small").tasks(seed=0, only=fam))
    large = list(get_suite("geoqa").tasks(n=len(small) + 3, seed=0, only=fam))
    assert 0 < len(small) < len(large)
    for s, g in zip(small, large):
        s, g = s.to_dict(), g.to_dict()
        assert s["id"].split("/", 1)[1] == g["id"].split("/", 1)[1]
        s["meta"].pop("suite"), g["meta"].pop("suite")
        for k in ("prompt", "answer", "inputs", "meta"):
            assert s[k] == g[k], k


@pytest.mark.slow
def test_small_is_a_strict_subset_of_large_key_by_key(templates):
    small = set(get_suite("geoqa-small").task_keys())
    large = set(get_suite("geoqa").task_keys())
    assert small < large
    from stsim.benchmarks.geoqa_suites import SMALL_CELL, composition, source_of
    cells = Counter()
    for fam, _ in small:
        if not fam.startswith("geoqa.fp."):
            tid = fam.removeprefix("geoqa.")
            cells[(source_of(tid), templates[tid].sfid)] += 1
    assert max(cells.values()) <= SMALL_CELL
    c = composition("geoqa-small")
    # every income tier and every density tier holds questions; the grid cells all do
    assert all(c["cells"].get(cell, 0) > 0 for cell in GRID)
    assert sum(c["cells"].values()) == c["n"] == len(small)
    assert abs(c["false_premise_share"] - 0.08) < 0.01


def test_entities_strata_command(templates, capsys):
    from stsim.cli import main
    assert main(["entities", "strata", "geoqa-mini", "--family", "geoqa.coordinates.city", "--json"]) == 0
    c = json.loads(capsys.readouterr().out)
    # the first 20 questions of the round-robin: 12 cells once, then 8 of them again
    assert c["n"] == 20 and c["n_false_premise"] == 0 and set(c["cells"]) == GRID
    assert sorted(Counter(c["cells"].values()).items()) == [(1, 4), (2, 8)]
    assert main(["entities", "strata", "geoqa-mini", "--family", "geoqa.coordinates.city"]) == 0
    out = capsys.readouterr().out
    assert "20 questions, 0 with a false premise" in out
    assert main(["entities", "strata", "quickstart"]) == 2
    assert "stsim: error:" in capsys.readouterr().err


def test_entities_strata_languages_agrees_with_generate(templates, capsys):
    """Per-language shares of `entities strata --languages` equal those summed from the tasks
    `generate --language all` writes (a second route through the CLI)."""
    from stsim.cli import main
    from stsim.geoqa.languages import LANGUAGES
    fam = "geoqa.admin.capital"
    assert main(["entities", "strata", "geoqa-mini", "--family", fam, "--languages", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["languages"]
    assert list(got) == list(LANGUAGES)
    assert main(["generate", "geoqa-mini", "--family", fam, "--language", "all"]) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    for lang in LANGUAGES:
        mine = [r for r in rows if r["inputs"].get("language", "en") == lang]
        assert got[lang]["n"] == len(mine) == 20
        if lang != "en":
            done = sum(r["inputs"]["labels"][0] for r in mine)
            total = sum(r["inputs"]["labels"][1] for r in mine)
            assert got[lang]["labels"] == round(done / total, 6)
            assert got[lang]["templates"] == round(sum("language_fallback" not in r["inputs"] for r in mine) / 20, 6)
    # admin.capital names one country, whose CLDR name every language has: all labels translated
    assert all(got[lang]["labels"] == 1.0 for lang in LANGUAGES)
