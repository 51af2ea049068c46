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


def test_live_run_structured_output(tmp_path):
    """--structured sends each task's JSON Schema as response_format (the false-premise tasks get
    their template's own answer type); JSON replies -- right, wrong, abstain with a note, and
    for false premises three rejecting notes and one answer -- give the same hand-derived
    EM / NE / Cov / FRR / NRR as the free-text mix."""
    import jsonschema
    from stsim.geoqa.schema import json_value
    tasks = list(get_suite("geoqa-small").tasks(n=4, seed=0, only=FAMILY))
    by_prompt = {t.prompt: t for t in tasks}
    schemas = {json.dumps(t.meta["answer_schema"], sort_keys=True) for t in tasks}
    assert len(schemas) == 1  # true and false premise: one schema (a string name)

    def reply(task) -> str:
        i = int(task.id.rsplit("/", 1)[1])
        if task.inputs.get("premise") == "false":
            obj = [{"answer": None, "note": "I cannot answer this."},
                   {"answer": None, "note": "The premise is false: the city has no such place."},
                   {"answer": None, "note": "That kind of place does not exist there."},
                   {"answer": "Cafe 1", "note": ""}][i]
        else:
            gold = json_value(task.answer_format, task.answer)
            obj = [{"answer": gold, "note": ""}, {"answer": "Nowhere Plaza", "note": ""},
                   {"answer": None, "note": "I don't know."}, {"answer": gold, "note": "sure"}][i]
        jsonschema.validate(obj, task.meta["answer_schema"])
        return json.dumps(obj, ensure_ascii=False)

    def script(body, n):
        rf = body["response_format"]
        assert rf["type"] == "json_schema" and rf["json_schema"]["strict"] is True
        task = by_prompt[body["messages"][-1]["content"]]
        assert rf["json_schema"]["schema"] == task.meta["answer_schema"]
        return 200, reply(task)
    out = tmp_path / "run"
    with FakeChatServer(script) as srv:
        assert main(["run", "geoqa-small", "--solver", "openai:fake-model", "--base-url", srv.url, "--structured",
                     "--family", FAMILY, "--n", "4", "--out", str(out), "--quiet"]) == 0
        assert len(srv.requests) == 8
    rep = json.loads((out / "geoqa_report.json").read_text())
    o, p = rep["overall"], rep["premise"]
    assert (o["n"], o["em"], o["ne"], o["coverage"]) == (4, 0.5, 0.5, 0.75)
    assert (p["nrr"], p["frr"]) == (0.75, 0.25)


def test_schemas_accept_every_gold():
    """For the first questions of every template: the gold as JSON validates against the task's
    schema and the rubric reads it back to EM 1."""
    import jsonschema
    from stsim.answers import parse_answer
    from stsim.geoqa.schema import json_value
    from stsim.scoring.score import score_answers
    for t in get_suite("geoqa-mini").tasks(n=1, seed=0):
        obj = {"answer": json_value(t.answer_format, t.answer), "note": ""}
        jsonschema.validate(obj, t.meta["answer_schema"])
        a = parse_answer(json.dumps(obj), task_id=t.id, step=None, answer_format=t.answer_format,
                         rubric="geoqa", spec=t.meta.get("answer_spec"))
        (s,) = score_answers([t], [a])
        assert s.status == "ok" and s.correct == 1, (t.family, obj, a.detail)
