"""The ``stsim`` command.

::

    stsim list                                  suites and families
    stsim run SUITE [--solver S] [--n N] [--seed S] [--out DIR] [--data DIR] [--resume DIR]
              [--base-url URL] [--mode da|ci|agentic [--step-budget N]]
              (--solver openai:MODEL | code:PATH | baseline; agentic: geoqa suites, docs/geoqa.md)
    stsim generate SUITE [--n N] [--seed S] [-o FILE] [--prompts-only [--mode da|ci]]
    stsim export SUITE --format chat|jsonl|csv|parquet|hf|inspect -o DIR [--n N] [--seed S]
    stsim score TASKS ANSWERS [--out DIR] [--tolerance X]
    stsim show TASK_ID --tasks FILE [--answers FILE] [--png OUT]
    stsim audit TASKS
    stsim calculus list | show NAME [--format json|gqr] [--out DIR] | witness rcc22 R S T
    stsim compare RUN_A RUN_B [--trim 0.25]
    stsim sandbox run FILE.py [--timeout S] [--memory MB] [--args JSON_FILE|JSON]
                              [--isolation bwrap|process]
    stsim entities info                         the geographic entity store (geoqa suites)
    stsim entities strata [SUITE]               a geoqa suite's questions per income x density stratum

Exit codes: 0 success; 1 the audit found violations, or ``sandbox run``'s outcome is not
``ok`` (the JSON printed says which); 2 bad input, or no namespace isolation without
``--isolation process`` (message on stderr, no traceback); 130 interrupted (files written so
far are kept).

One module per command group, each adding its commands' parsers (``add_NAME``) and running them
(``cmd_NAME``): :mod:`~stsim.cli.run` (run), :mod:`~stsim.cli.generate` (generate, export),
:mod:`~stsim.cli.score` (score, compare), :mod:`~stsim.cli.audit` (audit, fidelity),
:mod:`~stsim.cli.show` (show), :mod:`~stsim.cli.catalogue` (list, calculus, entities),
:mod:`~stsim.cli.sandbox` (sandbox run); what several share is in :mod:`~stsim.cli.common`
(errors, option types, the parser class, output folders) and :mod:`~stsim.cli.conditions`
(suite selection, geoqa conditions).  This module builds the parser and maps errors to exit
codes.
"""
from __future__ import annotations

import argparse
import errno
import sys
from pathlib import Path
from typing import Sequence

from .. import __version__
from ..records import RecordError, UnknownName
from . import audit, catalogue, generate, run, sandbox, score, show
from .common import MAX_WORKERS, CLIError, CommandParser, Interrupted, Parser

__all__ = ["COMMANDS", "MAX_WORKERS", "CLIError", "Interrupted", "build_parser", "main"]

#: command -> (adds its parser to the subparsers, runs it: args -> exit code), in the order
#: ``stsim --help`` lists them
COMMANDS = {"list": (catalogue.add_list, catalogue.cmd_list), "run": (run.add_run, run.cmd_run),
            "generate": (generate.add_generate, generate.cmd_generate),
            "export": (generate.add_export, generate.cmd_export), "show": (show.add_show, show.cmd_show),
            "score": (score.add_score, score.cmd_score),
            "calculus": (catalogue.add_calculus, catalogue.cmd_calculus),
            "audit": (audit.add_audit, audit.cmd_audit), "compare": (score.add_compare, score.cmd_compare),
            "entities": (catalogue.add_entities, catalogue.cmd_entities),
            "fidelity": (audit.add_fidelity, audit.cmd_fidelity),
            "sandbox": (sandbox.add_sandbox, sandbox.cmd_sandbox)}


def build_parser() -> argparse.ArgumentParser:
    """The ``stsim`` parser: ``--version`` and one subcommand per :data:`COMMANDS` entry."""
    ap = Parser(prog="stsim", description="Generate, solve and score verified "
                                "spatial and temporal reasoning benchmarks.",
                epilog="exit codes: 0 ok; 1 `audit` found inconsistent gold answers, `fidelity` flagged a "
                       "feature, or `sandbox run`'s outcome is not ok; 2 bad input (the message says what "
                       "and where), no namespace isolation for untrusted code, or a full or read-only "
                       "disk; 130 interrupted (files written so far are kept; `run --resume DIR` "
                       "continues a run)")
    ap.add_argument("--version", action="version", version=f"stsim {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=CommandParser)
    sub.required = True
    for add, _ in COMMANDS.values():
        add(sub)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``stsim`` command on ``argv`` (default: ``sys.argv[1:]``); returns the exit code
    (module docstring), printing user errors as ``stsim: error: ...`` without a traceback."""
    from ..benchmarks.runner import RunError
    from ..benchmarks.cluster import ChunkFailed, ClusterError
    from ..solvers.base import SolverError
    from ..benchmarks.suites import SuiteError
    from ..qstr.calculus import CalculusError
    from ..qstr.rcc23_witnesses import WitnessFileError
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command][1](args)
    except ChunkFailed as exc:  # the run's files (without these tasks) and summary are written
        print(f"stsim: error: {exc}", file=sys.stderr)
        return 1
    except (CLIError, RecordError, SuiteError, SolverError, RunError, ClusterError) as exc:
        print(f"stsim: error: {exc}", file=sys.stderr)
        return 2
    except UnknownName as exc:  # registries name what is known
        print(f"stsim: error: {exc}", file=sys.stderr)
        return 2
    except (CalculusError, WitnessFileError) as exc:  # e.g. a damaged RCC-22 witness data file
        print(f"stsim: error: {exc}", file=sys.stderr)
        return 2
    except Interrupted as exc:
        print(f"stsim: interrupted: {exc}", file=sys.stderr)
        return 130
    except KeyboardInterrupt as exc:
        where = (f"; files written so far are kept in {exc} (continue with `{run.resume_command(args, exc)}`)"
                 if str(exc) and args.command == "run" else "")
        print(f"stsim: interrupted{where}", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if exc.errno not in _WRITE_ERRNOS:
            raise  # not a full or read-only disk: a bug, shown with its traceback
        print(f"stsim: error: {_cannot_write(args, exc)}", file=sys.stderr)
        return 2


#: write failures that come from the machine, not from stsim: a clear message, exit 2
_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EFBIG, errno.EIO}


def _cannot_write(args, exc: OSError) -> str:
    """The message for a write that failed with ``exc`` (disk full, quota, read-only file
    system, ...): where, why, and for ``stsim run`` that the folder can be resumed."""
    where = exc.filename or getattr(args, "out", None) or "the output"
    text = f"{where}: cannot write ({exc.strerror or exc})"
    if args.command == "run":
        folder = getattr(args, "out", None) or (Path(exc.filename).parent if exc.filename else None)
        if folder is not None:
            text += (f"; what was written so far is kept: once there is room, `{run.resume_command(args, folder)}` "
                     "continues")
    elif args.command in ("generate", "export") and getattr(args, "out", "-") != "-":
        text += f"; {args.out} is incomplete"
    return text

