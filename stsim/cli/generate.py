"""``stsim generate`` and ``stsim export``: a suite's tasks written as JSONL (or only what a model
is shown), or for other tools (chat messages, datasets, Inspect AI)."""
from __future__ import annotations

import contextlib
import itertools
import sys
from pathlib import Path

from .common import (SUITES_HELP, CLIError, Interrupted, add_cluster, add_common, int_at_least,
                     out_dir, refuse_overwrite, refuse_run_folder, settle, settle_staged, stage_beside,
                     stage_in)
from .conditions import geoqa_conditions_apply, geoqa_only, language_codes, task_transform


def add_generate(sub) -> None:
    """``stsim generate SUITE``: tasks as JSONL to a file or standard output."""
    g = sub.add_parser("generate", help="write a suite's tasks as JSONL")
    g.add_argument("suite", help=SUITES_HELP.replace("run", "write"))
    add_common(g)
    g.add_argument("--data", type=Path, default=None, help="data folder or archive for data suites")
    add_cluster(g)
    g.add_argument("-o", "--out", default="-", help="output file (default: standard output)")
    g.add_argument("--context", choices=("none", "triples-raw", "triples-json", "triples-prose"), default="none",
                   help="geoqa evaluation condition (as for run)")
    g.add_argument("--language", default="en", metavar="CODE",
                   help="geoqa questions in this language, or 'all' (each task once per language); "
                        "default en; one of " + ", ".join(language_codes()) + " (docs/geoqa.md)")
    g.add_argument("--prompts-only", action="store_true",
                   help="write only what a model is shown: id, family, prompt, answer format, step "
                        "prompts and the exact chat messages the live-model solver sends (as `export "
                        "--format chat`); no gold answers, inputs or metadata; score replies against "
                        "the full file")
    g.add_argument("--mode", choices=("da", "ci", "agentic"), default="da",
                   help="with --prompts-only: system prompt of direct answer, code interpreter, or the geoqa "
                        "agentic tier (tool API documentation and step budget; geoqa suites) (default da)")
    g.add_argument("--step-budget", type=int_at_least(1), default=None, metavar="N",
                   help="with --prompts-only --mode agentic: the step budget the system prompt names (default 6)")
    g.add_argument("--max-steps", type=int_at_least(0), default=-1, metavar="K",
                   help="with --prompts-only: tracking steps asked (default: suite's, 10; 0 = all)")
    g.add_argument("--quiet", action="store_true",
                   help="no progress bar (shown on a terminal when -o is a file)")


def cmd_generate(args) -> int:
    """``stsim generate``: write the suite's tasks (or their prompts) to ``-o``."""
    from ..benchmarks.suites import get_suite
    if not args.prompts_only:
        _prompt_options_apply(args, "--prompts-only", "--prompts-only", "generate without --prompts-only writes "
                              "the full tasks (no system prompt, every tracking step)")
    suite = get_suite(args.suite)
    if args.step_budget is not None and not (args.prompts_only and args.mode == "agentic"):
        raise CLIError("--step-budget names the agentic tier's budget in the prompt: use it with "
                       "--prompts-only --mode agentic")
    if args.mode == "agentic":
        geoqa_only(args)
    geoqa_conditions_apply(args)
    langs = None
    if args.language == "all":
        from ..geoqa.languages import LANGUAGES
        langs = list(LANGUAGES)
    transforms = [task_transform(args.context, lang) for lang in (langs or [args.language])]
    tasks = suite.tasks(n=args.n, seed=args.seed, data=args.data, only=args.family)
    stack = contextlib.ExitStack()
    stream = None
    if args.cluster is not None:
        from ..benchmarks.cluster import Cluster, ChunkStream, Work, chunks_of, check_cluster_spec
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


def _prompt_options_apply(args, mode_by: str | None, steps_by: str | None, other: str) -> None:
    """CLIError (exit 2) when ``--mode`` (other than da) or ``--max-steps`` is given where
    nothing it chooses is written: ``mode_by`` / ``steps_by`` name what would use each (``None``:
    this command as asked does), ``other`` what this command writes instead.  E.g. ``generate``
    without ``--prompts-only`` writes the full tasks (no system prompt, every tracking step),
    ``export --format csv`` too, and ``--format inspect`` runs direct-answer mode only: the
    option was silently ignored."""
    for given, what, by in ((args.mode != "da" and f"--mode {args.mode}", "the system prompt", mode_by),
                            (args.max_steps != -1 and f"--max-steps {args.max_steps}", "the tracking steps asked",
                             steps_by)):
        if given and by is not None:
            raise CLIError(f"{given}: chooses {what} of the prompts a model is shown, which only {by} writes; "
                           f"{other}, so it would be ignored: use it with {by}")


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
    from ..geoqa.languages import translated_share
    for lang, s in translated_share(rows).items():
        labels = "n/a" if s["label_share"] is None else f"{100 * s['label_share']:.1f} %"
        print(f"language {lang}: {s['tasks']} geoqa tasks, questions translated "
              f"{100 * s['question_share']:.1f} %, entity labels translated {labels} "
              f"({s['labels_translated']}/{s['labels_total']})", file=sys.stderr)


def _write_tasks(args, tasks, stream, steps, total: int | None = None) -> int:
    """Write generated tasks (or, with ``--prompts-only``, their chat records) to ``-o``, with a
    progress bar on a terminal (of ``total`` tasks when known) unless ``--quiet`` or standard
    output."""
    from ..generators.chat_prompts import chat_record
    from ..records import dumps
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
    fh, staged = (sys.stdout, None) if args.out == "-" else _open_output(Path(args.out))
    count, done = 0, False
    from tqdm import tqdm
    bar = tqdm(total=total, desc=f"generate {args.suite}", unit="task", leave=False,
               disable=fh is sys.stdout or args.quiet or not sys.stderr.isatty())
    try:
        for t in tasks:
            fh.write(dumps(chat_record(t, args.mode, steps, **budget) if args.prompts_only else t.to_dict()) + "\n")
            count += 1
            bar.update()
        if fh is not sys.stdout:
            fh.close()  # a full disk shows here, not after the check below
        done = True
    except KeyboardInterrupt:
        if fh is sys.stdout:
            raise
        if staged is not None:
            raise Interrupted(f"{args.out} is unchanged: the {count} task(s) made before the interrupt "
                              "were not written into it") from None
        raise Interrupted(f"{args.out} is partial: {count} task(s) written before the interrupt") from None
    except OSError as exc:
        if staged is None:
            raise
        raise CLIError(f"-o {args.out}: cannot write ({exc.strerror or exc}); {args.out} is unchanged") from None
    finally:
        bar.close()
        if fh is not sys.stdout:
            fh.close()
        if staged is not None and not done:
            staged.unlink(missing_ok=True)
    if stream is not None and stream.failed:
        from ..benchmarks.cluster import ChunkFailed
        if staged is not None:  # an incomplete set of tasks does not replace a whole file
            staged.unlink(missing_ok=True)
            raise ChunkFailed(stream.failed, stream.errors)
        raise ChunkFailed(stream.failed, stream.errors, args.out)
    if staged is not None:
        if settle([(staged, Path(args.out))]):
            refuse_overwrite(f"-o {args.out}", f"exists, holding other content than the {count} task(s) made now",
                             1, "writing")
        print(f"{args.out} already holds these {count} tasks, byte for byte: left as it was", file=sys.stderr)
    elif args.out != "-":
        print(f"wrote {count} tasks to {args.out}", file=sys.stderr)
    return 0


def _open_output(path: Path):
    """Open ``path`` for writing: ``(file, None)``, or for an existing file ``(file, staged)``,
    a new file beside it (:func:`stage_beside`) that replaces it only if they end up holding the
    same bytes (:func:`settle`).  Raise :class:`CLIError` naming it when that is impossible (a
    folder, a missing parent folder, no permission) or when it is an existing file of a
    `stsim run` folder (:func:`refuse_run_folder`)."""
    if path.is_dir():
        raise CLIError(f"-o {path}: is a folder; give a file name, e.g. {path / 'tasks.jsonl'}")
    if not path.parent.is_dir():
        raise CLIError(f"-o {path}: folder {path.parent} does not exist")
    if path.exists() and (path.parent / "run.json").is_file():
        raise CLIError(f"-o {path}: is a file of the `stsim run` in {path.parent} (run.json); writing here "
                       "would replace it; choose another file")
    try:
        # an existing file (not /dev/null or a pipe) is kept until the new content is known
        staged = stage_beside(path) if path.is_file() else None
        return open(staged or path, "w", encoding="utf-8", newline="\n"), staged
    except OSError as exc:
        raise CLIError(f"-o {path}: cannot write ({exc.strerror or exc})") from None


def add_export(sub) -> None:
    """``stsim export SUITE --format F -o DIR``."""
    e = sub.add_parser("export", help="write a suite's tasks for other tools (chat messages, datasets, ...)")
    e.add_argument("suite", help=SUITES_HELP.replace("run", "export"))
    add_common(e)
    e.add_argument("--data", type=Path, default=None, help="data folder or archive for data suites")
    e.add_argument("--format", required=True, choices=_export_formats(), metavar="FORMAT",
                   help="one of: " + "; ".join(f"{k}: {v}" for k, v in _export_formats().items()))
    e.add_argument("-o", "--out", type=Path, required=True, metavar="DIR", help="output folder")
    e.add_argument("--quiet", action="store_true", help="no progress bar (shown on a terminal)")
    e.add_argument("--mode", choices=("da", "ci"), default="da",
                   help="chat: direct answer or code interpreter system prompt (default da; inspect: direct answer only)")
    e.add_argument("--max-steps", type=int_at_least(0), default=-1, metavar="K",
                   help="chat/inspect: tracking steps asked (default: suite's, 10; 0 = all)")


def _export_formats() -> dict[str, str]:
    from ..benchmarks.export import FORMATS
    return FORMATS


def cmd_export(args) -> int:
    """``stsim export``: write the suite's tasks in ``--format`` into the folder ``-o``."""
    from ..benchmarks import export
    from ..benchmarks.suites import get_suite
    _prompt_options_apply(args, None if args.format == "chat" else "--format chat",
                          None if args.format in ("chat", "inspect") else "--format chat or inspect",
                          "--format inspect asks in direct-answer mode only (docs/inspect.md)" if args.format == "inspect"
                          else f"--format {args.format} writes the full tasks (no system prompt, every tracking step)")
    suite = get_suite(args.suite)
    steps = suite.max_steps if args.max_steps == -1 else (args.max_steps or None)
    tasks = suite.tasks(n=args.n, seed=args.seed, data=args.data, only=args.family)
    first = next(tasks, None)  # a bad --data or --family fails before the folder is made
    if first is None:
        raise CLIError(f"no task of suite {args.suite!r} to export")
    tasks = itertools.chain([first], tasks)
    refuse_run_folder(args.out, "-o", "exporting", "that run's tasks.jsonl or mix other files with its own")
    out_dir(args.out, "-o")
    import shutil
    # a folder already holding files gets the export made beside them first (a hidden folder in
    # it), then moved in file by file, unless one of its files would replace other bytes
    stage = stage_in(args.out, ".stsim-export-")
    from tqdm import tqdm
    total = None if suite.loader is not None else suite.count_tasks(args.n, args.family)
    tasks = tqdm(tasks, total=total, desc=f"export {args.suite}", unit="task", leave=False,
                 disable=args.quiet or not sys.stderr.isatty())
    try:
        try:
            written = export.export(args.format, tasks, stage or args.out, suite=args.suite, seed=args.seed,
                                    n=args.n, mode=args.mode, max_steps=steps, family=args.family)
        except export.ExportError as exc:
            raise CLIError(str(exc)) from None
        except KeyboardInterrupt:
            if stage is not None:
                raise Interrupted(f"{args.out} is unchanged: the export was interrupted before anything "
                                  "was written into it") from None
            raise Interrupted(f"{args.out} is partial") from None
        finally:
            tasks.close()
        if stage is not None:
            settle_staged(stage, args.out, f"-o {args.out}", " with other content than this export", "exporting")
            written = [args.out / p.relative_to(stage) for p in written]
    finally:
        if stage is not None:
            shutil.rmtree(stage, ignore_errors=True)
    print(f"wrote {', '.join(str(p) for p in written)}", file=sys.stderr)
    return 0
