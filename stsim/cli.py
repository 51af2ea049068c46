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
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import itertools
import json
import math
from collections import Counter
import sys
from pathlib import Path
from typing import Sequence

from . import __version__
from .records import RUN_FOLDER_FILES, RecordError, UnknownName


class CLIError(Exception):
    """A user error: printed as ``stsim: error: ...`` with exit code 2."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C with a message saying what was left behind (printed as ``stsim: interrupted: ...``)."""


def _int_at_least(low: int | None, high: int | None = None, why: str = ""):
    """An argparse type: an integer >= ``low`` (``None``: any) and <= ``high`` (``None``: any;
    ``why`` says what the bound is for); argparse reports a bad one with exit code 2."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if low is not None and value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
        if high is not None and value > high:
            raise argparse.ArgumentTypeError(f"must be at most {high:,}{why}, got {value}")
        return value
    parse.__name__ = "integer" if low is None else f"integer >= {low}"
    return parse


#: the largest ``--workers``: requests in flight to a live model (``stsim.benchmarks.runner``'s
#: ``MAX_WORKERS``, not imported at start-up); solvers that run here get at most 4 per core,
#: checked by the runner (``check_run_options``), for the API as for the CLI
MAX_WORKERS = 256


#: the largest ``--n`` (tasks per family): far above every benchmark's size (STARK: 50), far
#: below what fills the memory or the disk (``--n 99999999999999999999`` ran out of memory)
MAX_N_PER_FAMILY = 1_000_000
_N_WHY = " tasks per family (a larger --n is most likely a typo)"


def _finite_number(low: float, high: float | None = None, *, above: bool = False):
    """An argparse type: a finite number >= ``low`` (> ``low`` when ``above``) and <= ``high``
    (``None``: no bound); NaN and infinities are rejected."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
        if not math.isfinite(value) or (value <= low if above else value < low) or \
                (high is not None and value > high):
            where = f"{'above' if above else 'at least'} {low:g}" + ("" if high is None else f" and at most {high:g}")
            raise argparse.ArgumentTypeError(f"must be a finite number {where}, got {text}")
        return value
    parse.__name__ = "number"
    return parse


def _trim_fraction(text: str) -> float:
    """An argparse type: a trim fraction in [0, 0.5) (NaN rejected)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value < 0.5:  # also false for NaN
        raise argparse.ArgumentTypeError(f"must be in [0, 0.5), got {text}")
    return value


def _out_dir(path: Path, flag: str = "--out") -> Path:
    """Create the output folder ``path`` (and parents); raise :class:`CLIError` naming it when
    it is an existing file or cannot be created."""
    from .benchmarks.runner import RunError, make_out_dir
    try:
        make_out_dir(path, flag)
    except RunError as exc:
        raise CLIError(str(exc)) from None
    return path


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--n", type=_int_at_least(1, MAX_N_PER_FAMILY, _N_WHY), default=None, metavar="N",
                   help="tasks per family (default: the suite's own count)")
    p.add_argument("--seed", type=_int_at_least(0), default=0, help="suite seed (default 0; non-negative)")
    p.add_argument("--family", default=None, metavar="GLOB",
                   help="only families matching this pattern, e.g. 'stark.localization.*'")


def _export_formats() -> dict[str, str]:
    from .benchmarks.export import FORMATS
    return FORMATS


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose ``run`` / ``generate`` / ``export`` help ends with the known suites, looked
    up only when help is shown (loading every suite costs about a second)."""

    def format_help(self) -> str:
        text = super().format_help()
        if self.prog in ("stsim run", "stsim generate", "stsim export"):  # not `stsim sandbox run`
            import textwrap
            from .benchmarks.suites import all_suites
            text += "\n" + textwrap.fill("suites: " + ", ".join(sorted(all_suites())) +
                                         " (`stsim list` describes them)", 78, subsequent_indent="  ",
                                         break_on_hyphens=False) + "\n"
        if self.prog == "stsim run":
            import textwrap
            text += textwrap.fill("solvers (--solver): " + ", ".join(_solver_forms()) +
                                  " (`stsim list` says which families each variant serves)", 78,
                                  subsequent_indent="  ", break_on_hyphens=False) + "\n"
        return text


def _add_cluster(p: argparse.ArgumentParser) -> None:
    p.add_argument("--cluster", default=None, metavar="local:N|tcp://HOST:PORT",
                   help="generate (solve, score) on a Dask cluster: N local worker processes, or a running "
                        "`dask scheduler`; needs stsim[distributed] (docs/distributed.md)")
    p.add_argument("--chunk-size", type=_int_at_least(1), default=None, metavar="K",
                   help="tasks per cluster chunk (default 16)")


def _solver_forms() -> list[str]:
    """Every ``--solver`` spec form, for ``stsim run --help``: the registered solvers, with the
    argument each one takes, and the baseline variants."""
    from .baselines import ALTERNATIVES
    from .solvers.base import SOLVERS, load_builtin_solvers
    load_builtin_solvers()
    variants = sorted({v for alts in ALTERNATIVES.values() for v in alts})
    forms = {"baseline": "baseline (default)", "code": "code:PROGRAM.py|DIR|PROGRAMS.jsonl",
             "openai": "openai:MODEL"}
    out = []
    for name in sorted(SOLVERS):
        out.append(forms.get(name, name))
        if name == "baseline" and variants:
            out.append("baseline:VARIANT (" + ", ".join(variants) + ")")
    return out


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="stsim", description="Generate, solve and score verified "
                                 "spatial and temporal reasoning benchmarks.")
    ap.add_argument("--version", action="version", version=f"stsim {__version__}")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    ls = sub.add_parser("list", help="list suites, families and solvers")
    ls.add_argument("--families", metavar="GLOB", nargs="?", const="*", default=None,
                    help="list every family matching GLOB (default: all) instead of the grouped view")

    suites_help = "the suite to run (the known suites are listed at the end of --help)"
    r = sub.add_parser("run", help="generate (or load), solve, score and report a suite")
    r.add_argument("suite", help=suites_help)
    r.add_argument("--solver", default="baseline",
                   help="solver spec (default: baseline; the forms are listed at the end of --help)")
    _add_common(r)
    r.add_argument("--out", type=Path, default=None, help="output folder (default runs/<suite>-<time>/)")
    r.add_argument("--data", type=Path, default=None, help="data folder or archive for data suites")
    r.add_argument("--max-steps", type=_int_at_least(0), default=-1, metavar="K",
                   help="tracking steps scored per task (default: suite's, 10; 0 = all)")
    r.add_argument("--trim", type=_trim_fraction, default=0.10, help="trim fraction each side (default 0.10)")
    r.add_argument("--workers", type=_int_at_least(1, MAX_WORKERS, " (for any solver; a solver that runs "
                                                   "here: at most 4 per core)"), default=1,
                   help="solver processes on this machine (default 1; at most 4 per core), or for a live "
                        f"model requests in flight (at most {MAX_WORKERS}); with --cluster only for live "
                        "models: requests in flight across the whole cluster")
    _add_cluster(r)
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--explain", action="store_true",
                   help="print the full legend under the table (every column, convention and source), not the short one")
    r.add_argument("--context", choices=("none", "triples-raw", "triples-json", "triples-prose"), default="none",
                   help="geoqa evaluation condition: the gold triples before each question as N-Triples, "
                        "JSON or prose (default none; docs/geoqa.md)")
    r.add_argument("--language", default="en", metavar="CODE",
                   help="geoqa questions in this language (default en; codes: docs/geoqa.md)")
    r.add_argument("--resume", type=Path, default=None, metavar="DIR",
                   help="continue the interrupted run in DIR: tasks with a final answer keep it, only "
                        "the others are solved (options not given are taken from DIR/run.json)")
    r.add_argument("--sandbox", choices=("fresh", "zygote"), default="zygote",
                   help="for code: and openai --mode ci: reused pre-imported zygote sandboxes forking "
                        "one child per program (default, about 10x faster; programs share a sandbox "
                        "one after another, with every leftover process killed and /tmp emptied in "
                        "between), or a fresh sandbox per program")
    r.add_argument("--isolation", choices=("bwrap", "process"), default="bwrap",
                   help="for code: and openai --mode ci: namespace isolation with bubblewrap (default; "
                        "refuses to start where it is unavailable), or the explicit, weaker process "
                        "mode (recorded in answers.jsonl, summary.json and the report)")
    m = r.add_argument_group("live models (--solver openai:MODEL)")
    m.add_argument("--base-url", default=None, metavar="URL",
                   help="OpenAI-compatible endpoint root (default https://api.openai.com/v1)")
    m.add_argument("--mode", choices=("da", "ci", "agentic"), default="da",
                   help="direct answer or code interpreter (STARK Table 5; default da); agentic: geoqa "
                        "suites only, code runs in the sandbox with the entity store mounted read-only "
                        "and the tool API geotools importable (docs/geoqa.md)")
    m.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                   help="environment variable holding the API key (default OPENAI_API_KEY)")
    m.add_argument("--temperature", type=_finite_number(0.0), default=0.0, help="sampling temperature sent to the endpoint (default 0)")
    m.add_argument("--model-seed", type=int, default=0, help="sampling seed sent to the endpoint")
    m.add_argument("--max-tokens", type=_int_at_least(1), default=None,
                   help="completion tokens per reply sent to the endpoint (default: the endpoint's)")
    m.add_argument("--request-timeout", type=_finite_number(0.0, 86400.0, above=True), default=120.0, metavar="S",
                   help="seconds to wait for one reply (default 120)")
    m.add_argument("--max-turns", type=_int_at_least(1), default=5, help="model replies per answer in CI mode")
    m.add_argument("--step-budget", type=_int_at_least(1), default=None, metavar="N",
                   help="--mode agentic: model replies per question, code replies included (default 6); "
                        "when all N hold code the answer is budget_exhausted (not a refusal)")
    m.add_argument("--structured", action="store_true",
                   help="send each task's answer JSON Schema as response_format (structured output; "
                        "geoqa tasks, direct-answer mode)")
    m.add_argument("--cache", type=Path, default=None, metavar="FILE",
                   help="response cache JSONL (default OUT/llm_cache.jsonl); rerun to resume")

    g = sub.add_parser("generate", help="write a suite's tasks as JSONL")
    g.add_argument("suite", help=suites_help.replace("run", "write"))
    _add_common(g)
    g.add_argument("--data", type=Path, default=None, help="data folder or archive for data suites")
    _add_cluster(g)
    g.add_argument("-o", "--out", default="-", help="output file (default: standard output)")
    g.add_argument("--context", choices=("none", "triples-raw", "triples-json", "triples-prose"), default="none",
                   help="geoqa evaluation condition (as for run)")
    g.add_argument("--language", default="en", metavar="CODE",
                   help="geoqa questions in this language, or 'all' (each task once per language); "
                        "default en; codes: docs/geoqa.md")
    g.add_argument("--prompts-only", action="store_true",
                   help="write only what a model is shown: id, family, prompt, answer format, step "
                        "prompts and the exact chat messages the live-model solver sends (as `export "
                        "--format chat`); no gold answers, inputs or metadata; score replies against "
                        "the full file")
    g.add_argument("--mode", choices=("da", "ci", "agentic"), default="da",
                   help="with --prompts-only: system prompt of direct answer, code interpreter, or the geoqa "
                        "agentic tier (tool API documentation and step budget; geoqa suites) (default da)")
    g.add_argument("--step-budget", type=_int_at_least(1), default=None, metavar="N",
                   help="with --prompts-only --mode agentic: the step budget the system prompt names (default 6)")
    g.add_argument("--max-steps", type=_int_at_least(0), default=-1, metavar="K",
                   help="with --prompts-only: tracking steps asked (default: suite's, 10; 0 = all)")
    g.add_argument("--quiet", action="store_true",
                   help="no progress bar (shown on a terminal when -o is a file)")

    e = sub.add_parser("export", help="write a suite's tasks for other tools (chat messages, datasets, ...)")
    e.add_argument("suite", help=suites_help.replace("run", "export"))
    _add_common(e)
    e.add_argument("--data", type=Path, default=None, help="data folder or archive for data suites")
    e.add_argument("--format", required=True, choices=_export_formats(), metavar="FORMAT",
                   help="one of: " + "; ".join(f"{k}: {v}" for k, v in _export_formats().items()))
    e.add_argument("-o", "--out", type=Path, required=True, metavar="DIR", help="output folder")
    e.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal)")
    e.add_argument("--mode", choices=("da", "ci"), default="da",
                   help="chat/inspect: direct answer or code interpreter system prompt (default da)")
    e.add_argument("--max-steps", type=_int_at_least(0), default=-1, metavar="K",
                   help="chat/inspect: tracking steps asked (default: suite's, 10; 0 = all)")

    sh = sub.add_parser("show", help="one task: prompt, gold, baseline answer, how a reply was read; "
                        "--png draws the scenario")
    sh.add_argument("task_id", help="the task's id, as in the tasks file (e.g. quickstart/stark.tracking.range/000000)")
    sh.add_argument("--tasks", type=Path, required=True, metavar="FILE", help="tasks JSONL holding the task")
    sh.add_argument("--answers", type=Path, default=None, metavar="FILE",
                    help="answers JSONL: show how each reply to this task was read and scored")
    sh.add_argument("--png", type=Path, default=None, metavar="OUT", help="draw the scenario into this PNG file")

    s = sub.add_parser("score", help="score an answers JSONL against a tasks JSONL")
    s.add_argument("tasks", type=Path, help="the full tasks JSONL (stsim generate -o, or a run's tasks.jsonl)")
    s.add_argument("answers", type=Path, help="one JSON object per line: {\"task_id\", \"step\", \"text\"} "
                   "(a model's reply) or {\"task_id\", \"step\", \"value\"} (docs/answer-formats.md)")
    s.add_argument("--out", type=Path, default=None, help="also write scores.jsonl and summary.json here")
    s.add_argument("--cluster", default=None, metavar="local:N|tcp://HOST:PORT",
                   help="score on a Dask cluster in chunks of tasks (docs/distributed.md)")
    s.add_argument("--max-steps", type=_int_at_least(0), default=10, metavar="K",
                   help="tracking steps scored per task (default 10; 0 = all)")
    s.add_argument("--trim", type=_trim_fraction, default=0.10, help="trim fraction each side (default 0.10)")
    s.add_argument("--explain", action="store_true",
                   help="print the full legend under the table (every column, convention and source), not the short one")
    s.add_argument("--tolerance", type=float, default=None, metavar="X",
                   help="numeric items count as correct when their error is at most X")
    s.add_argument("--rubric", choices=("default", "stark-legacy", "qstrbench-published"), default="default",
                   help="how reply texts are read: default (our strict readers, docs/answer-formats.md); "
                        "stark-legacy (STARK's released reader: first block, signs dropped, unreadable -> "
                        "[5, 5] guess) for STARK tasks; qstrbench-published (QSTRBench's bin/process.py: "
                        "strict, Jaccard and guess-normalised scores) for QSTRBench tasks")

    c = sub.add_parser("calculus", help="list the qualitative calculi or print one's tables")
    c.add_argument("action", choices=["list", "show", "witness"],
                   help="witness: draw three regions realising R(x,y), S(y,z), T(x,z) (RCC-22)")
    c.add_argument("name", nargs="?", help="calculus for `show` (e.g. rcc8, IA, RCC-22)")
    c.add_argument("relations", nargs="*", metavar="R S T", help="for `witness`: three relation names")
    c.add_argument("--format", choices=["json", "gqr"], default=None, help="for `show` (default json)")
    c.add_argument("--out", type=Path, default=None,
                   help="with --format gqr: write a GQR data folder: DIR/NAME.spec and "
                        "DIR/NAME/calculus/NAME.comp, NAME.conv")
    a = sub.add_parser("audit", help="check every gold answer against its readings and noise model, "
                       "or (relation tasks) against shapely / Allen on the printed numbers")
    a.add_argument("tasks", type=Path, help="the full tasks JSONL (stsim generate -o, or a run's tasks.jsonl)")
    a.add_argument("--limit", type=_int_at_least(0), default=50, help="violations to print (default 50)")

    c = sub.add_parser("compare", help="per family, run B against run A: relative change in trimmed RMSE "
                       "or accuracy difference, each with a paired bootstrap 95%% CI")
    c.add_argument("run_a", type=Path, help="run folder (or scores.jsonl), e.g. direct answer")
    c.add_argument("run_b", type=Path, help="run folder (or scores.jsonl), e.g. code interpreter")
    c.add_argument("--trim", type=_trim_fraction, default=0.25, help="fraction trimmed each side (STARK §4.4: 0.25)")
    c.add_argument("--json", action="store_true", help="print JSON instead of a table")

    en = sub.add_parser("entities", help="the offline geographic entity store of the geoqa suites")
    ens = en.add_subparsers(dest="entities_command", metavar="ACTION")
    ens.required = True
    ens.add_parser("info", help="build it if needed; print sources (versions, licences, sha256) and counts")
    st = ens.add_parser("strata", help="questions of a geoqa suite per income x density stratum, and the "
                        "false-premise share (docs/geoqa.md, 'Strata')")
    st.add_argument("suite", nargs="?", default="geoqa-small", help="a geoqa suite (default geoqa-small)")
    st.add_argument("--family", default=None, metavar="GLOB", help="only families matching this pattern")
    st.add_argument("--json", action="store_true", help="print JSON instead of a table")
    st.add_argument("--languages", action="store_true",
                    help="also count per language the translated templates and entity labels (generates "
                         "every task once per language: slower)")

    fi = sub.add_parser("fidelity", help="compare a generated suite's tasks with the released ones, "
                        "feature by feature (two-sample KS, Benjamini-Hochberg)",
                        description="Generate N tasks per family of SUITE, load the released counterparts "
                        "from --data, and compare per-task features (sensor geometry, gold position, noise, "
                        "readings per step, trajectory shape, feasible region, emission times) with "
                        "two-sample Kolmogorov-Smirnov tests; a feature is flagged (*) when its "
                        "Benjamini-Hochberg adjusted p is below --alpha. Exit 1 when any feature is "
                        "flagged. See docs/stark-tier1.md, 'Fidelity report'.")
    fi.add_argument("suite", help="a generated suite with released counterparts (stark-tier1, quickstart)")
    fi.add_argument("--data", type=Path, required=True, help="released data: folder or data_final.tar.gz")
    fi.add_argument("--n", type=_int_at_least(2, MAX_N_PER_FAMILY, _N_WHY), default=200, metavar="N",
                    help="generated tasks per family (default 200)")
    fi.add_argument("--seed", type=_int_at_least(0), default=0, help="suite seed (default 0)")
    fi.add_argument("--family", default=None, metavar="GLOB", help="only families matching this pattern")
    fi.add_argument("--alpha", type=float, default=0.05, help="flag when the BH-adjusted p < ALPHA (default 0.05)")
    fi.add_argument("--json", action="store_true", help="print JSON instead of tables")

    sb = sub.add_parser("sandbox", help="run a model-written solver() program in the sandbox")
    sbs = sb.add_subparsers(dest="sandbox_command", metavar="ACTION")
    sbs.required = True
    sr = sbs.add_parser("run", help="run FILE.py's solver() once and print one JSON object")
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
    return ap


def _cmd_compare(args) -> int:
    from .scoring.compare import compare_runs, family_keys, format_comparison, run_mismatches
    if not 0 <= args.trim < 0.5:
        raise CLIError(f"--trim must be in [0, 0.5), got {args.trim}")
    rows = compare_runs(args.run_a, args.run_b, args.trim)
    for w in run_mismatches(args.run_a, args.run_b, family_keys(args.run_a, args.run_b)):
        print(f"stsim: warning: {w}", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=2, sort_keys=True))
    else:
        print(f"A = {args.run_a}\nB = {args.run_b}\n")
        print(format_comparison(rows, args.trim))
        if any(r["kind"] == "numeric" for r in rows.values()):
            print(f"\nchange = (RMSE B - RMSE A) / RMSE A, with {args.trim:.0%} of each run's errors trimmed each "
                  f"side (RMSE t{100 * args.trim:g}%; STARK §4.4; `stsim run` trims 10 %); negative: B is better.")
        if any(r["kind"] == "categorical" for r in rows.values()):
            print("\nacc = accuracy, failures counting as wrong; B - A > 0: B is better.")
        print("95% CI: paired bootstrap percentile interval (1000 resamples of the items both runs scored).")
    return 0


def _is_file(text: str) -> bool:
    """Whether ``text`` names an existing file; False for text no path can be (inline JSON of
    more than 255 bytes is ENAMETOOLONG, which ``Path.exists`` raises instead of answering)."""
    try:
        return Path(text).exists()
    except (OSError, ValueError):  # ValueError: an embedded NUL byte
        return False


def _cmd_sandbox(args) -> int:
    from .sandbox.isolation import Limits, Sandbox, SandboxError
    from .sandbox.call import check_call_args, check_solver_form, solver_parameters
    try:
        source = args.file.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CLIError(f"{args.file}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CLIError(f"{args.file}: cannot read ({exc})") from None
    call = None
    if args.args is not None:
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
            result = sandbox.run(source, call)
    except (ValueError, SandboxError) as exc:
        raise CLIError(str(exc)) from None
    print(json.dumps(result.to_dict(), sort_keys=True))
    return 0 if result.status == "ok" else 1


def _cmd_list(args) -> int:
    from .baselines import ALTERNATIVES
    from .solvers.base import SOLVERS, load_builtin_solvers
    from .benchmarks.suites import all_suites
    from .registry import FAMILIES, load_families
    load_families()
    load_builtin_solvers()
    pattern = args.families
    if pattern:
        from fnmatch import fnmatch
        if not any(fnmatch(n, pattern) for n in FAMILIES):
            raise CLIError(f"no family matches {pattern!r}")
    if not pattern:
        suites = all_suites()
        w = max(len(n) for n in suites)
        print("Suites:")
        for name, s in sorted(suites.items()):
            print(f"  {name:<{w}}  {s.description}")
        print()
    print("Families" + (f" matching {pattern!r}:" if pattern else
                        " (grouped; `stsim list --families GLOB` lists them one by one):"))
    if pattern:
        from fnmatch import fnmatch
        chosen = {n: f for n, f in FAMILIES.items() if fnmatch(n, pattern)}
        fw = max(len(n) for n in chosen)
        for name, f in sorted(chosen.items()):
            print(f"  {name:<{fw}}  [{f.answer_format}] {f.description}")
    else:
        groups: dict[str, list[str]] = {}
        for name in FAMILIES:
            parts = name.split(".")
            groups.setdefault(".".join(parts[:2]) if len(parts) > 2 else parts[0], []).append(name)
        gw = max(len(g) for g in groups)
        for g, names in sorted(groups.items()):
            shown = ", ".join(n[len(g) + 1:] or n for n in sorted(names)[:6])
            more = f", ... ({len(names)} in all)" if len(names) > 6 else ""
            print(f"  {g + '.*':<{gw + 2}}  {shown}{more}")
    if pattern:
        return 0
    print("\nSolvers: " + ", ".join(sorted(SOLVERS)))
    variants: dict[str, set[str]] = {}
    for fam, alts in ALTERNATIVES.items():
        for v in alts:
            variants.setdefault(v, set()).add(fam)
    for v, fams in sorted(variants.items()):
        print(f"  baseline:{v:<12} {len(fams)} famil{'y' if len(fams) == 1 else 'ies'}, e.g. {sorted(fams)[0]}")
    return 0


def _context(mode: str, language: str = "en"):
    """The task transform of ``--context MODE`` and ``--language CODE`` (None when neither
    changes anything).  CLIError on an unknown language."""
    from .geoqa.languages import LANGUAGES
    if language not in LANGUAGES:
        raise CLIError(f"--language {language!r}: unknown; known: {', '.join(LANGUAGES)} (or 'all' for generate)")
    if mode == "none" and language == "en":
        return None
    from .generators.geoqa_conditions import with_context
    from .generators.geoqa_languages import with_language
    return lambda t: with_context(with_language(t, language), mode)


def _resume_options(args) -> None:
    """``--resume DIR``: options left at their defaults take the values recorded in
    DIR/run.json; ``--out``, when given, must be DIR."""
    if args.out is not None and args.out != args.resume:
        raise CLIError(f"--resume {args.resume} writes into that folder; drop --out {args.out}")
    args.out = args.resume
    try:
        rec = json.loads((args.resume / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # the runner names what is wrong with the folder
    defaults = build_parser().parse_args(["run", args.suite])
    for key, attr in (("solver", "solver"), ("seed", "seed"), ("n_per_family", "n"),
                      ("families_filter", "family"), ("mode", "mode"), ("context", "context"),
                      ("language", "language"), ("structured", "structured")):
        if getattr(args, attr) == getattr(defaults, attr) and rec.get(key) is not None:
            setattr(args, attr, rec[key])
    if args.step_budget is None and rec.get("step_budget") is not None:
        args.step_budget = rec["step_budget"]
    if args.max_steps == defaults.max_steps and "max_steps" in rec:
        args.max_steps = 0 if rec["max_steps"] is None else rec["max_steps"]
    if args.data is None and rec.get("data") is not None:
        args.data = Path(rec["data"])


def _keep_other_run(out: Path, this: dict) -> None:
    """Refuse (exit 2) an ``--out`` folder that holds the run of another suite, solver, seed,
    ``--n``, ``--family``, ``--data``, ``--context``, ``--language`` or ``--structured``: its
    answers.jsonl, scores.jsonl and summary.json would be overwritten.  The folder's
    summary.json is read, else (a run that was interrupted) its run.json.  The same run again (a
    live model resuming from its cache) is allowed.  A folder that is not a run's (no run.json,
    no summary.json naming a suite: e.g. `stsim score --out`) but holds a file of a name in
    :data:`stsim.records.RUN_FOLDER_FILES` is refused too."""
    from .benchmarks.runner import CONDITION_DEFAULTS
    old = None
    for name in ("summary.json", "run.json"):
        try:
            old = json.loads((out / name).read_text(encoding="utf-8"))
            break
        except (OSError, ValueError):
            continue
    if not isinstance(old, dict) or "suite" not in old:
        # not a `stsim run` folder (e.g. `stsim score --out`, or files of one's own): a run
        # would overwrite whichever of its files have the names a run writes
        mine = [n for n in RUN_FOLDER_FILES if (out / n).exists()]
        if mine:
            raise CLIError(f"--out {out}: holds {', '.join(mine)} that no `stsim run` wrote there (no run.json"
                           f"{'' if not isinstance(old, dict) else '; its summary.json names no suite'}); "
                           "running here would overwrite them: give another --out, or remove them")
        return
    old = {**CONDITION_DEFAULTS, **old}  # written before the conditions were recorded: the defaults
    differ = [k for k, v in this.items() if k in old and old[k] != v]
    if differ:
        what = ", ".join(f"{k} {old[k]!r} (now {this[k]!r})" for k in differ)
        raise CLIError(f"--out {out}: holds another run ({what}); running here would overwrite its "
                       "answers.jsonl, scores.jsonl and summary.json: give another --out, or remove the folder")


def _check_agentic(args) -> None:
    """Bad combinations of ``--mode agentic`` / ``--step-budget`` (CLIError, exit 2)."""
    agentic = args.mode == "agentic"
    if args.step_budget is not None and not agentic:
        raise CLIError("--step-budget bounds the agentic tier: use it with --mode agentic")
    if args.mode != "da" and not args.solver.startswith("openai"):
        raise CLIError(f"--mode {args.mode} needs a live model (--solver openai:MODEL); "
                       f"--solver {args.solver} does not talk to a model")
    if not agentic:
        return
    if args.structured:
        raise CLIError("--structured is for direct answers (--mode da); the agentic tier's final answer is free text")
    if args.cluster is not None:
        raise CLIError("--mode agentic cannot run on --cluster yet (the tool sandbox is local); run it locally")
    _geoqa_only(args)


def _selected_families(args) -> list[str] | None:
    """The families of ``args.suite`` matching ``--family`` (``None`` for an unknown suite,
    which the runner names, or a data suite that declares none)."""
    from .benchmarks.suites import SuiteError, get_suite
    try:
        return get_suite(args.suite).family_names(args.family)
    except SuiteError:
        return None


def _geoqa_only(args) -> None:
    """CLIError unless every family of ``args.suite`` (matching ``--family``) is a geoqa family."""
    families = _selected_families(args)
    other = [f for f in families or [] if not f.startswith("geoqa.")]
    if other:
        raise CLIError(f"--mode agentic: the tool API serves geoqa suites only; suite {args.suite!r} has "
                       f"{len(other)} other famil{'y' if len(other) == 1 else 'ies'} ({', '.join(other[:3])}"
                       f"{', ...' if len(other) > 3 else ''}); use a geoqa suite (geoqa, geoqa-small, geoqa-mini)")


def _code_formats_apply(args) -> None:
    """``--solver code:...`` on families whose answers a program cannot return (a ``solver()``
    value is numbers only: relation names, directions, geoqa answers are not): CLIError (exit 2)
    when no selected family can be answered, else a warning naming those that cannot
    (:func:`stsim.solvers.code.check_code_families`; ``run()`` refuses the first case too)."""
    from .solvers.base import SolverError
    from .solvers.code import check_code_families
    if not args.solver.startswith("code:"):
        return
    try:
        warning = check_code_families(args.solver, _selected_families(args))
    except SolverError as exc:
        raise CLIError(str(exc)) from None
    if warning is not None:
        print(f"stsim: warning: {warning}", file=sys.stderr)


def _geoqa_conditions_apply(args) -> None:
    """CLIError (exit 2) when ``--context`` or ``--language`` is set for a selection with no
    geoqa family: the transforms leave every other task unchanged, so the option would be
    silently ignored while run.json, summary.json and the report header claim it."""
    from .benchmarks.suites import SUITES
    given = [f"--{k} {v}" for k, v, default in (("context", args.context, "none"),
                                                ("language", args.language, "en")) if v != default]
    if not given:
        return
    families = _selected_families(args)
    if families is None or not families or any(f.startswith("geoqa.") for f in families):
        return  # a data suite without declared families, or --family matching none: named later
    geoqa = sorted(n for n, su in SUITES.items() if any(f.startswith("geoqa.") for f in su.families))
    raise CLIError(f"{' and '.join(given)}: an evaluation condition of geoqa questions only; suite "
                   f"{args.suite!r}{'' if args.family is None else f' (--family {args.family})'} has no "
                   f"geoqa family, so it would be ignored; the geoqa suites: {', '.join(geoqa)}")


def _cmd_run(args) -> int:
    from .scoring.report import format_table, legend, short_legend
    from .benchmarks.runner import run
    if args.resume is not None:
        _resume_options(args)
    max_steps = None if args.max_steps == 0 else args.max_steps
    options: dict = {}
    _check_agentic(args)
    _geoqa_conditions_apply(args)
    _code_formats_apply(args)
    from .benchmarks.runner import RunError, check_run_options
    try:  # before any folder is touched: --workers above 4 per core for a solver that runs here
        check_run_options(seed=args.seed, trim=args.trim, workers=args.workers, max_steps=max_steps,
                          solver_spec=args.solver, solver_options={"mode": args.mode})
    except RunError as exc:
        raise CLIError(str(exc)) from None
    if args.solver.startswith("openai"):
        options.update(base_url=args.base_url, mode=args.mode, api_key_env=args.api_key_env,
                       temperature=args.temperature, seed=args.model_seed, max_tokens=args.max_tokens,
                       timeout_s=args.request_timeout, max_turns=args.max_turns, cache=args.cache,
                       concurrency=max(1, args.workers), structured=args.structured)
        if args.step_budget is not None:
            options["step_budget"] = args.step_budget
    if args.solver.startswith(("openai", "code")):
        options["sandbox_reuse"] = args.sandbox == "zygote"
        options["isolation"] = args.isolation
        options["concurrency"] = max(1, args.workers)
    if args.out is not None and args.resume is None:  # a resume checks DIR/run.json instead
        _keep_other_run(args.out, {"suite": args.suite, "solver": args.solver, "seed": args.seed,
                                   "n_per_family": args.n, "families_filter": args.family,
                                   "data": None if args.data is None else str(args.data),
                                   "context": args.context, "language": args.language,
                                   "structured": bool(args.structured) and args.solver.startswith("openai")})
    if args.out is None:  # named here, so that an error writing it (a full disk) can name it
        from .benchmarks.runner import default_out_dir
        args.out = default_out_dir(args.suite)
    summary = run(args.suite, args.solver, n=args.n, seed=args.seed, out_dir=args.out, data=args.data,
                  max_steps=max_steps, trim=args.trim, workers=args.workers, progress=not args.quiet and sys.stderr.isatty(),
                  only=args.family, solver_options=options or None, transform=_context(args.context, args.language),
                  resume=args.resume is not None, cluster=args.cluster, chunk_size=args.chunk_size,
                  condition={"context": args.context, "language": args.language})
    for w in summary.get("warnings", []):
        print(f"stsim: warning: {w}", file=sys.stderr)
    seed = f"seed {summary['seed']}" if summary.get("data") is None else f"data {summary['data']}"
    cond = "".join(f"  {k} {summary[k]}" for k, default in (("context", "none"), ("language", "en"))
                   if summary.get(k, default) != default) + ("  structured" if summary.get("structured") else "")
    print(f"suite {summary['suite']}  solver {summary['solver']}  {seed}{cond}  "
          f"tasks {summary['n_tasks']}  ({summary['wall_s']:.1f} s)")
    if "resumed" in summary:
        print(f"resumed {summary['out_dir']}: {summary['resumed']['reused_tasks']} task(s) kept, "
              f"{summary['resumed']['solved_tasks']} solved now")
    analyses = list(summary.get("analyses", {}).values())
    # a benchmark whose own table covers every task (geoqa: EM / NE per SFID and format) prints
    # that table instead of the per-family one
    own_table = bool(analyses) and all(r.get("replaces_family_table") for r in analyses) and \
        sum(r["n_tasks"] if "n_tasks" in r else r["overall"]["n"] for r in analyses) == summary["n_tasks"]
    if not own_table:
        print(format_table(summary["families"]))
    if summary.get("isolation"):
        print(f"sandbox isolation: {summary['isolation']}"
              + (f"\nwarning: {summary['isolation_note']}" if summary.get("isolation_note") else ""))
    for result in analyses:
        print(result["headline"])
    if summary.get("usage"):
        u = summary["usage"]
        print(f"usage: {u['model_calls']} model calls, {u['prompt_tokens']} prompt + {u['completion_tokens']} "
              f"completion tokens" + (f", {u['code_runs']} code runs" if u["code_runs"] else "")
              + (f", {u['tool_calls']} tool calls" if u["tool_calls"] else "")
              + (f", step budget used up on {u['budget_exhausted']}" if u["budget_exhausted"] else "")
              + " (summary.json: usage)")
    recoverable = sum(r.get("lenient_recoverable", 0) for r in summary["families"].values())
    if recoverable:
        print(f"strictness: a lenient reader (words dropped: '4.49 s', 'x = 9.2, y = 1.6') would have read "
              f"{recoverable} of the format failures (per family: 'lenient_recoverable' in summary.json); "
              "they stay failures.")
    dead = [f for f, r in summary["families"].items() if r["n"] and r["failures"] == r["n"]]
    if dead:
        print(f"\nnote: solver {summary['solver']} gave no usable answer for {len(dead)} famil"
              f"{'y' if len(dead) == 1 else 'ies'} ({', '.join(dead[:4])}{', ...' if len(dead) > 4 else ''}); "
              "the reason of each is in answers.jsonl ('detail').")
    if not own_table:
        print("\n" + (legend(summary["families"]) if args.explain else
                      short_legend(summary["families"], f"add --explain (stsim run {args.suite} --explain)")))
    if "solver_variant_families" in summary:
        used = set(summary["solver_variant_families"])
        others = sorted(f for f in summary["families"] if f not in used)
        if others:
            print(f"'{summary['solver']}' has no variant for {len(others)} famil"
                  f"{'y' if len(others) == 1 else 'ies'} ({', '.join(others[:4])}{', ...' if len(others) > 4 else ''}): "
                  f"{'it was' if len(others) == 1 else 'they were'} solved by the family's default baseline "
                  "(summary.json: solver_variant_families).")
    if summary["solver"] == "baseline":
        print("'baseline' is the first-principle solver of each family (methods and their sources: "
              "docs/stark-tier1.md, docs/qstr.md, docs/cardinal.md, docs/geoqa.md; `stsim list` names the variants).")
    print(f"Wrote {summary['out_dir']}/ ({', '.join(_written(Path(summary['out_dir'])))})")
    return 0


def _written(out: Path) -> list[str]:
    """Every file and folder in a run's output folder, sorted (folders with a trailing /)."""
    try:
        return sorted(p.name + ("/" if p.is_dir() else "") for p in out.iterdir())
    except OSError:
        return []


def _refuse_run_folder(folder: Path, flag: str, doing: str, replaces: str) -> None:
    """Raise :class:`CLIError` when ``folder`` holds a `stsim run` (its run.json): ``doing``
    there would replace ``replaces`` of that run (whose answers may be a live model's, paid
    for).  Only ``stsim run`` itself (the same run again, or ``--resume``) writes there."""
    if (folder / "run.json").is_file():
        raise CLIError(f"{flag} {folder}: holds a `stsim run` (run.json); {doing} into it would replace "
                       f"{replaces}; choose another folder")


def _open_output(path: Path):
    """Open ``path`` for writing; raise :class:`CLIError` naming it when that is impossible
    (a folder, a missing parent folder, no permission) or when it is an existing file of a
    `stsim run` folder (:func:`_refuse_run_folder`)."""
    if path.is_dir():
        raise CLIError(f"-o {path}: is a folder; give a file name, e.g. {path / 'tasks.jsonl'}")
    if not path.parent.is_dir():
        raise CLIError(f"-o {path}: folder {path.parent} does not exist")
    if path.exists() and (path.parent / "run.json").is_file():
        raise CLIError(f"-o {path}: is a file of the `stsim run` in {path.parent} (run.json); writing here "
                       "would replace it; choose another file")
    try:
        return open(path, "w", encoding="utf-8", newline="\n")
    except OSError as exc:
        raise CLIError(f"-o {path}: cannot write ({exc.strerror or exc})") from None


def _cmd_generate(args) -> int:
    from .benchmarks.suites import get_suite
    suite = get_suite(args.suite)
    if args.step_budget is not None and not (args.prompts_only and args.mode == "agentic"):
        raise CLIError("--step-budget names the agentic tier's budget in the prompt: use it with "
                       "--prompts-only --mode agentic")
    if args.mode == "agentic":
        _geoqa_only(args)
    _geoqa_conditions_apply(args)
    langs = None
    if args.language == "all":
        from .geoqa.languages import LANGUAGES
        langs = list(LANGUAGES)
    transforms = [_context(args.context, lang) for lang in (langs or [args.language])]
    tasks = suite.tasks(n=args.n, seed=args.seed, data=args.data, only=args.family)
    stack = contextlib.ExitStack()
    stream = None
    if args.cluster is not None:
        from .benchmarks.cluster import Cluster, ChunkStream, Work, chunks_of, check_cluster_spec
        check_cluster_spec(args.cluster)
        if suite.loader is not None:
            raise CLIError(f"--cluster: suite {args.suite!r} is read from --data on this machine; "
                           "there is nothing to generate on a cluster (stsim run --cluster ships its tasks)")
        next(tasks, None)  # checks --family before a cluster starts
        cl = stack.enter_context(Cluster(args.cluster))
        keys = suite.task_keys(args.n, args.family)
        stream = ChunkStream(cl.client, chunks_of(suite=args.suite, seed=args.seed, keys=keys,
                                                  size=args.chunk_size or 16), Work(None),
                             window=2 * cl.n_threads() + 1)
        tasks = (t for t, _, _ in stream)
    if langs is not None:  # every task once per language, languages together per task
        tasks = (f(t) if f is not None else t for t in tasks for f in transforms)
    elif transforms[0] is not None:
        tasks = map(transforms[0], tasks)
    steps = suite.max_steps if args.max_steps == -1 else (args.max_steps or None)
    # tasks to write, for the progress bar: unknown (None) for a suite read from --data
    total = None if suite.loader is not None else \
        suite.count_tasks(args.n, args.family) * (len(langs) if langs else 1)
    seen: list = []
    if args.language != "en":  # per-language translated shares, reported on stderr
        tasks = _tee(tasks, seen)
    with stack:
        rc = _write_tasks(args, tasks, stream, steps, total)
    if seen:
        _report_languages(seen)
    return rc


def _tee(tasks, seen: list):
    """``tasks`` unchanged; each geoqa task's family and language inputs (not the whole task)
    appended to ``seen``."""
    keep = ("language", "language_fallback", "labels")
    for t in tasks:
        if t.family.startswith("geoqa."):
            seen.append({"family": t.family, "inputs": {k: t.inputs[k] for k in keep if k in t.inputs}})
        yield t


def _report_languages(rows: list) -> None:
    """One stderr line per language: tasks, share of questions and of entity labels translated
    (:func:`stsim.geoqa.languages.translated_share`)."""
    from .geoqa.languages import translated_share
    for lang, s in translated_share(rows).items():
        labels = "n/a" if s["label_share"] is None else f"{100 * s['label_share']:.1f} %"
        print(f"language {lang}: {s['tasks']} geoqa tasks, questions translated "
              f"{100 * s['question_share']:.1f} %, entity labels translated {labels} "
              f"({s['labels_translated']}/{s['labels_total']})", file=sys.stderr)


def _write_tasks(args, tasks, stream, steps, total: int | None = None) -> int:
    """Write generated tasks (or, with ``--prompts-only``, their chat records) to ``-o``, with a
    progress bar on a terminal (of ``total`` tasks when known) unless ``--quiet`` or standard
    output."""
    from .generators.chat_prompts import chat_record
    from .records import dumps
    tasks = iter(tasks)
    first = next(tasks, None)  # a bad --family or --data fails before -o is opened (and emptied)
    if first is None:
        raise CLIError(f"no task of suite {args.suite!r} to generate")
    tasks = itertools.chain([first], tasks)
    budget = {"step_budget": args.step_budget} if args.step_budget is not None else {}
    if args.out != "-" and args.out.endswith("/") and not Path(args.out).is_dir():
        # Path() drops the slash: 'runs/new/' was written as a file named 'new'
        raise CLIError(f"-o {args.out}: ends with '/', a folder, and no such folder exists; give a file "
                       f"name, e.g. {Path(args.out) / 'tasks.jsonl'}")
    fh = sys.stdout if args.out == "-" else _open_output(Path(args.out))
    count = 0
    from tqdm import tqdm
    bar = tqdm(total=total, desc=f"generate {args.suite}", unit="task", leave=False,
               disable=fh is sys.stdout or args.quiet or not sys.stderr.isatty())
    try:
        for t in tasks:
            fh.write(dumps(chat_record(t, args.mode, steps, **budget) if args.prompts_only else t.to_dict()) + "\n")
            count += 1
            bar.update()
    except KeyboardInterrupt:
        if fh is sys.stdout:
            raise
        raise Interrupted(f"{args.out} is partial: {count} task(s) written before the interrupt") from None
    finally:
        bar.close()
        if fh is not sys.stdout:
            fh.close()
    if stream is not None and stream.failed:
        from .benchmarks.cluster import ChunkFailed
        raise ChunkFailed(stream.failed, stream.errors, args.out)
    if args.out != "-":
        print(f"wrote {count} tasks to {args.out}", file=sys.stderr)
    return 0


def _cmd_export(args) -> int:
    from .benchmarks import export
    from .benchmarks.suites import get_suite
    suite = get_suite(args.suite)
    steps = suite.max_steps if args.max_steps == -1 else (args.max_steps or None)
    tasks = suite.tasks(n=args.n, seed=args.seed, data=args.data, only=args.family)
    first = next(tasks, None)  # a bad --data or --family fails before the folder is made
    if first is None:
        raise CLIError(f"no task of suite {args.suite!r} to export")
    tasks = itertools.chain([first], tasks)
    _refuse_run_folder(args.out, "-o", "exporting", "that run's tasks.jsonl or mix other files with its own")
    _out_dir(args.out, "-o")
    from tqdm import tqdm
    total = None if suite.loader is not None else suite.count_tasks(args.n, args.family)
    tasks = tqdm(tasks, total=total, desc=f"export {args.suite}", unit="task", leave=False,
                 disable=args.quiet or not sys.stderr.isatty())
    try:
        written = export.export(args.format, tasks, args.out, suite=args.suite, seed=args.seed, n=args.n,
                                mode=args.mode, max_steps=steps, family=args.family)
    except export.ExportError as exc:
        raise CLIError(str(exc)) from None
    except KeyboardInterrupt:
        raise Interrupted(f"{args.out} is partial") from None
    finally:
        tasks.close()
    print(f"wrote {', '.join(str(p) for p in written)}", file=sys.stderr)
    return 0


def _cmd_show(args) -> int:
    from .benchmarks.show import ShowError, describe, draw
    from .records import read_tasks
    tasks = read_tasks(args.tasks)
    task = next((t for t in tasks if t.id == args.task_id), None)
    if task is None:
        near = [t.id for t in tasks if args.task_id in t.id][:5] or [t.id for t in tasks[:3]]
        raise CLIError(f"no task {args.task_id!r} in {args.tasks}; e.g. {', '.join(near)}")
    from .registry import validate_task
    from .scoring.audit_relations import RELATION_FAMILIES
    try:  # as score and audit do: a task whose inputs break its family's rules is named, not drawn
        validate_task(task)
    except RecordError as exc:
        if task.family not in RELATION_FAMILIES:
            raise CLIError(f"{exc} (in {args.tasks})") from None
        # a degenerate relation item (e.g. a released one `stsim audit` tags [degenerate]): shown
        print(f"stsim: warning: {exc}", file=sys.stderr)
    answers = None
    if args.answers is not None:
        from .solvers.answers_file import read_answers
        # against every task of the file: an answers file that answers others but not this one
        # is not "answers of another suite" (it says 'no answer for this task')
        answers, _ = read_answers(args.answers, {t.id: t for t in tasks})
    if args.png is not None and not args.png.parent.is_dir():
        raise CLIError(f"--png {args.png}: folder {args.png.parent} does not exist")
    if args.png is not None and args.png.suffix.lower() != ".png":  # matplotlib picks the format by it
        raise CLIError(f"--png {args.png}: give a file name ending in .png, e.g. {args.png.with_suffix('.png')}")
    print(describe(task, answers))
    if args.png is not None:
        try:
            fig, _ = draw(task, args.png)
        except ShowError as exc:
            raise CLIError(str(exc)) from None
        except OSError as exc:
            raise CLIError(f"--png {args.png}: cannot write ({exc.strerror or exc})") from None
        print(f"wrote {args.png}", file=sys.stderr)
    return 0


def _cmd_score(args) -> int:
    from .solvers.answers_file import format_outcomes, outcome_counts, read_answers, tag_outcomes
    from .solvers.random_guess import random_reference
    from .scoring.report import format_table, legend, short_legend
    from .scoring.score import run_analyses, score_answers, summarise
    from .records import read_tasks, write_jsonl
    from .registry import validate_task
    if args.tolerance is not None and not 0 <= args.tolerance < float("inf"):
        raise CLIError(f"--tolerance must be a finite non-negative number, got {args.tolerance} "
                       "(inf would count every readable answer as correct)")
    if args.cluster is not None:
        from .benchmarks.cluster import check_cluster_spec
        check_cluster_spec(args.cluster)  # before anything is read or written
    tasks = read_tasks(args.tasks)
    for t in tasks:
        try:
            validate_task(t)
        except RecordError as exc:   # the file as well as the task: which of the two files it is
            raise CLIError(f"{exc} (in {args.tasks})") from None
    if args.tolerance is not None:
        from .answers import get_format
        if not any(get_format(t.answer_format).numeric for t in tasks):
            kinds = sorted({t.answer_format for t in tasks})
            raise CLIError(f"--tolerance {args.tolerance}: {args.tasks} has no task with a numeric error "
                           f"(formats point, scalar, time, vector); its formats ({', '.join(kinds[:6])}"
                           f"{', ...' if len(kinds) > 6 else ''}) are scored right or wrong by their own rules "
                           f"(geoqa: docs/answer-formats.md), so the option would be ignored")
    legacy = args.rubric != "default"
    if legacy:
        from .answers import LEGACY_RUBRICS
        base = LEGACY_RUBRICS[args.rubric]
        mine = [t for t in tasks if t.meta.get("rubric", "stark") == base]
        if not mine:
            raise CLIError(f"--rubric {args.rubric} reads replies to {base!r}-rubric tasks; {args.tasks} has none")
        for t in mine:
            t.meta["rubric"] = args.rubric
    answers, warnings = read_answers(args.answers, {t.id: t for t in tasks})
    if args.out is not None:          # inputs are read first: a bad one leaves no folder behind
        _refuse_run_folder(args.out, "--out", "scoring", "that run's scores.jsonl and summary.json")
        _out_dir(args.out)
    for w in warnings:
        print(f"stsim: warning: {w}", file=sys.stderr)
    if args.cluster is not None:
        from .benchmarks.cluster import Cluster, score_on_cluster
        with Cluster(args.cluster) as cl:
            scores = score_on_cluster(cl.client, tasks, answers, None if args.max_steps == 0 else args.max_steps)
    else:
        scores = score_answers(tasks, answers, max_steps=None if args.max_steps == 0 else args.max_steps)
    tag_outcomes(scores, args.tolerance)
    fams = summarise(scores, args.trim)
    for fam, ref in random_reference(tasks, None if args.max_steps == 0 else args.max_steps).items():
        fams.setdefault(fam, {}).update(ref)
    counts = outcome_counts(scores)
    for fam, row in fams.items():
        row["outcomes"] = counts[fam]
    lenient = _lenient_counts(tasks, answers)
    for fam, k in lenient.items():
        fams.setdefault(fam, {})["lenient_recoverable"] = k
    from .scoring.stark_metric import stark_item, summarise_stark
    steps = None if args.max_steps == 0 else args.max_steps
    stark_items = [it for t in tasks if (it := stark_item(t, answers, steps, legacy=legacy)) is not None]
    for fam, row in summarise_stark(stark_items, args.trim).items():
        fams.setdefault(fam, {}).update(row)
    extra, qstr_table = _qstr_breakdown(tasks, answers)
    analyses = run_analyses(tasks, answers, args.out)
    published = None
    if args.rubric == "qstrbench-published":
        from .scoring.qstrbench_published import summarise_published
        published = summarise_published(tasks, answers)
        extra["qstrbench_published"] = published
    if args.out is not None:  # files first, so a closed pipe on the report loses nothing
        write_jsonl(args.out / "scores.jsonl", scores)
        summary = {"tasks": str(args.tasks), "answers": str(args.answers), "tolerance": args.tolerance,
                   "rubric": args.rubric,
                   "families": fams, "outcomes": counts["all"], "warnings": warnings, **extra}
        if analyses:
            summary["analyses"] = analyses
        (args.out / "summary.json").write_text(json.dumps(summary, indent=2, sort_keys=True) + "\n")
    print(f"rubric: {args.rubric}" + (" (STARK's released reader: signs dropped, unreadable replies "
                                      "scored as its [5, 5] guess)" if args.rubric == "stark-legacy" else
                                      " (strict readers, docs/answer-formats.md)"))
    print(format_table(fams))
    print("\nOutcomes per item" + (f" (numeric: correct if error <= {args.tolerance})" if args.tolerance is not None
                                   else " ('scored': numeric, see the error metrics above)") + ":")
    print(format_outcomes(counts))
    if qstr_table:
        print(qstr_table)
    if published:
        from .scoring.qstrbench_published import format_published
        print("\n" + format_published(published))
        print("(QSTRBench's released scorer bin/process.py: strict = exact set, names compared as written; "
              "jaccard = |X & A| / |X | A|; norm.* = (score - guess) / (1 - guess), seed 000 §4)")
    for result in analyses.values():
        print(result["headline"])
    fails = sum(1 for a in answers if a.status == "format_failure" and a.text is not None)
    if fails:
        print(f"\nstrictness: a lenient reader (words dropped: '4.49 s', 'x = 9.2, y = 1.6', 'approximately "
              f"[0.43, 1.46] units') would have read {sum(lenient.values())} of the {fails} format failure(s) "
              "with reply text (per family: 'lenient_recoverable' in summary.json); they stay failures.")
    print("\n" + (legend(fams) if args.explain else short_legend(fams, "add --explain (stsim score TASKS ANSWERS --explain)")))
    if args.out is not None:
        print(f"Wrote {args.out}/ ({', '.join(_written(args.out))})")
    return 0


def _lenient_counts(tasks, answers) -> dict[str, int]:
    """Per family: format failures (with reply text, numeric formats) that
    :func:`stsim.answers.lenient_read` would have read."""
    from .answers import lenient_read
    by_id = {t.id: t for t in tasks}
    out: dict[str, int] = {}
    for a in answers:
        t = by_id.get(a.task_id)
        if t is None or a.status != "format_failure" or a.text is None:
            continue
        if lenient_read(a.text, t.answer_format, t.meta.get("answer_spec")) is not None:
            out[t.family] = out.get(t.family, 0) + 1
    return out


def _qstr_breakdown(tasks, answers) -> tuple[dict, str]:
    """For QSTRBench tasks answered with model text: TP/FP/FN, invalid relation names and
    guess rates per calculus and question type; returns (rows for summary.json, printed table)."""
    qt = [t for t in tasks if t.family.startswith(("qstr.", "qstrx."))]
    replies = {a.task_id: a.text for a in answers if a.text is not None}
    if not qt or not replies:
        return {}, ""
    from .qstr.scoring import score_replies, summarise_scores
    rows = summarise_scores(score_replies(qt, replies))
    lines = [f"\n{'calculus/question':<20} {'n':>5} {'acc':>7} {'unans.':>6} {'TP':>6} {'FP':>6} {'FN':>6} "
             f"{'invalid':>7} {'guess':>9}"]
    for key, r in rows.items():
        lines.append(f"{key:<20} {r['n']:>5} {r['accuracy']:>7.4f} {r['unanswered']:>6} {r['tp']:>6} {r['fp']:>6} "
                     f"{r['fn']:>6} {r['invalid_names']:>7} {r['guess_rate']:>9.2e}")
    lines.append("(unans.: questions with no reply or no answer in it, wrong in 'acc' and left out of TP/FP/FN; "
                 "TP/FP/FN: relations correctly given / wrongly given / missed in the answered questions; "
                 "invalid: names that are not relations of the calculus; guess: chance of the exact set by "
                 "uniform guessing)")
    return {"qstr": rows}, "\n".join(lines)


def _source_of(task) -> str:
    """`` [source: ...]`` naming where a task came from (``meta.source`` and ``meta.instance``,
    e.g. the released STARK folder and instance number), or ``""`` for generated tasks."""
    src = task.meta.get("source")
    if not src:
        return ""
    inst = task.meta.get("instance")
    return f" [source: {src}" + (f", instance {inst}" if inst is not None else "") + "]"


def _cmd_audit(args) -> int:
    from .scoring.audit import audit_tasks
    from .records import read_tasks
    from .registry import validate_task
    from .scoring.audit import AuditResult
    from .scoring.audit_relations import RELATION_FAMILIES
    tasks = read_tasks(args.tasks)
    valid, report = [], []
    for t in tasks:
        try:
            validate_task(t)
            valid.append(t)
        except RecordError as exc:
            if t.family not in RELATION_FAMILIES:
                raise CLIError(f"{exc} (in {args.tasks})") from None
            report.append(AuditResult(t.id, None, False, 1.0, f"[degenerate] {exc}"))
    report += audit_tasks(valid)
    bad = [r for r in report if not r.ok]
    skipped = sum(1 for r in report if r.skipped)
    checked = len(report) - skipped
    where = {t.id: _source_of(t) for t in tasks}
    for r in bad[: args.limit]:
        print(f"FAIL {r.task_id}" + (f" step {r.step}" if r.step is not None else "") + where.get(r.task_id, "") +
              f": {r.reason} (violation {r.violation:.6g})")
    if len(bad) > args.limit:
        print(f"... and {len(bad) - args.limit} more")
    tags = Counter(r.reason.split("]", 1)[0] + "]" for r in bad if r.reason.startswith("["))
    if tags:
        print("findings by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(tags.items())))
    print(f"audited {checked} item(s) of {len(tasks)} task(s): {len(bad)} inconsistent"
          + (f", {skipped} skipped (family has no audit rule)" if skipped else ""))
    return 1 if bad else 0


def _cmd_fidelity(args) -> int:
    from .benchmarks.fidelity import fidelity_report, format_report
    if not 0 < args.alpha < 1:  # also false for NaN
        raise CLIError(f"--alpha must be in (0, 1), got {args.alpha}")
    rep = fidelity_report(args.suite, args.data, n=args.n, seed=args.seed, only=args.family,
                          alpha=args.alpha)
    print(json.dumps(rep, indent=1) if args.json else format_report(rep))
    return 1 if rep["flagged"] else 0


def _cmd_calculus(args) -> int:
    from .qstr import all_calculi, get_calculus
    from .qstr.calculus import CalculusError
    from .qstr.export import to_gqr, to_json
    if args.action == "list":
        if args.name or args.relations or args.format or args.out:
            raise CLIError("calculus list takes no arguments or options")
        for c in all_calculi().values():
            ct = "composition table" if c.has_composition else "no composition table"
            print(f"  {c.key:<6} {c.abbrev:<7} {len(c):>3} relations  {ct}  {c.title}")
        return 0
    if not args.name:
        raise CLIError(f"calculus {args.action} needs a NAME (see `stsim calculus list`)")
    if args.action == "witness":
        if args.format or args.out:
            raise CLIError("--format and --out are options of `calculus show`, not `calculus witness`")
        return _calculus_witness(args.name, args.relations)
    if args.relations:
        raise CLIError(f"unexpected arguments after the calculus name: {' '.join(args.relations)}")
    if args.out is not None and args.format != "gqr":
        raise CLIError("--out writes GQR files: use it with --format gqr")
    args.format = args.format or "json"
    try:
        cal = get_calculus(args.name)
    except CalculusError as exc:
        raise CLIError(str(exc)) from None
    if args.format == "json":
        print(json.dumps(to_json(cal), indent=2, ensure_ascii=False))
        return 0
    try:
        files = to_gqr(cal)
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if args.out is None:
        sys.stdout.write(files["comp"])
        print(f"# converse ({cal.key}.conv)")
        sys.stdout.write(files["conv"])
        return 0
    # GQR's data layout, which the .spec's paths assume: DIR/NAME.spec, DIR/NAME/calculus/NAME.comp
    _out_dir(args.out)
    tables = _out_dir(args.out / cal.key / "calculus")
    for ext, text in files.items():
        (args.out if ext == "spec" else tables).joinpath(f"{cal.key}.{ext}").write_text(text, encoding="utf-8")
    print(f"wrote {cal.key}.spec, {cal.key}/calculus/{cal.key}.comp and .conv to {args.out} "
          f"(a GQR data folder)", file=sys.stderr)
    return 0


def _calculus_witness(name: str, relations: list[str]) -> int:
    """Print a drawn configuration behind one entry of the RCC-22 composition table."""
    from .qstr import get_calculus
    from .qstr.calculus import CalculusError
    from .qstr.descriptions import draw_cells
    from .qstr.rcc23_witnesses import find_witness
    from .qstr.topology import rcc23_code
    try:
        cal = get_calculus(name)
    except CalculusError as exc:
        raise CLIError(str(exc)) from None
    if cal.key != "rcc22":
        raise CLIError(f"witness drawings exist for RCC-22 only (its table is derived from them), "
                       f"not {cal.abbrev}")
    if len(relations) != 3:
        raise CLIError(f"calculus witness needs three relation names R S T, got {len(relations)}")
    # names, GQR's three-letter codes and aliases, in any case (as the QSTRBench rubric reads them)
    by_alias = {a.casefold(): r.name for r in cal.relations for a in (r.name, *r.aliases)}
    unknown = [r for r in relations if r.casefold() not in by_alias]
    if unknown:
        raise CLIError(f"unknown RCC-22 relation(s) {', '.join(map(repr, unknown))}; known: "
                       f"{', '.join(cal.names)}, or their three-letter codes (IPD = INSIDE_PINSIDEi_DC)")
    r, s, t = (by_alias[x.casefold()] for x in relations)
    comp = cal.compose(r, s)
    if t not in comp:
        raise CLIError(f"{t} is not in {r} ∘ {s} = {{{', '.join(n for n in cal.names if n in comp)}}}")
    x, y, z = find_witness(rcc23_code(r), rcc23_code(s), rcc23_code(t))
    print(f"{r}(x,y), {s}(y,z), {t}(x,z):")
    print(draw_cells(x.grid, (x.bits, y.bits, z.bits), ".XYAZBCD"))
    print("X x only, Y y only, Z z only, A x and y, B x and z, C y and z, D all three, . none")
    return 0


def _cmd_entities(args) -> int:
    from .geoqa.store import StoreError, info_text
    try:
        if args.entities_command == "strata":
            from .benchmarks.geoqa_suites import composition, format_composition
            c = composition(args.suite, args.family)
            if args.languages:
                from .benchmarks.geoqa_suites import format_language_composition, language_composition
                c["languages"] = language_composition(args.suite, args.family)
            print(json.dumps(c, indent=1) if args.json else format_composition(c) + (
                "\n\n" + format_language_composition(c["languages"]) if args.languages else ""))
        else:
            print(info_text())
    except StoreError as exc:
        raise CLIError(str(exc)) from None
    return 0


COMMANDS = {"entities": _cmd_entities, "calculus": _cmd_calculus, "list": _cmd_list, "run": _cmd_run,
            "generate": _cmd_generate, "score": _cmd_score, "export": _cmd_export, "show": _cmd_show,
            "audit": _cmd_audit, "sandbox": _cmd_sandbox,
            "compare": _cmd_compare, "fidelity": _cmd_fidelity}


def main(argv: Sequence[str] | None = None) -> int:
    from .benchmarks.runner import RunError
    from .benchmarks.cluster import ChunkFailed, ClusterError
    from .solvers.base import SolverError
    from .benchmarks.suites import SuiteError
    from .qstr.calculus import CalculusError
    from .qstr.rcc23_witnesses import WitnessFileError
    args = build_parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
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
        where = f"; files written so far are kept in {exc}" if str(exc) else ""
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
            text += (f"; what was written so far is kept: once there is room, `stsim run {args.suite} "
                     f"--resume {folder}` continues")
    elif args.command in ("generate", "export") and getattr(args, "out", "-") != "-":
        text += f"; {args.out} is incomplete"
    return text


if __name__ == "__main__":
    sys.exit(main())
