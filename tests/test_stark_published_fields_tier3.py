"""STARK's released field-prediction folders and tier-3 items, through our loaders and solvers."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from stsim.baselines import BASELINES
from stsim.scoring.score import score_answers, summarise
from stsim.benchmarks.stark_release.fields import load_published_fields
from stsim.benchmarks.stark_release.tier3 import load_published_tier3
from stsim.benchmarks.suites import SuiteError, get_suite
from stsim.cli import main


@pytest.fixture(scope="module")
def field_tasks(stark_data):
    return list(load_published_fields(stark_data))


def test_field_loader_reads_the_four_folders(field_tasks):
    counts = {}
    for t in field_tasks:
        counts[t.family] = counts.get(t.family, 0) + 1
    assert counts == {"stark.field.spatial_impute": 50, "stark.field.temporal_impute": 50,
                      "stark.field.spatiotemporal_impute": 50, "stark.field.spatiotemporal_forecast": 50}


def test_field_inputs_agree_with_the_released_prompt(field_tasks):
    st = next(t for t in field_tasks if t.family == "stark.field.spatiotemporal_impute")
    # every known reading is printed in the released query, with its sensor's lat/lon
    for row in st.inputs["values"]:
        for (lon, lat), v in zip(st.inputs["sites"], row):
            assert re.search(re.escape(f"Lat: {lat}, Long: {lon} has value: {v}") + r"\s", st.prompt)
    # the answer column of the released csv is the gold
    assert st.answer == [7.8, 10.9, 13.6, 12.1]


def test_released_spatial_imputation_is_exact_inverse_distance_weighting(field_tasks):
    # STARK's released spatial prompts state the IDW rule: our IDW reproduces the gold
    sp = [t for t in field_tasks if t.family == "stark.field.spatial_impute"]
    scores = score_answers(sp, [a for t in sp for a in BASELINES[t.family](t)])
    assert max(s.error for s in scores) < 1e-3


def test_published_field_baselines_are_scored_as_rmspe(field_tasks):
    answers = [a for t in field_tasks for a in BASELINES[t.family](t)]
    summary = summarise(score_answers(field_tasks, answers))
    assert all(r["metric"] == "rmspe" and r["failures"] == 0 for r in summary.values())
    # the interpolation baselines sit in the range STARK's code-interpreter runs report (Table 10)
    assert 0.05 < summary["stark.field.temporal_impute"]["trimmed_rmse"] < 0.3
    zero = [t for t in field_tasks if t.meta["error_scale_source"] != "gold"]
    assert zero and all(np.linalg.norm(np.atleast_1d(t.answer)) == 0 for t in zero)


def test_tier3_loader_reads_350_binary_items_without_baseline(stark_data):
    tasks = list(load_published_tier3(stark_data))
    assert len(tasks) == 350
    assert {t.answer for t in tasks} == {0, 1}
    by = {}
    for t in tasks:
        by[t.family] = by.get(t.family, 0) + 1
    assert by["stark.knowledge.poi"] == by["stark.knowledge.intent"] == 100
    assert by["stark.knowledge.route"] == 30
    assert all(BASELINES[t.family](t)[0].status == "no_estimate" for t in tasks[:40])


def test_published_suites_need_data(capsys):
    with pytest.raises(SuiteError, match="--data"):
        list(get_suite("stark-published-fields").tasks())
    assert main(["run", "stark-published-tier3", "--quiet"]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_tier1_published_suite_is_unchanged():
    from stsim.benchmarks.stark_release.tier1 import FOLDERS
    assert len(FOLDERS) == 14 and not any("impute" in k for k in FOLDERS)


def test_cli_runs_fields_and_knowledge_end_to_end(tmp_path, capsys):
    out = tmp_path / "k"
    assert main(["run", "stark-knowledge", "--n", "2", "--out", str(out), "--quiet"]) == 0
    fams = json.loads((out / "summary.json").read_text())["families"]
    assert set(fams) == {"stark.knowledge.direction", "stark.knowledge.proximity", "stark.knowledge.route",
                         "stark.knowledge.eta", "stark.knowledge.route_segment", "stark.knowledge.poi",
                         "stark.knowledge.intent"}
    out = tmp_path / "f"
    assert main(["run", "stark-fields", "--n", "3", "--solver", "baseline:kriging", "--out", str(out), "--quiet"]) == 0
    fams = json.loads((out / "summary.json").read_text())["families"]
    assert all(r["metric"] == "rmspe" and r["failures"] == 0 for r in fams.values())


def test_stark_suite_covers_every_stark_family():
    from stsim.registry import FAMILIES
    suite = get_suite("stark")
    assert set(suite.families) == {f for f in FAMILIES if f.startswith("stark.")}
    assert len(suite.families) >= 14 + 4 + 7
    assert set(get_suite("stark-mini").families) == set(suite.families)
