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
