"""``stsim audit`` on QSTR questions: the gold recomputed from the calculus' tables."""
from __future__ import annotations

import copy
import json

import pytest

from stsim.cli import main
from stsim.records import dumps
from stsim.registry import generate_task
from stsim.scoring.audit import audit_task
from stsim.scoring.audit_qstr import audit_qstr, is_qstr_task


@pytest.mark.parametrize("family", ["qstr.pa.converse", "qstr.pa.ct", "qstr.pa.cn", "qstr.rcc8.ct",
                                    "qstr.ia.cn", "qstr.chain.ia", "qstrx.prefix-nonce.rcc8.ct",
                                    "qstrx.swapped.rcc8.converse"])
def test_generated_qstr_gold_passes(family):
    for i in range(3):
        task = generate_task(family, i)
        assert is_qstr_task(task)
        (r,) = audit_task(task)
        assert r.ok and not r.skipped, r.reason


def test_point_algebra_by_hand():
    """PA (QSTRBench §4): converse of < is >, < composed with < is {<}, < composed with > is
    every relation, the neighbours of < are {=}; a gold that says otherwise fails."""
    conv = generate_task("qstr.pa.converse", 0)               # converse of '<'
    assert conv.inputs["relations"] == ["<"] and audit_qstr(conv) == (True, "")
    bad = copy.deepcopy(conv)
    bad.answer = "<"
    ok, why = audit_qstr(bad)
    assert not ok and why.startswith("[label]") and "'>'" in why
    for i in range(9):                                         # the 9 compositions of PA
        ct = generate_task("qstr.pa.ct", i)
        if ct.inputs["relations"] == ["<", ">"]:
            assert sorted(ct.answer) == ["<", "=", ">"] and audit_qstr(ct)[0]
            short = copy.deepcopy(ct)
            short.answer = ["<", ">"]
            assert not audit_qstr(short)[0]
            break
    else:
        pytest.fail("no < then > question among PA's compositions")
    cn = generate_task("qstr.pa.cn", 0)
    assert cn.answer == ["="] and audit_qstr(cn)[0]


def test_audit_cli_exit_1_on_a_wrong_qstr_gold(tmp_path, capsys):
    tasks = [generate_task("qstr.rcc8.ct", i) for i in range(3)] + [generate_task("qstr.chain.pa", 0)]
    good = tmp_path / "good.jsonl"
    good.write_text("".join(dumps(t.to_dict()) + "\n" for t in tasks))
    assert main(["audit", str(good)]) == 0
    assert "4 item(s) of 4 task(s): 0 inconsistent" in capsys.readouterr().out
    rows = [json.loads(line) for line in good.read_text().splitlines()]
    rows[1]["answer"] = rows[1]["answer"][:-1]                # a composition missing one relation
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["audit", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {rows[1]['id']}: [label]" in out and "composition table" in out
    assert "1 inconsistent" in out and "skipped" not in out
