"""The documentation site builds with `mkdocs build --strict` (any warning fails: a broken
link, a missing page, a docstring mkdocstrings cannot render), its home page is README.md and
its task catalogue lists every registered family."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_mkdocs_build_strict(tmp_path):
    for mod in ("mkdocs", "material", "mkdocstrings"):
        pytest.importorskip(mod, reason=f"{mod} not installed (pip install 'stsim[docs]')")
    if not (ROOT / "mkdocs.yml").exists():
        pytest.skip("mkdocs.yml not found next to the tests (installed package, not a checkout)")
    site = tmp_path / "site"
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    res = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                          "-d", str(site)], cwd=ROOT, capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    from stsim.registry import load_families
    catalogue = (site / "catalogue" / "index.html").read_text(encoding="utf-8")
    missing = [f for f in load_families() if f"<code>{f}</code>" not in catalogue]
    assert not missing, missing[:5]
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "Quick start" in home and 'src="img/show-stark.tracking.range.png"' in home
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="stsim.generators.chat_prompts.chat_plan"' in api and 'id="stsim.records.Task"' in api


def _settings_table() -> dict:
    """The refit's settings table of docs/stark-tier1.md: ``{family: {column: cell}}``."""
    text = (ROOT / "docs" / "stark-tier1.md").read_text(encoding="utf-8")
    lines = text[text.index("**The settings now**"):].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| family |"))
    head = [c.strip() for c in lines[start].strip("|").split("|")]
    rows = {}
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0]] = dict(zip(head, cells))
    return rows


def test_the_docs_modes_held_are_the_refit_settings_keep():
    """The refit's paragraph says how many modes are held at most ("at most K (bearing B)"):
    ``keep`` of every refit family but bearing is K, bearing's is B."""
    import re

    from stsim.baselines.trajectory_refit import refit_settings
    text = " ".join((ROOT / "docs" / "stark-tier1.md").read_text(encoding="utf-8").split())
    said = re.search(r"at most (\d+) \(bearing (\d+)\) are held", text)
    assert said, "the refit's paragraph no longer says how many modes are held"
    keep = {f: refit_settings(f, m)["keep"] for f, m in [
        ("stark.tracking.range", "range"), ("stark.tracking.range_bearing", "range_bearing"),
        ("stark.tracking.event", "toa"), ("stark.temporal_tracking.event", "toa"), ("stark.tracking.event_xyt", "toa")]}
    assert set(keep.values()) == {int(said.group(1))}, keep
    assert refit_settings("stark.tracking.bearing", "bearing")["keep"] == int(said.group(2))


def test_the_docs_lm_iterations_of_a_search_are_the_refit_settings():
    """The text under the settings table gives a search's LM iterations: per pool draw
    (``iters_pool``) and for the starts with the held modes (``iters_init``), the common value
    and range+bearing's own."""
    import re

    from stsim.baselines.trajectory_refit import refit_settings
    text = " ".join((ROOT / "docs" / "stark-tier1.md").read_text(encoding="utf-8").split())
    said = re.search(r"The searches' LM iterations: (\d+) per pool draw \(range\+bearing and temporal (\d+)\), "
                     r"(\d+) for the starts with the held modes \(range\+bearing (\d+)", text)
    assert said, "the text no longer gives a search's LM iterations"
    pool, pool_rb, init, init_rb = map(int, said.groups())
    rb = refit_settings("stark.tracking.range_bearing", "range_bearing")
    assert (rb["iters_pool"], rb["iters_init"]) == (pool_rb, init_rb)
    assert refit_settings("stark.temporal_tracking.event", "toa")["iters_pool"] == pool_rb
    for fam, m in [("stark.tracking.range", "range"), ("stark.tracking.bearing", "bearing"),
                   ("stark.tracking.event", "toa"), ("stark.temporal_tracking.event", "toa"),
                   ("stark.tracking.event_xyt", "toa")]:
        s = refit_settings(fam, m)
        assert s["iters_init"] == init, fam
        assert fam == "stark.temporal_tracking.event" or s["iters_pool"] == pool, fam


def test_the_docs_refit_settings_table_says_what_refit_settings_hold():
    """docs/stark-tier1.md repeats the refit's settings (``REFIT_SETTINGS``) in a table for
    readers; its numbers must be the code's: the first step answered, the scheduled searches,
    the searches in all (and from ``late_search``'s step), the pool (draws per structure ->
    kept -> starts, ``all`` for no cut; ``by_readings``), the LM iterations per refinement, the
    first centred step, whether the smoother answers the later steps no mode holds and the pool's
    LM iterations in a search while none is held (``lost_iters``) and the library such a search
    takes its pool from (``lost_library``; from both libraries: ``lost_union``), for each of the
    six refit families."""
    from stsim.baselines.stark_tier1 import _default_smoother
    from stsim.baselines.trajectory_refit import refit_settings
    from stsim.registry import generate_task
    families = {"range": ("stark.tracking.range", "range"), "bearing": ("stark.tracking.bearing", "bearing"),
                "range+bearing": ("stark.tracking.range_bearing", "range_bearing"),
                "event": ("stark.tracking.event", "toa"), "temporal event": ("stark.temporal_tracking.event", "toa"),
                "x-y-t event": ("stark.tracking.event_xyt", "toa")}
    rows = _settings_table()
    assert set(rows) == set(families)
    for name, (family, modality) in families.items():
        s, row = refit_settings(family, modality), rows[name]
        assert row["refit answers from step"].split()[0] == str(max(s.get("start", 0), s.get("answer_from", 0))), name
        assert row["searches at"] == ", ".join(map(str, s["search_steps"])), name
        in_all = str(s["max_searches"])
        if s.get("late_search"):
            in_all += f"; {s['max_searches'] + s['late_search'][1]} from step {s['late_search'][0]}"
        assert row["in all"] == in_all, name
        pool = row["pool per search: draws per structure nearest the path -> kept by their residuals -> starts"]
        keep = "all" if s.get("pool_keep") is None else str(s["pool_keep"])
        assert pool.split(";")[0] == f"{s['pool_per_structure']} -> {keep} -> {s['n_starts']}", name
        if s.get("late_search"):
            first, _, pps, kept, starts = s["late_search"]
            assert f"from step {first}: {pps} -> {kept} -> {starts}" in pool, name
        if s.get("wide_search"):
            last, pps, kept, starts = s["wide_search"]
            assert f"to step {last}: {pps} -> {kept} -> {starts}" in pool, name
        if s.get("by_readings"):
            last, scan, add = s["by_readings"]
            assert f"to step {last} the pool also takes {add} draw" in pool and f"among its first {scan}" in pool, name
        else:
            assert "by_readings" not in pool, name
        assert row["LM iterations per refinement"] == str(s["iters"]), name
        lost = row["lost modes"].lower()
        if s.get("lost_iters"):
            first, iters = s["lost_iters"]
            said = f"from step {first} a search made while no mode is held gives its pool {iters} lm iterations"
            assert said in lost, name
        else:
            assert "lost_iters" not in lost, name
        if s.get("lost_library"):
            first, size = s["lost_library"]
            assert (f"from step {first} such a search takes its pool from {size} prior draws per structure instead of "
                    f"{s['per_structure']}") in lost, name
        else:
            assert "lost_library" not in lost, name
        if s.get("lost_union"):
            assert f"the {s['lost_union']} nearest draws of each structure from both libraries (`lost_union`" in lost, name
        else:
            assert "lost_union" not in lost, name
        smooth = _default_smoother(generate_task(family, 0, suite="stark-tier1", suite_seed=11))
        late = smooth is not None and smooth.get("late", True)
        assert ("later steps no mode holds" in row["smoother answers steps"]) == late, name
        assert row["centred from step"] == str(s["centre_from"]), name
