"""Check a sandbox call before running it (``stsim sandbox run FILE.py --args JSON``).

The sandbox harness (:mod:`stsim.sandbox.harness`) calls a program's ``solver`` in
one of three forms, picked by the number of its required positional parameters:

* ``solver()`` -- no arguments needed;
* ``solver(inputs)`` -- ``{"inputs": ...}``, a task's structured inputs;
* ``solver(readings, coordinate, timestamp)`` -- STARK's tracking form: ``readings`` ``(T, n)``
  (one row per time stamp, one entry per sensor, ``null`` for a missing reading),
  ``coordinate`` ``(n, 2)`` sensor positions ``[x, y]``, ``timestamp`` ``(T,)`` times
  (numbers, or ``null`` when unknown).

A wrongly shaped call otherwise only shows up as a ``KeyError`` or ``TypeError`` raised inside
the harness or the program; these checks name the wrong key or shape first.  They read the
program with :mod:`ast` and never run it.
"""
from __future__ import annotations

import ast
import math
from typing import Any

TRACKING_KEYS = ("readings", "coordinate", "timestamp")
CALL_KEYS = ("inputs", *TRACKING_KEYS)
CALL_FORMS = ('{} for solver(), {"inputs": ...} for solver(inputs), or {"readings": (T, n), '
              '"coordinate": (n, 2), "timestamp": (T,)} for solver(readings, coordinate, timestamp)')


def json_type(value: Any) -> str:
    """The JSON name of a decoded value's type (object, array, string, number, boolean, null)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {dict: "object", list: "array", str: "string"}.get(type(value), type(value).__name__)


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


#: the deepest nesting of call arguments (arrays and objects inside each other): Python's json
#: module recurses per level, and the arguments are sent to the sandbox as JSON
MAX_DEPTH = 100


def _depth(value: Any) -> int:
    """How deeply arrays and objects nest in ``value`` (0 for a number or string); iterative."""
    deepest, todo = 0, [(value, 0)]
    while todo:
        v, d = todo.pop()
        if isinstance(v, (list, tuple, dict)):
            deepest = max(deepest, d + 1)
            todo.extend((x, d + 1) for x in (v.values() if isinstance(v, dict) else v))
    return deepest


def check_call_args(args: Any) -> None:
    """Check call arguments against the three call forms (module docstring).

    Raises:
        ValueError: not a JSON object, an unknown key, nesting deeper than :data:`MAX_DEPTH`,
            an incomplete tracking triple, or a tracking array of the wrong shape (``readings`` rows vs ``timestamp`` length,
            entries per row vs number of sensors); the message names the key.
    """
    if not isinstance(args, dict):
        raise ValueError(f"expected a JSON object ({CALL_FORMS}), got a JSON {json_type(args)}")
    unknown = [k for k in args if k not in CALL_KEYS]
    if unknown:
        raise ValueError(f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                         f"expected {CALL_FORMS}")
    if _depth(args) > MAX_DEPTH:
        raise ValueError(f"the arguments are nested more than {MAX_DEPTH} levels deep (arrays or objects "
                         "inside each other); they are sent to the sandbox as JSON, which cannot go that deep")
    given = [k for k in TRACKING_KEYS if k in args]
    if not given:
        return
    missing = [k for k in TRACKING_KEYS if k not in args]
    if missing:
        raise ValueError(f"the tracking form needs 'readings', 'coordinate' and 'timestamp'; "
                         f"missing {', '.join(map(repr, missing))}")
    readings, coordinate, timestamp = (args[k] for k in TRACKING_KEYS)
    if not isinstance(coordinate, list) or not all(
            isinstance(c, list) and len(c) == 2 and all(map(_number, c)) for c in coordinate):
        raise ValueError(f"'coordinate' must be an array of sensor positions [x, y], shape (n, 2); "
                         f"got {_short(coordinate)}")
    if not isinstance(timestamp, list) or not all(t is None or _number(t) for t in timestamp):
        raise ValueError(f"'timestamp' must be an array of times (numbers or null), shape (T,); "
                         f"got {_short(timestamp)}")
    if not isinstance(readings, list) or len(readings) != len(timestamp):
        what = f"{len(readings)} rows" if isinstance(readings, list) else f"a JSON {json_type(readings)}"
        raise ValueError(f"'readings' must be an array of one row per time stamp, shape (T, n) with "
                         f"T = {len(timestamp)} (the length of 'timestamp'); got {what}")
    for i, row in enumerate(readings):
        if not isinstance(row, list) or len(row) != len(coordinate):
            what = f"{len(row)} entries" if isinstance(row, list) else f"a JSON {json_type(row)}"
            raise ValueError(f"'readings'[{i}] must hold one reading per sensor ({len(coordinate)}, "
                             f"the length of 'coordinate'); got {what}")


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def solver_parameters(source: str) -> list[str] | None:
    """Required positional parameters of the program's top-level ``def solver`` (the last one
    when it is defined twice); ``None`` when the program does not parse, has no such ``def``
    (e.g. ``solver = lambda: ...``) or takes ``*args`` (the harness decides at run time)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "solver"]
    if not defs or defs[-1].args.vararg is not None:
        return None
    a = defs[-1].args
    positional = [p.arg for p in (*a.posonlyargs, *a.args)]
    return positional[:len(positional) - len(a.defaults)]


def check_solver_form(source: str, args: dict[str, Any] | None) -> None:
    """Check that ``args`` (``None``: no arguments) hold what the program's ``solver``
    signature is called with (``inputs``, or the tracking triple); use
    :func:`check_call_args` for the shape of ``args`` itself.

    Raises:
        ValueError: ``solver(inputs)`` without ``"inputs"``, or ``solver(readings, coordinate,
            timestamp)`` without the tracking triple, naming the missing keys.
    """
    params = solver_parameters(source)
    needed = {1: ("inputs",), 3: TRACKING_KEYS}.get(len(params)) if params is not None else None
    if not needed:
        return
    missing = [k for k in needed if k not in (args or {})]
    if missing:
        have = (f"the arguments have {', '.join(map(repr, args))} (missing {', '.join(map(repr, missing))})"
                if args else "no arguments were given")
        raise ValueError(f"solver({', '.join(params)}) is called with the arguments "
                         f"{', '.join(map(repr, needed))}; {have}")


#: the call forms of ``solver``, for messages
SOLVER_FORMS = "solver(), solver(inputs) or solver(readings, coordinate, timestamp)"


def signature_problem(params: list[str], args: dict[str, Any]) -> str | None:
    """Why ``solver`` with the required positional parameters ``params`` (from
    :func:`solver_parameters`) cannot be called in any form the arguments ``args`` offer
    (``inputs``; the tracking triple on tracking tasks), naming the expected signatures;
    ``None`` when it can (0 parameters; 1 with ``"inputs"``; 3 with the tracking triple)."""
    n = len(params)
    if n == 0 or (n == 1 and "inputs" in args) or (n == 3 and all(k in args for k in TRACKING_KEYS)):
        return None
    offered = ["solver()"] + (["solver(inputs)"] if "inputs" in args else []) + (
        ["solver(readings, coordinate, timestamp)"] if all(k in args for k in TRACKING_KEYS) else [])
    return (f"solver({', '.join(params)}) takes {n} required positional argument{'s' if n != 1 else ''}; "
            f"stsim calls {SOLVER_FORMS} (this task: {' or '.join(offered)}); the program was not run")

