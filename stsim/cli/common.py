"""What every command of the ``stsim`` command shares: the user-error exceptions, the argparse
types and bounds of numeric options, the options of several commands, the parser class
(its help ends with the known suites and solvers), and the output-folder checks."""
from __future__ import annotations

import argparse
import filecmp
import math
import os
import shlex
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path


class CLIError(Exception):
    """A user error: printed as ``stsim: error: ...`` with exit code 2."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C with a message saying what was left behind (printed as ``stsim: interrupted: ...``)."""


def int_at_least(low: int | None, high: int | None = None, why: str = ""):
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
N_WHY = " tasks per family (a larger --n is most likely a typo)"


def finite_number(low: float, high: float | None = None, *, above: bool = False):
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


def trim_fraction(text: str) -> float:
    """An argparse type: a trim fraction in [0, 0.5) (NaN rejected)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0.0 <= value < 0.5:  # also false for NaN
        raise argparse.ArgumentTypeError(f"must be in [0, 0.5), got {text}")
    return value


#: the help of the SUITE argument of run (generate, export: with their verb)
SUITES_HELP = "the suite to run (the known suites are listed at the end of --help)"


def add_common(p: argparse.ArgumentParser) -> None:
    """Add ``--n``, ``--seed`` and ``--family`` (run, generate, export) to ``p``."""
    p.add_argument("--n", type=int_at_least(1, MAX_N_PER_FAMILY, N_WHY), default=None, metavar="N",
                   help="tasks per family (default: the suite's own count)")
    p.add_argument("--seed", type=int_at_least(0), default=0, help="suite seed (default 0; non-negative)")
    p.add_argument("--family", default=None, metavar="GLOB",
                   help="only families matching this pattern, e.g. 'stark.localization.*'")


def add_cluster(p: argparse.ArgumentParser) -> None:
    """Add ``--cluster`` and ``--chunk-size`` (run, generate) to ``p``."""
    p.add_argument("--cluster", default=None, metavar="local:N|tcp://HOST:PORT",
                   help="generate (solve, score) on a Dask cluster: N local worker processes, or a running "
                        "`dask scheduler`; needs stsim[distributed] (docs/distributed.md)")
    p.add_argument("--chunk-size", type=int_at_least(1), default=None, metavar="K",
                   help="tasks per cluster chunk (default 16)")


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose ``run`` / ``generate`` / ``export`` help ends with the known suites, looked
    up only when help is shown (loading every suite costs about a second)."""

    def format_help(self) -> str:
        text = super().format_help()
        if self.prog in ("stsim run", "stsim generate", "stsim export"):  # not `stsim sandbox run`
            import textwrap
            from ..benchmarks.suites import all_suites
            text += "\n" + textwrap.fill("suites: " + ", ".join(sorted(all_suites())) +
                                         " (`stsim list` describes them)", 78, subsequent_indent="  ",
                                         break_on_hyphens=False) + "\n"
        if self.prog == "stsim fidelity":
            import textwrap
            from ..benchmarks.fidelity import fidelity_suites
            text += "\n" + textwrap.fill("suites with released counterparts: " + ", ".join(fidelity_suites()), 78,
                                         subsequent_indent="  ", break_on_hyphens=False) + "\n"
        if self.prog == "stsim run":
            import textwrap
            text += textwrap.fill("solvers (--solver): " + ", ".join(_solver_forms()) +
                                  " (`stsim list` says which families each variant serves)", 78,
                                  subsequent_indent="  ", break_on_hyphens=False) + "\n"
        return text


class CommandParser(Parser):
    """The parser of a command (``stsim list``, ``stsim sandbox run``, ...): an argument it does
    not know is reported by it, with its own usage, exit code 2.  argparse leaves such
    arguments to the top-level parser, which printed ``usage: stsim [-h] [--version] COMMAND
    ...``: no help for the command given.  Nested commands (``sandbox run``) are of this
    class too (``add_subparsers`` makes its parsers of the parent's class)."""

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


def _solver_forms() -> list[str]:
    """Every ``--solver`` spec form, for ``stsim run --help``: the registered solvers, with the
    argument each one takes, and the baseline variants."""
    from ..baselines import ALTERNATIVES
    from ..solvers.base import SOLVERS, load_builtin_solvers
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


def out_dir(path: Path, flag: str = "--out") -> Path:
    """Create the output folder ``path`` (and parents); raise :class:`CLIError` naming it when
    it is an existing file or cannot be created."""
    from ..benchmarks.runner import RunError, make_out_dir
    try:
        make_out_dir(path, flag)
    except RunError as exc:
        raise CLIError(str(exc)) from None
    return path


def refuse_run_folder(folder: Path, flag: str, doing: str, replaces: str) -> None:
    """Raise :class:`CLIError` when ``folder`` holds a `stsim run` (its run.json): ``doing``
    there would replace ``replaces`` of that run (whose answers may be a live model's, paid
    for).  Only ``stsim run`` itself (the same run again, or ``--resume``) writes there."""
    if (folder / "run.json").is_file():
        raise CLIError(f"{flag} {folder}: holds a `stsim run` (run.json); {doing} into it would replace "
                       f"{replaces}; choose another folder")


def refuse_overwrite(given: str, held: str, n: int, doing: str) -> None:
    """Raise :class:`CLIError` (exit 2): the output ``given`` (the option as typed, e.g.
    ``--out runs/a`` or ``-o tasks.jsonl``) ``held`` ``n`` file(s) that ``doing`` there would
    overwrite.  The one wording of every such refusal (``run --out``, ``score --out``,
    ``export -o``, ``generate -o``): what is there, and the two ways out."""
    them = "it" if n == 1 else "them"
    raise CLIError(f"{given}: {held}; {doing} here would overwrite {them}: give another {given.split()[0]}, "
                   f"or remove {them}")


def stage_beside(path: Path) -> Path:
    """A new empty file in ``path``'s folder (hidden, named after it) to write ``path``'s new
    content into before :func:`settle` decides whether it may replace ``path``."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".stsim-part")
    os.close(fd)
    return Path(name)


def settle(pairs: list[tuple[Path, Path]]) -> list[Path]:
    """Move each staged new file to its final path, ``pairs`` being (new file, final path),
    and return ``[]``; a final path that already holds the same bytes is left untouched (the
    same output again: nothing is lost).  When some final paths hold other bytes (or are not
    files), every new file is removed instead, nothing is moved, and those paths are returned:
    the caller refuses (:func:`refuse_overwrite`), with nothing that was there changed."""
    clash = [dest for new, dest in pairs
             if dest.exists() and not (dest.is_file() and filecmp.cmp(new, dest, shallow=False))]
    for new, dest in pairs:
        if clash or dest.exists():
            new.unlink(missing_ok=True)
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(new, dest)
    return clash


def stage_in(folder: Path, prefix: str) -> Path | None:
    """A new hidden folder in ``folder`` (named ``prefix`` + random) to write an output into
    before :func:`settle_staged` moves it in, when ``folder`` already holds something; None
    when it is empty (the output is written there directly)."""
    return Path(tempfile.mkdtemp(dir=folder, prefix=prefix)) if any(folder.iterdir()) else None


def settle_staged(stage: Path, out: Path, given: str, held: str, doing: str) -> bool:
    """Move every file made in the staging folder ``stage`` (:func:`stage_in`) to the same place
    in ``out`` (:func:`settle`), then remove ``stage``.  When some file of ``out`` would be
    replaced by other bytes nothing is moved and :func:`refuse_overwrite` raises (``given`` the
    option as typed, ``held`` what that content is, e.g. " with other content than this
    export", ``doing`` as there).  Returns True when every file was already in ``out`` with the
    same bytes (nothing changed)."""
    pairs = [(p, out / p.relative_to(stage)) for p in sorted(stage.rglob("*")) if p.is_file()]
    unchanged = all(dest.is_file() for _, dest in pairs)         # if settled: each held the same bytes
    clash = settle(pairs)
    shutil.rmtree(stage, ignore_errors=True)
    if clash:
        refuse_overwrite(given, f"holds {', '.join(str(p.relative_to(out)) for p in clash)}{held}", len(clash), doing)
    return unchanged


def command_again(words: list[str], args, default_argv: list[str], options: tuple) -> str:
    """A command line repeating this one, shell-quoted: ``words`` then each ``(attribute,
    flag)`` of ``options`` whose value in ``args`` differs from its default (the parse of
    ``default_argv``), as ``flag value``.  For the hints a table ends with (``stsim run ...
    --resume DIR``, ``stsim score ... --explain``): the command that reprints this result, not
    another one."""
    defaults = parser_defaults(tuple(default_argv))
    for attr, flag in options:
        value = getattr(args, attr, None)
        if value != getattr(defaults, attr):
            words = [*words, flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return " ".join(shlex.quote(str(w)) for w in words)


@lru_cache(maxsize=8)
def parser_defaults(argv: tuple[str, ...]) -> argparse.Namespace:
    """What the ``stsim`` parser gives for ``argv`` alone (e.g. ``("run", SUITE)``): every
    option at its default, to tell which options a command line set.  Cached; read it, do not
    change it."""
    from . import build_parser
    return build_parser().parse_args(list(argv))


def written(out: Path) -> list[str]:
    """Every file and folder in a run's output folder, sorted (folders with a trailing /)."""
    try:
        return sorted(p.name + ("/" if p.is_dir() else "") for p in out.iterdir())
    except OSError:
        return []
