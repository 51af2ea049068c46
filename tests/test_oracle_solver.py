"""``--solver oracle``: the exact baselines of the categorical benchmarks (cardinal scenes,
the calculus engine, STARK tier-2 relations), refused up front for numeric families."""
from __future__ import annotations

import json

from stsim.cli import main


def test_oracle_is_exact_on_qstrbench_and_tier2(tmp_path, capsys):
    for suite, n, n_families in (("qstrbench", 1, 27), ("stark-tier2", 2, 5)):
        out = tmp_path / suite
        assert main(["run", suite, "--solver", "oracle", "--n", str(n), "--quiet", "--out", str(out)]) == 0
        families = json.loads((out / "summary.json").read_text())["families"]
        assert len(families) == n_families
        assert {f: r["accuracy"] for f, r in families.items()} == {f: 1.0 for f in families}


def test_oracle_on_numeric_families_is_refused_before_the_run_folder(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "stark-mini", "--solver", "oracle", "--quiet", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "no oracle for stark.localization.range" in err and "--solver baseline" in err
    assert not out.exists()
