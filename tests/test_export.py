"""`stsim export`: chat messages equal to what the live-model solver sends to a (loopback) server,
and Parquet / Hugging Face / CSV tables that give back the JSONL tasks byte for byte."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from stsim.cli import main
from tests.fake_openai import FakeChatServer


def _lines(path):
    return path.read_text(encoding="utf-8").splitlines()


def _sent_conversations(requests):
    """Per first user message: the system and user messages of the longest request sent."""
    conv: dict[str, list[dict]] = {}
    for body in requests:
        msgs = [m for m in body["messages"] if m["role"] != "assistant"]
        key = msgs[1]["content"]
        if len(msgs) > len(conv.get(key, [])):
            conv[key] = msgs
    return conv


@pytest.mark.parametrize("mode", ["da", "ci"])
def test_chat_export_is_what_the_live_solver_sends(tmp_path, mode):
    """Run the live-model solver on stark-mini (every STARK family, tracking included) against a
    loopback server, export the same suite as chat messages, and compare message by message."""
    replies = Counter()

    def script(body, n):
        replies[len(body["messages"])] += 1
        return 200, "Reasoning...\n[RESULTS_START] [1.0, 2.0] [RESULTS_END]"
    out, exp = tmp_path / "run", tmp_path / "exp"
    common = ["stark-mini", "--n", "1", "--max-steps", "3"]
    with FakeChatServer(script) as srv:
        assert main(["run", *common, "--solver", "openai:fake", "--base-url", srv.url, "--mode", mode,
                     "--out", str(out), "--quiet", "--workers", "3"]) == 0
        requests = list(srv.requests)
    assert main(["export", *common, "--format", "chat", "--mode", mode, "-o", str(exp)]) == 0
    records = [json.loads(l) for l in _lines(exp / "prompts.jsonl")]
    sent = _sent_conversations(requests)
    assert len(records) == len(sent) == len(_lines(out / "tasks.jsonl")) == 30
    n_tracking = 0
    for rec in records:
        msgs = rec["messages"]
        assert sent[msgs[1]["content"]] == msgs, rec["id"]
        assert msgs[0]["content"] == requests[0]["messages"][0]["content"]
        assert rec["mode"] == mode and rec["max_steps"] == 3 and rec["rubric"] == "stark"
        if rec.get("steps"):
            n_tracking += 1
            assert rec["message_steps"] == [0, 1, 2] and len(msgs) == 4
            assert rec["steps_not_asked"] == [s["index"] for s in rec["steps"][3:]]
            assert msgs[2]["content"] == rec["steps"][1]["prompt"]
        else:
            assert rec["message_steps"] == [None] and len(msgs) == 2
            assert msgs[1]["content"] == rec["prompt"]
        assert ("ci_no_code_turn" in rec) == (mode == "ci")
    assert n_tracking == 7
    # every request sent was a prefix of an exported conversation: nothing else went out
    assert sum(len(r["message_steps"]) for r in records) == len(requests)


def test_prompts_only_is_the_chat_export(tmp_path):
    gen, exp = tmp_path / "p.jsonl", tmp_path / "exp"
    assert main(["generate", "quickstart", "--n", "2", "--prompts-only", "--mode", "ci", "-o", str(gen)]) == 0
    assert main(["export", "quickstart", "--n", "2", "--format", "chat", "--mode", "ci", "-o", str(exp)]) == 0
    assert gen.read_bytes() == (exp / "prompts.jsonl").read_bytes()
    full = [json.loads(l) for l in _lines(gen)]
    assert not any({"answer", "inputs", "meta"} & set(r) for r in full)
    assert all("answer" not in s for r in full for s in r.get("steps", []))


@pytest.mark.parametrize("fmt", ["parquet", "hf", "csv"])
def test_table_exports_round_trip_byte_for_byte(tmp_path, fmt):
    """stark-mini and a QSTRBench suite: the table read back, written as JSONL, is the JSONL of
    `stsim generate` byte for byte (floats, nulls, nested steps and all)."""
    from stsim.benchmarks.export import read_csv
    from stsim.records import dumps
    if fmt in ("parquet", "hf"):
        pytest.importorskip("pyarrow", reason="pyarrow not installed (pip install 'stsim[datasets]')")
    if fmt == "hf":
        datasets = pytest.importorskip("datasets", reason="datasets not installed (pip install 'stsim[datasets]')")
    for suite, n in (("stark-mini", "2"), ("qstr-chains", "1")):
        ref, out = tmp_path / f"{suite}.jsonl", tmp_path / f"{suite}-{fmt}"
        assert main(["generate", suite, "--n", n, "-o", str(ref)]) == 0
        assert main(["export", suite, "--n", n, "--format", fmt, "-o", str(out)]) == 0
        if fmt == "parquet":
            from stsim.benchmarks.export import read_parquet
            tasks = read_parquet(out / "tasks.parquet")
        elif fmt == "csv":
            tasks = read_csv(out / "tasks.csv")
        else:
            from stsim.benchmarks.export import row_task
            ds = datasets.load_from_disk(str(out))
            tasks = [row_task(r) for r in ds]
        back = "".join(dumps(t.to_dict()) + "\n" for t in tasks)
        assert back.encode("utf-8") == ref.read_bytes(), suite
        if fmt != "csv":
            card = (out / "README.md").read_text()
            fams = Counter(json.loads(l)["family"] for l in _lines(ref))
            for fam, k in fams.items():
                assert f"| `{fam}` | {k} |" in card
            assert f"{sum(fams.values())} tasks" in card and "suite seed 0" in card
            assert "license: bsd-3-clause" in card


def test_parquet_schema_is_declared(tmp_path):
    pq = pytest.importorskip("pyarrow.parquet", reason="pyarrow not installed (pip install 'stsim[datasets]')")
    assert main(["export", "quickstart", "--n", "1", "--format", "parquet", "-o", str(tmp_path)]) == 0
    schema = pq.read_schema(tmp_path / "tasks.parquet")
    assert schema.names == ["id", "family", "prompt", "answer_format", "rubric", "inputs", "answer", "steps", "meta"]
    assert str(schema.field("steps").type.value_type) == ("struct<index: int64, prompt: string, "
                                                          "inputs: string, answer: string>")
    table = pq.read_table(tmp_path / "tasks.parquet")
    assert table.num_rows == 14 and not table.schema.field("id").nullable


def test_export_bad_input(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    assert main(["export", "quickstart", "--format", "jsonl", "-o", str(f)]) == 2
    assert "is an existing file" in capsys.readouterr().err
    assert main(["export", "nosuch", "--format", "jsonl", "-o", str(tmp_path / "d")]) == 2
    assert not (tmp_path / "d").exists()
    with pytest.raises(SystemExit) as exc:
        main(["export", "quickstart", "--format", "xml", "-o", str(tmp_path / "d")])
    assert exc.value.code == 2


def test_published_data_round_trips_and_keeps_its_licence(tmp_path, stark_data):
    """STARK's released instances (read with --data) round-trip through Parquet byte for byte, and
    the card says they keep the release's licence instead of calling them generated."""
    pytest.importorskip("pyarrow", reason="pyarrow not installed (pip install 'stsim[datasets]')")
    from stsim.benchmarks.export import read_parquet
    from stsim.records import dumps
    ref, out = tmp_path / "t.jsonl", tmp_path / "pub"
    args = ["stark-published", "--data", str(stark_data), "--n", "1"]
    assert main(["generate", *args, "-o", str(ref)]) == 0
    assert main(["export", *args, "--format", "parquet", "-o", str(out)]) == 0
    back = "".join(dumps(t.to_dict()) + "\n" for t in read_parquet(out / "tasks.parquet"))
    assert back.encode("utf-8") == ref.read_bytes()
    card = (out / "README.md").read_text()
    n = len(ref.read_text().splitlines())
    assert f"{n} task(s) are read from published data the user supplied (`--data`; STARK data_final_v5)" in card
    assert "generated by stsim (BSD-3-Clause) and released" not in card
