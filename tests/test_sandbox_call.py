"""Sandbox call arguments are checked before a run: the wrong key or shape is named instead of
a KeyError / TypeError from inside the harness.  Only the last test starts a sandbox."""
import json

import pytest

from stsim.solvers.code import call_args
from stsim.sandbox.call import check_call_args, check_solver_form, solver_parameters
from stsim.cli import main
from stsim.registry import generate_task

TRACK = {"readings": [[1.0, None], [3.0, 2.0]], "coordinate": [[0, 0], [1, 1]], "timestamp": [0, 1]}
SOLVER3 = "def solver(readings, coordinate, timestamp):\n    return [len(readings), len(coordinate)]\n"
SOLVER1 = "def solver(inputs):\n    return inputs['x']\n"


@pytest.mark.parametrize("args, message", [
    ([1, 2], "expected a JSON object"),
    ("x", "got a JSON string"),
    ({"foo": 1}, "unknown key 'foo'"),
    ({"readings": [[1]]}, "missing 'coordinate', 'timestamp'"),
    ({**TRACK, "coordinate": 1}, "'coordinate' must be an array of sensor positions [x, y]"),
    ({**TRACK, "coordinate": [[0, 0, 0], [1, 1, 1]]}, "'coordinate' must be an array"),
    ({**TRACK, "timestamp": [0, "noon"]}, "'timestamp' must be an array of times"),
    ({**TRACK, "readings": [[1.0, 2.0]]}, "T = 2 (the length of 'timestamp'); got 1 rows"),
    ({**TRACK, "readings": 5}, "got a JSON number"),
    ({**TRACK, "readings": [[1.0, 2.0], [3.0]]}, "'readings'[1] must hold one reading per sensor (2,"),
])
def test_wrong_shapes_are_named(args, message):
    with pytest.raises(ValueError) as exc:
        check_call_args(args)
    assert message in str(exc.value)


def test_good_shapes_pass():
    for args in ({}, {"inputs": [1, {"a": None}]}, TRACK, {**TRACK, "inputs": {}},
                 {**TRACK, "timestamp": [None, None]}):
        check_call_args(args)


def test_solver_parameters_read_without_running():
    assert solver_parameters(SOLVER3) == ["readings", "coordinate", "timestamp"]
    assert solver_parameters("def solver(inputs, scale=2):\n    pass\n") == ["inputs"]
    assert solver_parameters("def solver(a, /, b):\n    pass\ndef solver():\n    pass\n") == []
    assert solver_parameters("import os\nos.system('false')\n") is None  # no def: nothing to check
    assert solver_parameters("def solver(*a):\n    pass\n") is None
    assert solver_parameters("def solver(:\n") is None  # the sandbox reports the SyntaxError


def test_solver_form_against_the_arguments():
    check_solver_form(SOLVER3, TRACK)
    check_solver_form(SOLVER1, {"inputs": {"x": 1}})
    check_solver_form("def solver():\n    return 1\n", None)
    with pytest.raises(ValueError, match=r"solver\(inputs\) is called with the arguments 'inputs'; "
                                         r"the arguments have 'readings', 'coordinate', 'timestamp'"):
        check_solver_form(SOLVER1, TRACK)
    with pytest.raises(ValueError, match="no arguments were given"):
        check_solver_form(SOLVER3, None)


@pytest.mark.parametrize("family", ["stark.tracking.range", "stark.tracking.range_bearing",
                                    "stark.tracking.event_xyt", "stark.localization.range"])
def test_code_solver_arguments_pass_the_check(family):
    """What ``--solver code:`` offers every program is a valid call (an independent producer)."""
    args = call_args(generate_task(family, 0))
    check_call_args(json.loads(json.dumps(args)))
    check_solver_form(SOLVER1, args)
    if family.startswith("stark.tracking."):
        check_solver_form(SOLVER3, args)


def test_cli_names_the_wrong_argument_before_running(tmp_path, capsys):
    prog = tmp_path / "track.py"
    prog.write_text(SOLVER3)
    args_file = tmp_path / "args.json"
    args_file.write_text(json.dumps({"readings": [[1.0]]}))
    cases = [
        (["--args", str(args_file)], f"--args {args_file}: the tracking form needs"),
        (["--args", "[1, 2]"], "--args: expected a JSON object"),
        (["--args", '{"inputs": {}}'], f"{prog}: solver(readings, coordinate, timestamp) is called with"),
        ([], "no arguments were given; pass them with --args '{\"readings\": "),
        (["--args", "{oops"], "--args: not valid JSON"),
        (["--args", str(tmp_path / "none.json")], "none.json: no such file"),
    ]
    for extra, message in cases:
        assert main(["sandbox", "run", str(prog), *extra]) == 2
        cap = capsys.readouterr()
        assert message in cap.err and cap.out == "" and "Traceback" not in cap.err


def test_cli_inline_arguments_run(tmp_path, capsys):
    prog = tmp_path / "track.py"
    prog.write_text(SOLVER3)
    assert main(["sandbox", "run", str(prog), "--args", json.dumps(TRACK), "--timeout", "20"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["status"], out["value"]) == ("ok", [2, 2]), out["detail"]


def test_cli_without_args_says_how_to_pass_inputs(tmp_path, capsys):
    prog = tmp_path / "one.py"
    prog.write_text("def solver(inputs):\n    return inputs['x']\n")
    assert main(["sandbox", "run", str(prog)]) == 2
    err = capsys.readouterr().err
    assert "pass them with --args '{\"inputs\": {...}}' or --args FILE.json" in err
    assert main(["sandbox", "run", str(prog), "--args", '{"inputs": {"x": 3}}']) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 3


@pytest.mark.parametrize("extra, message", [
    (["--timeout", "inf"], "--timeout must be at most 604800, got inf"),     # was an OverflowError traceback
    (["--timeout", "1e12"], "--timeout must be at most 604800"),
    (["--cpu", "inf"], "--cpu must be at most 604800, got inf"),
    (["--memory", "99999999999999"], "--memory must be at most 4194304"),    # was 'crashed', exit 1
    (["--timeout", "nan"], "--timeout must be positive, got nan"),
    (["--memory", "0"], "--memory must be positive, got 0"),
])
def test_cli_out_of_range_limits_are_bad_input_naming_the_option(tmp_path, capsys, extra, message):
    prog = tmp_path / "p.py"
    prog.write_text("def solver():\n    return 1\n")
    assert main(["sandbox", "run", str(prog), *extra]) == 2
    cap = capsys.readouterr()
    assert f"stsim: error: {message}" in cap.err and cap.out == "" and "Traceback" not in cap.err


def test_every_limit_has_a_maximum_that_the_sandbox_accepts():
    from stsim.sandbox.isolation import LIMIT_MAXIMA, Limits, Sandbox
    assert set(LIMIT_MAXIMA) == set(Limits.__dataclass_fields__)
    # the maxima themselves run (RLIMIT_NOFILE above this process's hard limit was 'crashed')
    with Sandbox(Limits(**LIMIT_MAXIMA), reuse=False) as sb:
        res = sb.run("def solver():\n    return [1, 2]\n", None)
    assert (res.status, res.value) == ("ok", [1, 2]), res.detail
    for field, top in LIMIT_MAXIMA.items():
        with pytest.raises(ValueError, match=f"sandbox limit {field} must be at most"):
            Limits(**{field: top * 2})
        with pytest.raises(ValueError, match=f"sandbox limit {field} must be at most"):
            Limits(**{field: float("inf")})


@pytest.mark.parametrize("depth, message", [
    (100_000, "JSON nested too deeply; expected a JSON object"),   # RecursionError decoding it
    (300, "nested more than 100 levels deep"),  # ~990 decoded but was a RecursionError sending it
])
def test_cli_args_nested_too_deeply_are_bad_input(tmp_path, capsys, depth, message):
    prog = tmp_path / "p.py"
    prog.write_text(SOLVER1)
    args = tmp_path / "args.json"
    args.write_text('{"inputs": ' + "[" * depth + "]" * depth + "}")
    assert main(["sandbox", "run", str(prog), "--args", str(args)]) == 2
    cap = capsys.readouterr()
    assert f"stsim: error: --args {args}: " in cap.err and message in cap.err and "Traceback" not in cap.err


def test_call_arguments_nest_at_most_max_depth():
    from stsim.sandbox.call import MAX_DEPTH
    deep = 0
    for _ in range(MAX_DEPTH - 2):
        deep = [deep]
    check_call_args({"inputs": {"x": deep}})  # object + object + MAX_DEPTH - 2 arrays: MAX_DEPTH
    with pytest.raises(ValueError, match=f"nested more than {MAX_DEPTH} levels deep"):
        check_call_args({"inputs": {"x": [deep]}})


def test_cli_inline_args_longer_than_a_file_name(tmp_path, capsys):
    """Inline --args of more than 255 bytes (any tracking task's readings) was an OSError
    traceback, 'File name too long', from checking whether the text named a file."""
    prog = tmp_path / "p.py"
    prog.write_text("def solver(inputs):\n    return len(inputs['x'])\n")
    inline = json.dumps({"inputs": {"x": list(range(1000))}})
    assert len(inline) > 4096
    assert main(["sandbox", "run", str(prog), "--isolation", "process", "--args", inline]) == 0
    assert json.loads(capsys.readouterr().out)["value"] == 1000
    assert main(["sandbox", "run", str(prog), "--isolation", "process", "--args", "{" + "9" * 300]) == 2
    cap = capsys.readouterr()
    assert "stsim: error: --args: not valid JSON" in cap.err and "Traceback" not in cap.err


@pytest.mark.parametrize("empty", ["", "   "])
def test_cli_empty_args_says_so(tmp_path, capsys, empty):
    """`--args ''` said "--args : cannot read ([Errno 21] Is a directory: '.')" (the empty
    text read as the path '.'): it now says the option is empty and what to give."""
    prog = tmp_path / "p.py"
    prog.write_text("def solver(inputs):\n    return 1\n")
    assert main(["sandbox", "run", str(prog), "--isolation", "process", "--args", empty]) == 2
    err = capsys.readouterr().err
    assert "--args is empty: give a JSON file or inline JSON" in err and "directory" not in err
