"""`stsim calculus` and `stsim generate qstrbench` from the command line."""
from __future__ import annotations

import json
import re

from stsim.cli import main


def test_calculus_list(capsys):
    assert main(["calculus", "list"]) == 0
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 9 and "INDU" in out and "25 relations" in out


def test_calculus_show_json(capsys):
    assert main(["calculus", "show", "RCC-8", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["converse"]["TPP"] == "TPPi"
    assert data["composition"]["TPP"]["TPP"] == ["TPP", "NTPP"]
    assert data["conceptual_neighbourhood"]["DC"] == ["EC"]


def test_calculus_show_gqr_keeps_what_is_there(tmp_path, capsys):
    """--out onto the same tables leaves the files as they were; onto a folder where a file
    holds other content it is exit 2, naming the file, and nothing is written (it used to
    overwrite the edited table silently)."""
    argv = ["calculus", "show", "rcc8", "--format", "gqr", "--out", str(tmp_path)]
    assert main(argv) == 0
    comp = tmp_path / "rcc8" / "calculus" / "rcc8.comp"
    capsys.readouterr()
    assert main(argv) == 0 and "byte for byte: left as they were" in capsys.readouterr().err
    comp.write_text(comp.read_text() + "x\n")
    (tmp_path / "rcc8.spec").unlink()
    before = comp.read_bytes()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "holds rcc8/calculus/rcc8.comp with other content than these tables" in err and "remove it" in err
    assert comp.read_bytes() == before and not (tmp_path / "rcc8.spec").exists()


def test_calculus_show_gqr_roundtrip(tmp_path, capsys):
    """Our GQR export parses back (with GQR's line grammar) to the same table."""
    from stsim.qstr import get_calculus
    assert main(["calculus", "show", "ia", "--format", "gqr", "--out", str(tmp_path)]) == 0
    cal = get_calculus("ia")
    spec = (tmp_path / "ia.spec").read_text()
    # the spec's table paths resolve inside the folder, as in GQR's data folder
    paths = dict(l.split(None, 1) for l in spec.splitlines() if l.endswith((".comp", ".conv")))
    assert paths == {"comp_table_file": "ia/calculus/ia.comp", "converse_file": "ia/calculus/ia.conv"}
    assert all((tmp_path / v).is_file() for v in paths.values())
    lines = (tmp_path / paths["comp_table_file"]).read_text().splitlines()
    assert len(lines) == 169
    for line in lines:
        m = re.match(r"\s*(\S+)\s*:\s*(\S+)\s*::\s*\((.*)\)", line)
        assert set(m[3].split()) == cal.compose(m[1], m[2])
    assert "identity =" in (tmp_path / "ia.spec").read_text()


def test_calculus_errors(capsys):
    assert main(["calculus", "show", "nosuch"]) == 2
    assert "unknown calculus" in capsys.readouterr().err
    assert main(["calculus", "show"]) == 2
    assert main(["calculus", "show", "rcc8", "extra"]) == 2
    assert "unexpected arguments" in capsys.readouterr().err


def test_rcc22_gqr_export_has_every_entry(capsys):
    assert main(["calculus", "show", "rcc22", "--format", "gqr"]) == 0
    comp = [l for l in capsys.readouterr().out.splitlines() if " :: " in l and l.count(":") == 3]
    assert len(comp) == 22 * 22


def test_generate_qstrbench_n(tmp_path, capsys):
    out = tmp_path / "t.jsonl"
    assert main(["generate", "qstrbench", "--n", "2", "-o", str(out)]) == 0
    rows = [json.loads(l) for l in out.read_text().splitlines()]
    # 2 per family (27 families: converse, CT, CN of nine calculi)
    assert len(rows) == 54


def test_score_model_replies_gives_qstr_breakdown(tmp_path, capsys):
    """`stsim score` on raw replies: exact accuracy per family plus TP/FP/FN and invalid names."""
    tasks = tmp_path / "t.jsonl"
    assert main(["generate", "qstrbench", "--n", "1", "-o", str(tasks)]) == 0
    rows = [json.loads(l) for l in tasks.read_text().splitlines()]
    rcc8_ct = next(r for r in rows if r["family"] == "qstr.rcc8.ct")   # DC ∘ DC: all eight
    pa_conv = next(r for r in rows if r["family"] == "qstr.pa.converse")  # < -> >
    answers = tmp_path / "a.jsonl"
    answers.write_text(
        json.dumps({"task_id": rcc8_ct["id"], "text": "### Answer: DC; EC; PO; TPP; XYZ"}) + "\n"
        + json.dumps({"task_id": pa_conv["id"], "text": "### Answer: >(y,x)"}) + "\n")
    out = tmp_path / "out"
    assert main(["score", str(tasks), str(answers), "--out", str(out)]) == 0
    summ = json.loads((out / "summary.json").read_text())
    assert summ["families"]["qstr.pa.converse"]["accuracy"] == 1.0
    r = summ["qstr"]["RCC-8/ct"]
    assert (r["tp"], r["fp"], r["fn"], r["invalid_names"]) == (4, 0, 4, 1)
    assert summ["qstr"]["PA/converse"]["correct"] == 1
    # the 25 questions without a reply are unanswered, not false negatives
    everything = summ["qstr"]["all/all"]
    assert everything["unanswered"] == 25 and (everything["tp"], everything["fp"], everything["fn"]) == (5, 0, 4)


def test_score_rejects_tampered_qstr_task(tmp_path, capsys):
    tasks = tmp_path / "t.jsonl"
    assert main(["generate", "qstrbench", "--n", "1", "-o", str(tasks)]) == 0
    rows = [json.loads(l) for l in tasks.read_text().splitlines()]
    rows[0]["inputs"]["relations"] = ["NOPE"]
    tasks.write_text("".join(json.dumps(r) + "\n" for r in rows))
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"task_id": rows[0]["id"], "text": "### Answer: <"}) + "\n")
    assert main(["score", str(tasks), str(answers)]) == 2
    assert "unknown relation 'NOPE'" in capsys.readouterr().err
