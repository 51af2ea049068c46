"""`stsim run geoqa-small --solver openai:MODEL --base-url LOOPBACK --context triples-prose`
against the scripted fake server (tests/fake_openai.py): a known mix of right, wrong, refused
and premise-rejecting replies gives hand-derived EM / NE / Cov / FRR / NRR (seed 003 §4)."""
from __future__ import annotations

import json

from tests.fake_openai import FakeChatServer
from stsim.answers_geo import answer_text
from stsim.benchmarks.suites import get_suite
from stsim.cli import main
from stsim.generators.geoqa_conditions import with_context

FAMILY = "*nearest.amenity"  # every question of the template has sub-template "" (FRR's subset)


def test_live_run_triples_prose(tmp_path):
    tasks = [with_context(t, "triples-prose") for t in get_suite("geoqa-small").tasks(n=4, seed=0, only=FAMILY)]
    assert len(tasks) == 8 and sum(t.inputs.get("premise") == "false" for t in tasks) == 4
    assert {t.inputs["subtemplate"] for t in tasks} == {""}
    by_prompt = {t.prompt: t for t in tasks}
    assert all(t.prompt.startswith("Facts:\nThe ") for t in tasks)

    def reply(task) -> str:
        i = int(task.id.rsplit("/", 1)[1])
        if task.inputs.get("premise") == "false":
            # three rejections (decline, premise, no-such) and one confident answer
            return ["I cannot answer this.", "The premise is false: the city has no such place.",
                    "Answer: there is no such place in this city", "Answer: Cafe 1"][i]
        gold = answer_text(task.answer_format, task.answer)
        # right, wrong, refused, right
        return [f"Reasoning...\nAnswer: {gold}", "Answer: Nowhere Plaza", "I don't know.", f"Answer: {gold}"][i]

    def script(body, n):
        return 200, reply(by_prompt[body["messages"][-1]["content"]])
    out = tmp_path / "run"
    with FakeChatServer(script) as srv:
        assert main(["run", "geoqa-small", "--solver", "openai:fake-model", "--base-url", srv.url,
                     "--context", "triples-prose", "--family", FAMILY, "--n", "4", "--out", str(out), "--quiet"]) == 0
        assert len(srv.requests) == 8
    rep = json.loads((out / "geoqa_report.json").read_text())
    o = rep["overall"]
    # 4 answerable: right, wrong (EM 0, NE 1), refused (EM 0, NE 1), right
    assert (o["n"], o["em"], o["ne"], o["coverage"], o["em_cov"]) == (4, 0.5, 0.5, 0.75, round(2 / 3, 6))
    p = rep["premise"]
    assert (p["n_false"], p["nrr"]) == (4, 0.75)
    assert (p["n_answerable"], p["frr"]) == (4, 0.25)
    written = [json.loads(x) for x in (out / "tasks.jsonl").read_text().splitlines()]
    assert all(t["inputs"]["context"] == "triples-prose" for t in written)
