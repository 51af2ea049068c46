"""``stsim sandbox run``: a model-written ``solver()`` program run once in the sandbox, its
outcome printed as one JSON object."""
from __future__ import annotations

import json
from pathlib import Path

from .common import CLIError


def add_sandbox(sub) -> None:
    """``stsim sandbox run FILE.py``."""
    sb = sub.add_parser("sandbox", help="run a model-written solver() program in the sandbox")
    sbs = sb.add_subparsers(dest="sandbox_command", metavar="ACTION")
    sbs.required = True
    sr = sbs.add_parser("run", help="run FILE.py's solver() once and print one JSON object",
                        epilog="status (the JSON's 'status'): ok; syntax_error (FILE.py does not compile, so it "
                               "never ran; 'detail' names the file and line); timeout; memory; crashed (an "
                               "exception or a signal while it ran); forbidden; no_result; bad_shape "
                               "(docs/sandbox.md). Exit codes: 0 ok; 1 any other status; 2 bad input "
                               "(the message says what) or no namespace isolation without --isolation process.")
    sr.add_argument("file", type=Path, help="a Python file defining solver() (call forms: docs/sandbox.md)")
    sr.add_argument("--timeout", type=float, default=10.0, metavar="S", help="wall-time limit (default 10 s)")
    sr.add_argument("--cpu", type=float, default=None, metavar="S", help="CPU-time limit (default: --timeout)")
    sr.add_argument("--memory", type=int, default=1024, metavar="MB", help="memory limit (default 1024 MB)")
    sr.add_argument("--args", default=None, metavar="JSON",
                    help='call arguments, a JSON file or inline JSON: {"inputs": ...} for solver(inputs) '
                         'or {"readings", "coordinate", "timestamp"} for solver(readings, coordinate, timestamp)')
    sr.add_argument("--isolation", choices=("bwrap", "process"), default="bwrap",
                    help="namespace isolation with bubblewrap (default; refuses to run where it is "
                         "unavailable, saying why), or the explicit, weaker process mode")


def _is_file(text: str) -> bool:
    """Whether ``text`` names an existing file; False for text no path can be (inline JSON of
    more than 255 bytes is ENAMETOOLONG, which ``Path.exists`` raises instead of answering)."""
    try:
        return Path(text).exists()
    except (OSError, ValueError):  # ValueError: an embedded NUL byte
        return False


def cmd_sandbox(args) -> int:
    """``stsim sandbox run``: run the file's ``solver()`` once and print the outcome as JSON;
    exit 1 unless it is ``ok`` (``syntax_error`` included: a file that does not compile is the
    program's outcome, reported in the JSON like the others, not a bad option)."""
    from ..sandbox.isolation import Limits, Sandbox, SandboxError
    from ..sandbox.call import check_call_args, check_solver_form, solver_parameters
    try:
        source = args.file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CLIError(f"{args.file}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CLIError(f"{args.file}: cannot read ({exc})") from None
    call = None
    if args.args is not None:
        if not args.args.strip():
            raise CLIError("--args is empty: give a JSON file or inline JSON such as '{\"inputs\": {...}}'")
        inline = args.args.lstrip().startswith(("{", "[")) and not _is_file(args.args)
        where = "--args" if inline else f"--args {args.args}"
        try:
            text = args.args if inline else Path(args.args).read_text(encoding="utf-8")
        except FileNotFoundError:
            raise CLIError(f"{where}: no such file (give a JSON file or inline JSON)") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CLIError(f"{where}: cannot read ({exc})") from None
        try:
            call = json.loads(text)
        except RecursionError:
            raise CLIError(f"{where}: JSON nested too deeply; expected a JSON object") from None
        except ValueError as exc:
            raise CLIError(f"{where}: {'empty' if not text.strip() else 'not valid JSON'} ({exc}); "
                           "expected a JSON object") from None
        try:
            check_call_args(call)
        except ValueError as exc:
            raise CLIError(f"{where}: {exc}") from None
    try:
        check_solver_form(source, call)
    except ValueError as exc:
        hint = ""
        if call is None:
            params = solver_parameters(source) or []
            example = ('\'{"inputs": {...}}\'' if len(params) == 1 else
                       '\'{"readings": [[...], ...], "coordinate": [[x, y], ...], "timestamp": [t, ...]}\'')
            hint = (f"; pass them with --args {example} or --args FILE.json "
                    f"(a JSON object; see docs/sandbox.md for the three call forms)")
        raise CLIError(f"{args.file}: {exc}{hint}") from None
    try:
        limits = Limits(wall_s=args.timeout, cpu_s=args.cpu or args.timeout, memory_mb=args.memory)
    except ValueError as exc:  # name the option, not the Limits field
        flags = {"wall_s": "--timeout", "cpu_s": "--cpu" if args.cpu else "--timeout", "memory_mb": "--memory"}
        text = str(exc)
        for field, flag in flags.items():
            text = text.replace(f"sandbox limit {field}", flag)
        raise CLIError(text) from None
    try:
        with Sandbox(limits, isolation=args.isolation) as sandbox:
            result = sandbox.run(source, call, filename=str(args.file))  # errors name the user's file
    except (ValueError, SandboxError) as exc:
        raise CLIError(str(exc)) from None
    print(json.dumps(result.to_dict(), sort_keys=True))
    return 0 if result.status == "ok" else 1
