"""``stsim audit`` on cardinal-direction questions: the gold against the direction model."""
from __future__ import annotations

import json

from stsim.cli import main
from stsim.records import dumps
from stsim.registry import generate_task
from stsim.scoring.audit import audit_task


def test_generated_cardinal_gold_is_checked_not_skipped():
    for fam in ("cardinal.large", "cardinal.t4_from_agent"):
        for i in range(4):
            (r,) = audit_task(generate_task(fam, i))
            assert r.ok and not r.skipped


def test_a_wrong_cardinal_gold_is_a_finding_exit_1(tmp_path, capsys):
    """It was refused at validation, exit 2, while `stsim audit --help` promises 1 for an
    inconsistent gold: the validator's GoldError is now the audit's [label] finding (and
    `stsim score` still refuses the file, exit 2)."""
    task = generate_task("cardinal.large", 0)          # "cycling north along the east shore": west
    assert task.answer == "west"
    row = task.to_dict()
    row["answer"] = "east"
    bad = tmp_path / "bad.jsonl"
    bad.write_text(dumps(row) + "\n" + dumps(generate_task("cardinal.large", 1).to_dict()) + "\n")
    assert main(["audit", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {task.id}: [label]" in out and "'east' disagrees with the direction model (west)" in out
    assert "audited 2 item(s) of 2 task(s): 1 inconsistent" in out
    assert main(["score", str(bad), str(bad)]) == 2
    assert json.loads(bad.read_text().splitlines()[0])["answer"] == "east"     # the file is kept
