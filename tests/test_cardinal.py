"""Cardinal-direction benchmark (seed 002): generator, hand-worked answers, rubric, oracle,
report and CLI."""
import json
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stsim.answers import parse_answer, read_cardinal
from stsim.baselines.cardinal import solve_cardinal
from stsim.scoring.cardinal_report import accuracy_with_sem, cardinal_report, headline
from stsim.cli import main
from stsim.generators.cardinal import LOCOMOTION, PERSONS, question_text
from stsim.records import RecordError
from stsim.registry import generate_task, validate_task


@pytest.fixture(scope="module")
def large():
    return [generate_task("cardinal.large", i, suite="cardinal-large") for i in range(5760)]


@pytest.fixture(scope="module")
def t4d():
    return [generate_task("cardinal.t4_from_agent", i) for i in range(960)]


def _find(tasks, template, heading, side):
    return [t for t in tasks if (t.meta["template"], t.meta["heading"], t.meta["side"])
            == (template, heading, side)]


# ------------------------------------------------------------------------------- generator
def test_large_set_is_exactly_5760_distinct_and_balanced(large):
    assert len(large) == 5760
    assert len({t.prompt for t in large}) == 5760
    assert len({(t.meta["template"], t.meta["heading"], t.meta["side"], t.meta["locomotion"],
                 t.meta["person"]) for t in large}) == 5760
    for key, n_values in (("template", 6), ("direction", 8), ("heading", 8), ("locomotion", 10),
                          ("person", 6)):
        counts = Counter(t.meta[key] for t in large)
        assert len(counts) == n_values and len(set(counts.values())) == 1, key
    with pytest.raises(ValueError, match="exactly 5760"):
        generate_task("cardinal.large", 5760)


def test_t4_from_agent_set(t4d):
    assert len({t.prompt for t in t4d}) == 960
    assert Counter(t.meta["direction"] for t in t4d) == {d: 120 for d in Counter(t.meta["direction"] for t in t4d)}
    assert all(t.meta["template"] == "T4-from-agent" for t in t4d)


def test_first_96_cover_every_template_heading_side(large):
    assert len({(t.meta["template"], t.meta["heading"], t.meta["side"]) for t in large[:96]}) == 96


# (template, heading, side) -> answer, worked by hand from the situation
HAND_WORKED = [
    ("T1", "south", "east", "west"),        # walking south on the east shore: lake to the west
    ("T1", "northeast", "southeast", "northwest"),
    ("T2", "south", "east", "west"),        # turned round, now heading north: lake still west
    ("T2", "east", "north", "south"),
    ("T3", "north", "west", "east"),        # middle of the west side: centre is east
    ("T3", "southwest", "northwest", "southeast"),
    ("T4", "east", "south", "north"),       # south side of an east-west road: road is north
    ("T4", "northwest", "northeast", "southwest"),
    ("T5", "south", "east", "east"),        # east shore of an island: sea is east
    ("T5", "west", "north", "north"),
    ("T6", "south", "east", "east"),        # turning round does not move the sea
    ("T6", "northeast", "northwest", "northwest"),
]


@pytest.mark.parametrize("template, heading, side, answer", HAND_WORKED)
def test_hand_worked_answers(large, template, heading, side, answer):
    found = _find(large, template, heading, side)
    assert len(found) == 60  # 10 locomotion x 6 person forms
    assert {t.answer for t in found} == {answer}
    assert {solve_cardinal(t)[0].value for t in found[:3]} == {answer}


def test_hand_worked_t4_from_agent(t4d):
    found = _find(t4d, "T4-from-agent", "east", "south")
    assert {t.answer for t in found} == {"north"}
    assert "from him is the road" in question_text("T4-from-agent", "east", "south", "walking", "he")


def test_wording_agrees_with_person():
    q = question_text("T2", "south", "east", "walking", "he")
    assert q.startswith("He is walking south, following the east shore of a lake")
    assert "he turns round to go back the way he came" in q
    assert question_text("T6", "northeast", "northwest", "riding", "I").startswith(
        "I am riding north-east, following the north-west shore of an island, and then I turn round")
    q = question_text("T4", "east", "south", "cycling", "they")
    assert q == ("They are cycling east on the south side of a road running from east to west. "
                 "Which direction is the road in?")
    assert len(LOCOMOTION) == 10 and set(PERSONS) == {"I", "we", "you", "he", "she", "they"}


def test_generation_is_deterministic_and_seed_free():
    a = generate_task("cardinal.large", 123, suite_seed=0)
    b = generate_task("cardinal.large", 123, suite_seed=7)
    assert a.prompt == b.prompt and a.answer == b.answer


def test_validate_rejects_tampered_tasks(large):
    t = large[5]
    validate_task(t)
    bad = type(t)(**{**t.to_dict(), "answer": "north" if t.answer != "north" else "south"})
    with pytest.raises(RecordError, match="disagrees"):
        validate_task(bad)
    inputs = dict(t.inputs, side=t.inputs["heading"])
    with pytest.raises(RecordError, match="does not run along"):
        validate_task(type(t)(**{**t.to_dict(), "inputs": inputs}))


def test_oracle_is_exact_on_every_question(large, t4d):
    wrong = [t.id for t in large + t4d if solve_cardinal(t)[0].value != t.answer]
    assert wrong == []


# ---------------------------------------------------------------------------------- rubric
# reply -> (scored direction or None, rubric followed)
READINGS = [
    ("north", "north", True), ("North", "north", True), ("NORTH.", "north", True),
    ("north-east", "northeast", True), ("North-East", "northeast", True),
    ("north east", "northeast", True), ("northeast", "northeast", True),
    ("\u2018North East\u2019.", "northeast", True), ('"south-west"', "southwest", True),
    ("  West \n", "west", True), ("south\u2013east", "southeast", True), ("NW", "northwest", True),
    ("s", "south", True), ("**East**", "east", True), ("North_West", "northwest", True),
    ("The lake is to the west", "west", False), ("The lake is to the west.", "west", False),
    ("West. The lake is to the west.", "west", False), ("It lies north-east of you.", "northeast", False),
    ("The sea is to the north east", "northeast", False), ("southwards", "south", False),
    ("Head northeastern", "northeast", False), ("The bandstand is east of me.", "east", False),
    ("north-south", None, False), ("east-west", None, False), ("east to west", None, False),
    ("south-east to north-west", None, False), ("west-east", None, False),
    ("north to south", None, False), ("Not north but south", None, False),
    ("I cannot determine that.", None, False), ("", None, False), ("Easter Island", None, False),
    ("up", None, False), ("left", None, False), ("42", None, False),
]


@pytest.mark.parametrize("reply, direction, strict", READINGS)
def test_cardinal_reading(reply, direction, strict):
    r = read_cardinal(reply)
    assert (r.direction, r.strict) == (direction, strict)
    assert r.rubric_failure == (not strict)
    assert (r.note is None) == strict


def test_reading_count():
    assert len(READINGS) >= 30
    assert sum(1 for _, d, s in READINGS if d and not s) >= 5
    assert sum(1 for _, d, _ in READINGS if d is None) >= 5


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet="northsuewa -_.,'\"\u2013NE"), st.none(),
                 st.integers(), st.binary()))
def test_reading_never_raises(text):
    r = read_cardinal(text)
    assert r.direction is None or r.direction in {"north", "northeast", "east", "southeast",
                                                  "south", "southwest", "west", "northwest"}
    a = parse_answer(text, task_id="t", step=None, answer_format="direction", rubric="cardinal")
    assert a.status in ("ok", "format_failure", "refusal")


def test_parse_answer_keeps_rubric_notes():
    a = parse_answer("The lake is to the west.", task_id="t", step=None,
                     answer_format="direction", rubric="cardinal")
    assert a.status == "ok" and a.value == "west" and "rubric not followed" in a.detail
    a = parse_answer("north-south", task_id="t", step=None, answer_format="direction", rubric="cardinal")
    assert a.status == "format_failure" and "several directions" in a.detail
    a = parse_answer("North-West", task_id="t", step=None, answer_format="direction", rubric="cardinal")
    assert (a.status, a.value, a.detail) == ("ok", "northwest", None)


# ---------------------------------------------------------------------------------- report
def test_accuracy_with_sem_hand_computed():
    r = accuracy_with_sem([1, 1, 0, 0])
    assert r["accuracy"] == 0.5
    assert r["sem"] == pytest.approx(math.sqrt(0.25 / 3), abs=1e-6)  # s = sqrt(1/3), n = 4
    assert accuracy_with_sem([1] * 10)["sem"] == 0.0
    assert accuracy_with_sem([])["accuracy"] is None


def test_report_counts_and_confusion(large):
    tasks = [t for t in large if t.answer == "west"][:5]
    replies = ["west", "The lake is to the west.", "north-south", "east", None]
    answers = [parse_answer(r, task_id=t.id, step=None, answer_format="direction", rubric="cardinal")
               for t, r in zip(tasks, replies) if r is not None]  # the fifth is missing
    rep = cardinal_report(tasks, answers)
    assert rep["overall"]["n"] == 5 and rep["overall"]["correct"] == 2
    assert rep["overall"]["sem"] == pytest.approx(math.sqrt(0.4 * 0.6 / 4), abs=1e-6)
    assert rep["rubric"] == {"followed": 2, "failures": 2, "scored": 1, "scored_correct": 1,
                             "invalid": 1, "missing": 1}
    west = rep["confusion"]["counts"][rep["confusion"]["rows"].index("west")]
    cols = rep["confusion"]["columns"]
    assert west[cols.index("west")] == 2 and west[cols.index("east")] == 1
    assert west[cols.index("invalid")] == 1 and west[cols.index("missing")] == 1 and sum(west) == 5
    assert "missing (no answer) 1" in headline(rep)
    assert sum(map(sum, rep["confusion"]["counts"])) == 5
    assert rep["by_direction"]["west"]["n"] == 5



def test_chance_is_the_expected_accuracy_of_a_uniform_8_way_guess(large):
    from stsim.answers import COMPASS8
    from stsim.scoring.score import score_answers, summarise
    from stsim.records import Answer
    tasks = large[:40]
    # exact expectation: every one of the 8 guesses on every task, each with weight 1/8
    hits = [score_answers([t], [Answer(t.id, None, "ok", value=d)])[0].correct for t in tasks for d in COMPASS8]
    expected = sum(hits) / len(hits)
    assert expected == 1 / 8  # one compass point in eight is the gold
    oracle = [Answer(t.id, None, "ok", value=t.answer) for t in tasks]
    assert summarise(score_answers(tasks, oracle))["cardinal.large"]["chance"] == pytest.approx(expected)

# --------------------------------------------------------------------------------------- CLI
def test_cli_run_oracle_and_score_model_text(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "cardinal", "--solver", "oracle", "--quiet", "--out", str(out)]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["families"]["cardinal.large"]["accuracy"] == 1.0
    assert summary["families"]["cardinal.large"]["n"] == 96
    assert summary["families"]["cardinal.t4_from_agent"]["n"] == 16
    rep = summary["analyses"]["cardinal."]
    assert rep["overall"]["accuracy"] == 1.0 and rep["overall"]["n"] == 112
    assert (out / "cardinal" / "confusion.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    rows = (out / "cardinal" / "confusion.csv").read_text().splitlines()
    assert len(rows) == 9 and rows[0].endswith(",invalid,missing")
    # a "model" that always answers the side it walks on, in a sentence
    tasks = [json.loads(line) for line in (out / "tasks.jsonl").read_text().splitlines()]
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"task_id": t["id"], "text": f"It is to the {t['inputs']['side']}."})
                               + "\n" for t in tasks))
    capsys.readouterr()
    assert main(["score", str(out / "tasks.jsonl"), str(answers), "--out", str(tmp_path / "s")]) == 0
    printed = capsys.readouterr().out
    scored = json.loads((tmp_path / "s" / "summary.json").read_text())
    rep = scored["analyses"]["cardinal."]
    fams = scored["families"]
    assert rep["overall"]["correct"] == round(fams["cardinal.large"]["accuracy"] * 96) + \
        round(fams["cardinal.t4_from_agent"]["accuracy"] * 16)
    # the side is right only where the target lies outside the feature (T5, T6: the sea)
    expected = sum(1 for t in tasks if t["inputs"]["target_place"] == "outside")
    assert rep["overall"]["correct"] == expected
    assert rep["rubric"]["failures"] == 112 and rep["rubric"]["scored"] == 112
    assert "rubric not followed 112" in printed
    assert (tmp_path / "s" / "cardinal" / "confusion.png").exists()



def test_headline_with_one_item_says_the_sem_is_undefined(tmp_path, capsys, large):
    from stsim.scoring.cardinal_report import headline
    assert main(["run", "cardinal-large", "--solver", "oracle", "--n", "1", "--quiet",
                 "--out", str(tmp_path / "run")]) == 0
    printed = capsys.readouterr().out
    assert "cardinal directions: accuracy 1.0000 (n=1, SEM undefined);" in printed
    assert "+- -" not in printed
    row = next(line.split() for line in printed.splitlines() if line.startswith("cardinal.large "))
    assert row[-1] == "0.1250"  # the chance column
    tasks = large[:4]  # two right, two wrong: SEM sqrt(0.5 * 0.5 / 3)
    answers = [parse_answer(t.answer if i < 2 else "invalid reply", task_id=t.id, step=None,
                            answer_format="direction", rubric="cardinal") for i, t in enumerate(tasks)]
    assert "accuracy 0.5000 +- 0.2887 (SEM, n=4);" in headline(cardinal_report(tasks, answers))

def test_cli_generate_counts(tmp_path):
    path = tmp_path / "t.jsonl"
    assert main(["generate", "cardinal-large", "--n", "9999", "-o", str(path)]) == 0
    assert len(path.read_text().splitlines()) == 5760  # capped at the family's size
