"""docs/adding-a-family.md, 'Families from your own package', followed literally: the doc's
Python block is installed as a separate package with a `stsim.families` entry point (a
dist-info on sys.path, as `pip install -e .` leaves it) and the commands the doc names work."""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from stsim import registry
from stsim.baselines import BASELINES
from stsim.benchmarks import suites
from stsim.cli import main
from stsim.records import read_tasks

DOC = Path(__file__).resolve().parents[1] / "docs" / "adding-a-family.md"


def _doc_blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    toml = _doc_blocks("toml")
    code = _doc_blocks("python")
    assert toml and code, "docs/adding-a-family.md shows the entry point and a complete module"
    entry = re.search(r'^(\w+)\s*=\s*"([\w.]+)"', toml[0], flags=re.M)
    name, module = entry.group(1), entry.group(2)
    site = tmp_path / "site"
    pkg = site / module.split(".")[0]
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (site / (module.replace(".", "/") + ".py")).write_text(code[-1])
    dist = site / "my_package-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-package\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[stsim.families]\n{name} = {module}\n")
    monkeypatch.syspath_prepend(str(site))
    before = (set(registry.FAMILIES), set(suites.SUITES), set(dict.keys(BASELINES)), set(registry._LOADED))
    yield
    for key in set(registry.FAMILIES) - before[0]:
        del registry.FAMILIES[key]
    for key in set(suites.SUITES) - before[1]:
        del suites.SUITES[key]
    for key in set(dict.keys(BASELINES)) - before[2]:
        dict.__delitem__(BASELINES, key)
    registry._LOADED.intersection_update(before[3])
    for mod in [m for m in sys.modules if m == module.split(".")[0] or m.startswith(module.split(".")[0] + ".")]:
        del sys.modules[mod]


def test_doc_plugin_family_lists_generates_runs_and_scores(plugin, tmp_path, capsys):
    assert main(["list", "--families", "my.*"]) == 0
    assert "my.line.distance" in capsys.readouterr().out
    tasks = tmp_path / "tasks.jsonl"
    assert main(["generate", "my-suite", "--n", "3", "-o", str(tasks)]) == 0
    ts = read_tasks(tasks)
    assert [t.family for t in ts] == ["my.line.distance"] * 3
    for t in ts:  # the gold is |a - b| of the printed numbers
        assert t.answer == abs(t.inputs["a"] - t.inputs["b"])
        assert f"x = {t.inputs['a']} m" in t.prompt
    out = tmp_path / "run"
    assert main(["run", "my-suite", "--n", "3", "--out", str(out), "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["families"]["my.line.distance"]["n"] == 3
    assert summary["families"]["my.line.distance"]["rmse"] == 0.0
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"task_id": t.id, "text": f"[RESULTS_START] {t.answer + 1} [RESULTS_END]"})
                               + "\n" for t in ts))
    assert main(["score", str(tasks), str(answers), "--out", str(tmp_path / "sc")]) == 0
    scored = json.loads((tmp_path / "sc" / "summary.json").read_text())["families"]["my.line.distance"]
    assert scored["n"] == 3 and scored["rmse"] == pytest.approx(1.0)


def test_entry_points_read_once_per_sys_path(monkeypatch, tmp_path):
    """``load_families`` runs once per family of a suite (651 times for ``stsim list``); the
    entry points are read once, and again only when ``sys.path`` changes (a plugin's folder
    prepended, as the fixture above does)."""
    calls = []
    real = registry.entry_points

    def counting(**kw):
        calls.append(kw)
        return real(**kw)
    monkeypatch.setattr(registry, "entry_points", counting)
    monkeypatch.setattr(registry, "_ENTRY_POINTS", {})
    for _ in range(50):
        registry.load_families()
    assert len(calls) == 1
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.load_families()
    assert len(calls) == 2
