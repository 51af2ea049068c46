"""``stsim run``: generate (or load), solve, score and report a suite, with the checks of its
options before any folder is touched (``--resume``, another run in ``--out``, the agentic
tier, code solvers on formats a program cannot answer)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..records import RUN_FOLDER_FILES
from .common import (MAX_WORKERS, SUITES_HELP, CLIError, add_cluster, add_common, command_again, finite_number,
                     int_at_least, parser_defaults, refuse_overwrite, trim_fraction, written)
from .conditions import geoqa_conditions_apply, geoqa_only, language_codes, selected_families, task_transform


def add_run(sub) -> None:
    """``stsim run SUITE``: its options (live-model ones in their own group)."""
    r = sub.add_parser("run", help="generate (or load), solve, score and report a suite")
    r.add_argument("suite", help=SUITES_HELP)
    r.add_argument("--solver", default="baseline",
                   help="solver spec (default: baseline; the forms are listed at the end of --help)")
    add_common(r)
    r.add_argument("--out", type=Path, default=None, help="output folder (default runs/<suite>-<time>/)")
    r.add_argument("--data", type=Path, default=None, help="data folder or archive for data suites")
    r.add_argument("--max-steps", type=int_at_least(0), default=-1, metavar="K",
                   help="tracking steps scored per task (default: suite's, 10; 0 = all)")
    r.add_argument("--trim", type=trim_fraction, default=0.10, help="trim fraction each side (default 0.10)")
    r.add_argument("--workers", type=int_at_least(1, MAX_WORKERS, " (for any solver; a solver that runs "
                                                   "here: at most 4 per core)"), default=1,
                   help="solver processes on this machine (default 1; at most 4 per core), or for a live "
                        f"model requests in flight (at most {MAX_WORKERS}); with --cluster only for live "
                        "models: requests in flight across the whole cluster")
    add_cluster(r)
    r.add_argument("--quiet", action="store_true", help="no progress bar")
    r.add_argument("--explain", action="store_true",
                   help="print the full legend under the table (every column, convention and source), not the short one")
    r.add_argument("--context", choices=("none", "triples-raw", "triples-json", "triples-prose"), default="none",
                   help="geoqa evaluation condition: the gold triples before each question as N-Triples, "
                        "JSON or prose (default none; docs/geoqa.md)")
    r.add_argument("--language", default="en", metavar="CODE",
                   help="geoqa questions in this language: " + ", ".join(language_codes())
                        + " (default en; docs/geoqa.md)")
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
    m.add_argument("--temperature", type=finite_number(0.0), default=0.0, help="sampling temperature sent to the endpoint (default 0)")
    m.add_argument("--model-seed", type=int, default=0, help="sampling seed sent to the endpoint")
    m.add_argument("--max-tokens", type=int_at_least(1), default=None,
                   help="completion tokens per reply sent to the endpoint (default: the endpoint's)")
    m.add_argument("--request-timeout", type=finite_number(0.0, 86400.0, above=True), default=120.0, metavar="S",
                   help="seconds to wait for one reply (default 120)")
    m.add_argument("--max-turns", type=int_at_least(1), default=5, help="model replies per answer in CI mode")
    m.add_argument("--step-budget", type=int_at_least(1), default=None, metavar="N",
                   help="--mode agentic: model replies per question, code replies included (default 6); "
                        "when all N hold code the answer is budget_exhausted (not a refusal)")
    m.add_argument("--structured", action="store_true",
                   help="send each task's answer JSON Schema as response_format (structured output; "
                        "geoqa tasks, direct-answer mode)")
    m.add_argument("--cache", type=Path, default=None, metavar="FILE",
                   help="response cache JSONL (default OUT/llm_cache.jsonl); rerun to resume")


def cmd_run(args) -> int:
    """``stsim run``: check the options, run the suite (:func:`stsim.benchmarks.runner.run`) and
    print its report."""
    from ..scoring.report import format_table, legend, short_legend
    from ..benchmarks.runner import run
    if args.resume is not None:
        _resume_options(args)
    max_steps = None if args.max_steps == 0 else args.max_steps
    options: dict = {}
    _check_agentic(args)
    _check_live_model_options(args)
    geoqa_conditions_apply(args)
    _code_formats_apply(args)
    from ..benchmarks.runner import RunError, check_run_options
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
        _keep_other_files(args.out)
    if args.out is None:  # named here, so that an error writing it (a full disk) can name it
        from ..benchmarks.runner import default_out_dir
        args.out = default_out_dir(args.suite)
    summary = run(args.suite, args.solver, n=args.n, seed=args.seed, out_dir=args.out, data=args.data,
                  max_steps=max_steps, trim=args.trim, workers=args.workers, progress=not args.quiet and sys.stderr.isatty(),
                  only=args.family, solver_options=options or None, transform=task_transform(args.context, args.language),
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
        shown = {"trim": summary["trim"], "max_steps": summary["max_steps"]}  # what the table was made with
        print("\n" + (legend(summary["families"], **shown) if args.explain else
                      short_legend(summary["families"], f"add --explain ({_explain_command(args, summary)})", **shown)))
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
    print(f"Wrote {summary['out_dir']}/ ({', '.join(written(Path(summary['out_dir'])))})")
    return 0


#: options of ``stsim run`` that DIR/run.json does not record (so ``--resume DIR`` cannot take
#: them from there) but that change the table (``--trim``) or are needed to start the solver
#: again (a live model's endpoint and key, the isolation of code)
_NOT_RECORDED = (("trim", "--trim"), ("base_url", "--base-url"), ("api_key_env", "--api-key-env"),
                 ("isolation", "--isolation"))


def _explain_command(args, summary: dict) -> str:
    """The command that prints this run's table with the full legend: for a finished run
    ``stsim score OUT/tasks.jsonl OUT/answers.jsonl --explain`` (with the run's ``--max-steps``
    and ``--trim`` when not the defaults), which reads the folder and writes nothing; for an
    interrupted one :func:`resume_command` with ``--explain``, which continues it."""
    out = Path(summary["out_dir"])
    if summary.get("interrupted"):
        return f"{resume_command(args, out)} --explain"
    from .score import explain_command
    k = summary.get("max_steps")
    return explain_command(out / "tasks.jsonl", out / "answers.jsonl", max_steps=0 if k is None else k,
                           trim=summary["trim"], tolerance=None, rubric="default")


def resume_command(args, out) -> str:
    """``stsim run SUITE --resume OUT`` with the options of this run that OUT/run.json does not
    record (:data:`_NOT_RECORDED`) when they are not the defaults, shell-quoted: the command
    that continues (or, finished, reprints) this run, not another one."""
    return command_again(["stsim", "run", args.suite, "--resume", str(out)], args, ["run", args.suite],
                         _NOT_RECORDED)


def _resume_options(args) -> None:
    """``--resume DIR``: options left at their defaults take the values recorded in
    DIR/run.json (``--trim``: in DIR/summary.json, when the run has one); ``--out``, when given,
    must be DIR."""
    if args.out is not None and args.out != args.resume:
        raise CLIError(f"--resume {args.resume} writes into that folder; drop --out {args.out}")
    args.out = args.resume
    try:
        rec = json.loads((args.resume / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # the runner names what is wrong with the folder
    defaults = parser_defaults(("run", args.suite))
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
    from ..benchmarks.runner import summary_so_far
    # --trim is not in run.json: the table made so far (summary.json) says which was used
    trim = summary_so_far(args.resume).get("trim")
    if args.trim == defaults.trim and isinstance(trim, (int, float)):
        args.trim = float(trim)


def _keep_other_files(out: Path) -> None:
    """Refuse (exit 2) an ``--out`` folder that no `stsim run` made (no run.json, no
    summary.json naming a suite: e.g. `stsim score --out`, or files of one's own) but that holds
    a file of a name in :data:`stsim.records.RUN_FOLDER_FILES`: a run would overwrite it.  A
    folder holding another run is refused by :func:`stsim.benchmarks.runner.run` itself (the
    rule of ``--resume``)."""
    from ..benchmarks.runner import recorded_run
    if recorded_run(out) is not None:
        return
    mine = [n for n in RUN_FOLDER_FILES if (out / n).exists()]
    if mine:
        summary = (out / "summary.json").is_file() and not (out / "run.json").exists()
        refuse_overwrite(f"--out {out}", f"holds {', '.join(mine)} that no `stsim run` wrote there (no run.json"
                         f"{'; its summary.json names no suite' if summary else ''})", len(mine), "running")


#: the options of the "live models" group other than --mode (which _check_agentic checks)
_LIVE_MODEL_OPTIONS = ("base_url", "api_key_env", "temperature", "model_seed", "max_tokens", "request_timeout",
                       "max_turns", "structured", "cache")


def _check_live_model_options(args) -> None:
    """A live-model option (``--temperature``, ``--base-url``, ...) given with a solver that
    talks to no model was silently ignored: refused (CLIError, exit 2), as ``--mode ci`` is."""
    if args.solver.startswith("openai"):
        return
    defaults = parser_defaults(("run", args.suite))
    given = [o for o in _LIVE_MODEL_OPTIONS if getattr(args, o) != getattr(defaults, o)]
    if given:
        flags = ", ".join("--" + o.replace("_", "-") for o in given)
        raise CLIError(f"{flags} {'is' if len(given) == 1 else 'are'} for a live model (--solver openai:MODEL); "
                       f"--solver {args.solver} does not talk to a model")


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
    geoqa_only(args)


def _code_formats_apply(args) -> None:
    """``--solver code:...`` on families whose answers a program cannot return (a ``solver()``
    value is numbers only: relation names, directions, geoqa answers are not): CLIError (exit 2)
    when no selected family can be answered, else a warning naming those that cannot
    (:func:`stsim.solvers.code.check_code_families`; ``run()`` refuses the first case too)."""
    from ..solvers.base import SolverError
    from ..solvers.code import check_code_families
    if not args.solver.startswith("code:"):
        return
    try:
        warning = check_code_families(args.solver, selected_families(args))
    except SolverError as exc:
        raise CLIError(str(exc)) from None
    if warning is not None:
        print(f"stsim: warning: {warning}", file=sys.stderr)
