"""The geoqa agentic tier (issue 17, item 5): the tool API ``geotools`` against the executor's
gold on real store rows (with geographiclib as a second geodesic), the read-only store mount in
the sandbox, and `stsim run geoqa-small --solver openai:MODEL --mode agentic` against the
scripted loopback server with a known mix of replies (tools then right, budget exhausted,
refused, wrong; and for false premises tools then rejected, budget exhausted, refused,
answered), whose EM / NE / Cov / FRR / NRR and token / tool-call / exhaustion counts are derived
by hand below."""
from __future__ import annotations

import hashlib
import json

import pytest

from stsim.cli import main
from tests.fake_openai import FakeChatServer

FAMILY = "*nearest.amenity"  # 4 answerable + 4 false-premise questions, all of sub-template ""


@pytest.fixture(scope="module")
def gt():
    """geotools loaded on the host from the exported tool table (the file the sandbox mounts)."""
    from stsim.sandbox import geotools
    from stsim.solvers.agentic import tool_folder
    folder = tool_folder()
    geotools.load(folder / "entities.json")
    return geotools


def _pool(tid, n):
    from stsim.geoqa.executor import load_templates, pool
    load_templates()
    return pool(tid, 0)[:n]


def test_geotools_imports_nothing_of_stsim():
    """geotools runs where stsim is invisible: only the standard library, numpy and pyproj."""
    import ast
    from stsim.sandbox import geotools
    tree = ast.parse(open(geotools.__file__, encoding="utf-8").read())
    tops = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    tops |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not any(isinstance(n, ast.ImportFrom) and n.level for n in ast.walk(tree))
    assert tops <= {"json", "math", "os", "re", "unicodedata", "numpy", "pyproj"}, tops


def test_fold_is_the_stores(gt):
    from stsim.geoqa.store import fold
    for name in ("Zürich", "St. Louis", "São Paulo", "Ḩalab", "N'Djamena", "Kraków (Lesser Poland)"):
        assert gt.fold(name) == fold(name)


def test_distance_matches_executor_and_geographiclib(gt):
    """metric.distance: geotools.distance_km on the recorded ids equals the executor's gold (in km,
    miles converted) within 1e-6 km, and geographiclib's Karney geodesic within 1e-6 km."""
    from geographiclib.geodesic import Geodesic
    checked = 0
    for inst in _pool("metric.distance", 25):
        a, b = inst.binding["ids"]["a"], inst.binding["ids"]["b"]
        d = gt.distance_km(a, b)
        gold_km = inst.gold * (1.609344 if inst.binding["params"]["unit"] == "miles" else 1.0)
        assert d == pytest.approx(gold_km, abs=1e-6)
        ea, eb = gt.entity(a), gt.entity(b)
        ref = Geodesic.WGS84.Inverse(ea["lat"], ea["lon"], eb["lat"], eb["lon"])["s12"] / 1000.0
        assert d == pytest.approx(ref, abs=1e-6)
        checked += 1
    assert checked == 25


def test_near_matches_executor_nearest_and_counts(gt):
    """nearest.city / nearest.knn / aggregation.count_within / nearest.amenity: the executor's
    gold equals what near() gives on the same store rows."""
    for inst in _pool("nearest.city", 15):
        a = gt.entity(inst.binding["ids"]["a"])
        got = [e for e in gt.near(a["lon"], a["lat"], 2000, limit=3) if e["id"] != a["id"]][0]
        assert got["id"] == [t[0] for t in inst.triples if t[1] == "geo:asWKT"][1]  # (a, winner, runner-up)
    for inst in _pool("nearest.knn", 10):
        a = gt.entity(inst.binding["ids"]["a"])
        k = inst.binding["params"]["k"]
        got = [e["id"] for e in gt.near(a["lon"], a["lat"], 5000, limit=k + 1) if e["id"] != a["id"]][:k]
        assert got == [t[0] for t in inst.triples if t[1] == "geo:asWKT"][1:k + 1]
    for inst in _pool("aggregation.count_within", 20):
        a = gt.entity(inst.binding["ids"]["a"])
        r = inst.binding["params"]["r"]
        assert len([e for e in gt.near(a["lon"], a["lat"], r, limit=10 ** 6) if e["id"] != a["id"]]) == inst.gold
    for inst in _pool("nearest.amenity", 10):
        p = gt.entity(inst.binding["ids"]["place"])
        kind = inst.binding["params"]["kind"]
        (got,) = gt.near(p["lon"], p["lat"], 50, category=f"amenity:{kind}", limit=1)
        assert got["aliases"] == [inst.gold]


def test_lookup_entity_geometry_against_store_rows(gt):
    """lookup() of a question's display name finds the bound entity; entity() and geometry() carry
    the store row's values (population, admin-1, country, WKT)."""
    from shapely import wkt
    from stsim.geoqa.store import load_store
    store = load_store()
    n = 0
    for inst in _pool("admin.country", 20):
        eid = inst.binding["ids"]["a"]
        e = gt.entity(eid)
        assert e["country_name"] == inst.gold or inst.gold in inst.spec.get("aliases", {})
        row = store.row(eid)
        assert (e["population"], e["admin1"], e["country"]) == (int(row["population"]), row["admin1_name"], row["iso3"])
        assert wkt.loads(gt.geometry(eid)).equals(row.geometry)
        n += 1
    for inst in _pool("metric.distance", 20):
        display = inst.values["a"]  # "Name, Country" or "Name (Admin-1), Country"
        hits = gt.lookup(display)
        assert hits and hits[0]["id"] == inst.binding["ids"]["a"], (display, hits[:2])
        n += 1
    fra = gt.geometry("ne:FRA")
    assert wkt.loads(fra).equals(store.row("ne:FRA").geometry)
    assert n == 40
    with pytest.raises(KeyError, match="no entity 'gn:nope'"):
        gt.entity("gn:nope")
    with pytest.raises(ValueError, match="is a country"):
        gt.distance_km("ne:FRA", "gn:2988507")
    assert gt.lookup("Qwertyuiop") == []


def _bwrap_or_skip():
    from stsim.sandbox.isolation import bwrap_status
    ok, why = bwrap_status()
    if not ok:
        pytest.skip(f"no namespace sandbox can run here: {why}")


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["bwrap", "process"])
def test_store_mount_is_read_only(isolation):
    """Model code in the agentic sandbox reads the store but cannot change it: writing, appending,
    truncating, deleting and creating files in the tool folder fail (bubblewrap: a read-only bind
    mount; process mode: Landlock and the guard, which also marks the run ``forbidden``); the
    host file is unchanged."""
    if isolation == "bwrap":
        _bwrap_or_skip()
    from stsim.solvers.agentic import agentic_sandbox, cell_program, tool_folder
    table = tool_folder() / "entities.json"
    before = hashlib.sha256(table.read_bytes()).hexdigest()
    # the process mode's guard allows no `import os`: there only open() is tried
    opens = ["open(p, 'w')", "open(p, 'ab')", "open(p, 'r+')", "open(d + '/new.txt', 'w')",
             "open(d + '/geotools.py', 'a')"]
    others = ["os.truncate(p, 0)", "os.remove(p)", "os.chmod(p, 0o777)"] if isolation == "bwrap" else []
    code = (
        ("import os\n" if others else "")
        + "import geotools\n"
        "d = geotools.__file__.rsplit('/', 1)[0]\n"
        "p = d + '/entities.json'\n"
        + "".join(f"try:\n    {op}\n    print('WROTE')\nexcept OSError as exc:\n    print('refused')\n"
                  for op in opens + others)
        + "print(len(geotools.lookup('Lyon')) > 0)\n")
    n_attempts = len(opens) + len(others)
    with agentic_sandbox(isolation) as sb:
        res = sb.run(cell_program(code))
    lines = res.stdout.split()
    assert "WROTE" not in lines and lines.count("refused") == n_attempts and lines[-1] == "True", (res.stdout, res.stderr)
    if isolation == "bwrap":
        assert res.status == "ok" and res.value == [1, 0]  # one tool call, no exception
    else:
        assert res.status == "forbidden" and "writing" in res.detail, res.detail
    assert hashlib.sha256(table.read_bytes()).hexdigest() == before


# ----------------------------------------------------------------------------- the scripted run
TOOL_CODE = """```python
import geotools
p = geotools.lookup({name!r})[0]
hits = geotools.near(p["lon"], p["lat"], 20, category="amenity:" + {kind!r}, limit=1)
print(hits[0]["name"] if hits else "none")
```"""
LOOP_CODE = """Let me look first.
```python
import geotools
print(len(geotools.lookup("Lyon")))
```"""


@pytest.mark.slow
def test_agentic_run_mix(tmp_path, capsys):
    """8 questions (4 answerable, 4 false-premise), step budget 3:

    answerable: 0 tools then right (2 replies, 1 code run, 2 tool calls); 1 code every reply
    (3 replies, 3 runs, 3 tool calls, budget_exhausted); 2 refused (1 reply); 3 wrong (1 reply);
    false premise: 0 tools (near() finds no such kind) then rejects (2 replies, 1 run, 2 calls);
    1 budget exhausted (3, 3, 3); 2 refused -> rejection (1); 3 answers a name (1).

    EM / NE / Cov over the 4 answerable: EM 1/4, NE (0+1+1+1)/4 = 0.75, Cov 2/4 (right and wrong
    are answers; refusal and exhaustion are not), EM_cov 0.5.  Budget exhaustion is no refusal:
    FRR = 1 refusal / 3 answerable not exhausted = 1/3 (it would be 2/4 if it counted), NRR =
    2 rejections / 3 false premises not exhausted = 2/3.  Usage: 14 model calls, 8 code runs,
    10 tool calls, 2 budget exhaustions, prompt tokens 14 x 11 (the fake server's usage), and
    the completion tokens the server reported (word counts of its replies).
    """
    _bwrap_or_skip()
    from stsim.benchmarks.suites import get_suite
    tasks = list(get_suite("geoqa-small").tasks(n=4, seed=0, only=FAMILY))
    assert len(tasks) == 8 and sum(t.inputs.get("premise") == "false" for t in tasks) == 4
    by_prompt = {t.prompt: t for t in tasks}
    sent: list[str] = []

    def reply(task, k: int, last: str) -> str:
        i = int(task.id.rsplit("/", 1)[1])
        fp = task.inputs.get("premise") == "false"
        name, kind = task.inputs["entities"]["place"]["name"], task.inputs["binding"]["params"]["kind"]
        if i == 0:
            if k == 0:
                return TOOL_CODE.format(name=name, kind=kind)
            printed = last.split("Output:\n", 1)[1].split("\n", 1)[0]
            if fp:
                assert printed == "none"
                return f"The tool found no {kind} there.\nAnswer: there is no such place in this city"
            return f"The tool says {printed}.\nAnswer: {printed}"
        if i == 1:
            return LOOP_CODE
        if i == 2:
            return "I cannot answer this."
        return "Answer: Nowhere Plaza" if not fp else "Answer: Cafe 1"

    def script(body, n):
        msgs = body["messages"]
        task = by_prompt[msgs[1]["content"]]
        k = sum(m["role"] == "assistant" for m in msgs)
        assert len(msgs) == 2 + 2 * k and ("geotools.near(lon, lat, km" in msgs[0]["content"])
        text = reply(task, k, msgs[-1]["content"])
        sent.append(text)
        return 200, text

    out = tmp_path / "run"
    with FakeChatServer(script) as srv:
        assert main(["run", "geoqa-small", "--solver", "openai:fake-model", "--base-url", srv.url, "--mode", "agentic",
                     "--step-budget", "3", "--family", FAMILY, "--n", "4", "--out", str(out), "--quiet"]) == 0
        assert len(srv.requests) == 14
        # the exhausted conversation saw the last-reply warning before its third reply
        third = [r for r in srv.requests if sum(m["role"] == "assistant" for m in r["messages"]) == 2]
        assert third and all("This is your last reply" in r["messages"][-1]["content"] for r in third)
    # what `generate --prompts-only --mode agentic` writes is exactly what the solver sent first
    gen = tmp_path / "prompts.jsonl"
    assert main(["generate", "geoqa-small", "--family", FAMILY, "--n", "4", "--prompts-only", "--mode", "agentic",
                 "--step-budget", "3", "-o", str(gen)]) == 0
    firsts = {json.dumps(r["messages"][:2], sort_keys=True) for r in srv.requests if len(r["messages"]) == 2}
    records = [json.loads(x) for x in gen.read_text().splitlines()]
    assert len(records) == 8 and {json.dumps(r["messages"], sort_keys=True) for r in records} == firsts
    assert {r["step_budget"] for r in records} == {3} and "at most 3 replies" in records[0]["messages"][0]["content"]
    printed = capsys.readouterr().out
    assert "usage: 14 model calls, 154 prompt + " in printed and "8 code runs, 10 tool calls, step budget used up on 2" in printed
    rep = json.loads((out / "geoqa_report.json").read_text())
    o, p = rep["overall"], rep["premise"]
    assert (o["n"], o["em"], o["ne"], o["coverage"], o["em_cov"]) == (4, 0.25, 0.75, 0.5, 0.5)
    assert (p["n_false"], p["nrr"]) == (3, round(2 / 3, 6))
    assert (p["n_answerable"], p["frr"]) == (3, round(1 / 3, 6))
    assert rep["budget_exhausted"] == 2
    summary = json.loads((out / "summary.json").read_text())
    completion = sum(len(t.split()) for t in sent)
    assert summary["usage"] == {"answers": 8, "model_calls": 14, "prompt_tokens": 14 * 11,
                                "completion_tokens": completion, "code_runs": 8, "tool_calls": 10,
                                "budget_exhausted": 2}
    answers = {a["task_id"].split("/", 1)[1]: a for a in map(json.loads, (out / "answers.jsonl").read_text().splitlines())}
    right = answers["geoqa.nearest.amenity/000000"]
    assert right["status"] == "ok" and right["usage"]["tool_calls"] == 2 and right["usage"]["code_runs"] == 1
    assert right["isolation"].startswith("bwrap")
    ex = answers["geoqa.nearest.amenity/000001"]
    assert ex["status"] == "budget_exhausted" and ex["usage"] == {
        "model_calls": 3, "prompt_tokens": 33, "completion_tokens": 3 * len(LOOP_CODE.split()), "code_runs": 3,
        "tool_calls": 3}
    assert answers["geoqa.nearest.amenity/000002"]["status"] == "refusal"
    assert answers["geoqa.fp.nearest.amenity/000001"]["status"] == "budget_exhausted"
    assert summary["solver_options"]["step_budget"] == 3 and summary["solver_options"]["mode"] == "agentic"


# ----------------------------------------------------------------------------------- CLI errors
def _run_err(argv, capsys):
    try:
        code = main(argv)
    except SystemExit as exc:
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["run", "geoqa-mini", "--mode", "agentic"], "--mode agentic needs a live model"),
    (["run", "geoqa-mini", "--solver", "code:x.py", "--mode", "agentic"], "needs a live model"),
    (["run", "quickstart", "--solver", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--mode", "agentic"],
     "the tool API serves geoqa suites only"),
    (["run", "geoqa-mini", "--solver", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--step-budget", "3"],
     "--step-budget bounds the agentic tier"),
    (["run", "geoqa-mini", "--solver", "openai:m", "--base-url", "http://127.0.0.1:9/v1", "--mode", "agentic",
      "--structured"], "--structured is for direct answers"),
    (["run", "geoqa-mini", "--solver", "openai:m", "--mode", "agentic", "--step-budget", "0"], "--step-budget"),
    (["generate", "quickstart", "--prompts-only", "--mode", "agentic"], "the tool API serves geoqa suites only"),
    (["generate", "geoqa-mini", "--step-budget", "3"], "use it with --prompts-only --mode agentic"),
])
def test_agentic_bad_combinations(argv, message, capsys, tmp_path):
    code, err = _run_err([*argv, "--out", str(tmp_path / "o")], capsys)
    assert code == 2 and ("stsim: error: " in err or "stsim run: error: " in err) and message in err, err
    assert not (tmp_path / "o").exists()


def test_help_names_agentic(capsys):
    try:
        main(["run", "--help"])
    except SystemExit:
        pass
    out = capsys.readouterr().out
    assert "{da,ci,agentic}" in out and "--step-budget N" in out


@pytest.mark.slow
def test_agentic_resume_keeps_step_budget(tmp_path, capsys):
    """run.json records the step budget: --resume takes it from there (no request is sent again
    for answered questions) and refuses another budget."""
    _bwrap_or_skip()
    out = tmp_path / "run"
    with FakeChatServer(lambda body, n: (200, "Answer: Cafe 1")) as srv:
        argv = ["run", "geoqa-small", "--solver", "openai:fake-model", "--base-url", srv.url, "--family", FAMILY,
                "--n", "1", "--quiet"]
        assert main([*argv, "--mode", "agentic", "--step-budget", "2", "--out", str(out)]) == 0
        assert json.loads((out / "run.json").read_text())["step_budget"] == 2
        n = len(srv.requests)
        assert n == 2
        assert main([*argv, "--resume", str(out)]) == 0  # mode and budget from run.json
        assert len(srv.requests) == n
        capsys.readouterr()
        code, err = _run_err([*argv, "--resume", str(out), "--step-budget", "3"], capsys)
        assert code == 2 and "another run is there (--step-budget: 2 there, 3 now)" in err, err
