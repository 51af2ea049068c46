"""`stsim run --out/--resume` and the evaluation conditions: ``--context``, ``--language`` and
``--structured`` are recorded in run.json and summary.json, and a folder holding a run made
under another condition is refused (exit 2, ``stsim: error: ...``) with every file it holds
left as it was."""
from __future__ import annotations

import json

import pytest

from stsim.cli import main
from tests.fake_openai import FakeChatServer

FAMILY = "geoqa.coordinates.city"
BASE = ["run", "geoqa-mini", "--family", FAMILY, "--n", "2", "--quiet"]


def _snapshot(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def prose_run(tmp_path_factory):
    """A finished baseline run under --context triples-prose --language de."""
    out = tmp_path_factory.mktemp("cond") / "run"
    import contextlib
    import io
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(BASE + ["--context", "triples-prose", "--language", "de", "--out", str(out)]) == 0
    # the printed head line names the condition
    assert "solver baseline  seed 0  context triples-prose  language de  tasks 2" in buf.getvalue()
    return out


def test_conditions_are_recorded(prose_run):
    rec = json.loads((prose_run / "run.json").read_text())
    summ = json.loads((prose_run / "summary.json").read_text())
    for d in (rec, summ):
        assert (d["context"], d["language"], d["structured"]) == ("triples-prose", "de", False)
    tasks = [json.loads(x) for x in (prose_run / "tasks.jsonl").read_text().splitlines()]
    assert len(tasks) == 2 and all(t["inputs"]["context"] == "triples-prose" for t in tasks)


@pytest.mark.parametrize("extra,said", [
    (["--language", "de"], "--context: 'triples-prose' there, 'none' now"),
    (["--context", "triples-prose"], "--language: 'de' there, 'en' now"),
    (["--context", "triples-json", "--language", "de"], "--context: 'triples-prose' there, 'triples-json' now"),
])
def test_out_refuses_another_condition(prose_run, capsys, extra, said):
    before = _snapshot(prose_run)
    capsys.readouterr()
    assert main(BASE + extra + ["--out", str(prose_run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stsim: error: --out") and said in err
    assert _snapshot(prose_run) == before


def test_out_of_an_interrupted_run_is_checked_by_its_run_json(prose_run, tmp_path, capsys):
    """Without summary.json (a run killed before its end) run.json names the condition."""
    cut = tmp_path / "cut"
    cut.mkdir()
    for name in ("run.json", "tasks.jsonl"):
        (cut / name).write_bytes((prose_run / name).read_bytes())
    before = _snapshot(cut)
    assert main(BASE + ["--language", "de", "--out", str(cut)]) == 2
    assert "--context: 'triples-prose' there, 'none' now" in capsys.readouterr().err
    assert _snapshot(cut) == before


@pytest.mark.parametrize("extra,said", [
    (["--context", "triples-raw"], "--context: 'triples-prose' there, 'triples-raw' now"),
    (["--language", "es"], "--language: 'de' there, 'es' now"),
])
def test_resume_refuses_another_condition(prose_run, capsys, extra, said):
    before = _snapshot(prose_run)
    capsys.readouterr()
    assert main(["run", "geoqa-mini", "--quiet", "--resume", str(prose_run)] + extra) == 2
    err = capsys.readouterr().err
    assert err.startswith("stsim: error: --resume") and said in err and "nothing was changed" in err
    assert _snapshot(prose_run) == before


def test_resume_takes_the_recorded_condition(prose_run, capsys):
    """--resume without --context / --language continues under the recorded ones (the tasks
    it regenerates must equal the written ones byte for byte, so a wrong condition would fail)."""
    tasks = (prose_run / "tasks.jsonl").read_bytes()
    assert main(["run", "geoqa-mini", "--quiet", "--resume", str(prose_run)]) == 0
    assert (prose_run / "tasks.jsonl").read_bytes() == tasks
    summ = json.loads((prose_run / "summary.json").read_text())
    assert (summ["context"], summ["language"]) == ("triples-prose", "de")


def test_structured_output_is_part_of_the_run(tmp_path, capsys):
    out = tmp_path / "live"
    with FakeChatServer(lambda body, n: (200, "Answer: 0, 0")) as srv:
        cmd = ["run", "geoqa-mini", "--family", FAMILY, "--n", "1", "--quiet", "--solver", "openai:fake-model",
               "--base-url", srv.url]
        assert main(cmd + ["--out", str(out)]) == 0
        assert json.loads((out / "run.json").read_text())["structured"] is False
        before = _snapshot(out)
        capsys.readouterr()
        assert main(cmd + ["--structured", "--out", str(out)]) == 2
        assert "--structured: False there, True now" in capsys.readouterr().err
        assert main(cmd + ["--structured", "--resume", str(out)]) == 2
        assert "--structured: False there, True now" in capsys.readouterr().err
        assert _snapshot(out) == before
        assert len(srv.requests) == 1  # the refused runs asked nothing


def test_run_json_without_conditions_counts_as_the_defaults(tmp_path, capsys):
    """A folder written before the conditions were recorded resumes under the defaults and
    refuses another condition."""
    out = tmp_path / "old"
    assert main(BASE + ["--out", str(out)]) == 0
    rec = json.loads((out / "run.json").read_text())
    for k in ("context", "language", "structured"):
        del rec[k]
    (out / "run.json").write_text(json.dumps(rec))
    assert main(["run", "geoqa-mini", "--quiet", "--resume", str(out)]) == 0
    assert main(["run", "geoqa-mini", "--quiet", "--resume", str(out), "--context", "triples-json"]) == 2
    assert "--context: 'none' there, 'triples-json' now" in capsys.readouterr().err
