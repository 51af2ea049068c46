"""The suite selection and geoqa evaluation conditions that ``stsim run`` and ``stsim generate``
check: the task transform of ``--context`` / ``--language``, the families a selection holds,
and the refusals of options that would not apply to them."""
from __future__ import annotations

from .common import CLIError


def language_codes() -> list[str]:
    """The ``--language`` codes (:data:`stsim.geoqa.languages.LANGUAGES`), for ``--help``."""
    from ..geoqa.languages import LANGUAGES
    return list(LANGUAGES)


def task_transform(mode: str, language: str = "en"):
    """The task transform of ``--context MODE`` and ``--language CODE`` (None when neither
    changes anything).  CLIError on an unknown language."""
    from ..geoqa.languages import LANGUAGES
    if language not in LANGUAGES:
        raise CLIError(f"--language {language!r}: unknown; known: {', '.join(LANGUAGES)} (or 'all' for generate)")
    if mode == "none" and language == "en":
        return None
    from ..generators.geoqa_conditions import with_context
    from ..generators.geoqa_languages import with_language
    return lambda t: with_context(with_language(t, language), mode)


def selected_families(args) -> list[str] | None:
    """The families of ``args.suite`` matching ``--family`` (``None`` for an unknown suite,
    which the runner names, or a data suite that declares none)."""
    from ..benchmarks.suites import SuiteError, get_suite
    try:
        return get_suite(args.suite).family_names(args.family)
    except SuiteError:
        return None


def geoqa_only(args) -> None:
    """CLIError unless every family of ``args.suite`` (matching ``--family``) is a geoqa family."""
    families = selected_families(args)
    other = [f for f in families or [] if not f.startswith("geoqa.")]
    if other:
        raise CLIError(f"--mode agentic: the tool API serves geoqa suites only; suite {args.suite!r} has "
                       f"{len(other)} other famil{'y' if len(other) == 1 else 'ies'} ({', '.join(other[:3])}"
                       f"{', ...' if len(other) > 3 else ''}); use a geoqa suite (geoqa, geoqa-small, geoqa-mini)")


def geoqa_conditions_apply(args) -> None:
    """CLIError (exit 2) when ``--context`` or ``--language`` is set for a selection with no
    geoqa family: the transforms leave every other task unchanged, so the option would be
    silently ignored while run.json, summary.json and the report header claim it."""
    from ..benchmarks.suites import SUITES
    given = [f"--{k} {v}" for k, v, default in (("context", args.context, "none"),
                                                ("language", args.language, "en")) if v != default]
    if not given:
        return
    families = selected_families(args)
    if families is None or not families or any(f.startswith("geoqa.") for f in families):
        return  # a data suite without declared families, or --family matching none: named later
    geoqa = sorted(n for n, su in SUITES.items() if any(f.startswith("geoqa.") for f in su.families))
    raise CLIError(f"{' and '.join(given)}: an evaluation condition of geoqa questions only; suite "
                   f"{args.suite!r}{'' if args.family is None else f' (--family {args.family})'} has no "
                   f"geoqa family, so it would be ignored; the geoqa suites: {', '.join(geoqa)}")
