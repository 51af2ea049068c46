"""The task catalogue of the documentation site, generated from the family registry and the
suites: every family's name, answer format, rubric, source (paper section) and description,
the suites that hold it, and an example prompt for each group of families.

``python -m stsim.benchmarks.catalogue`` prints it; the docs site's build hook
(``docs/hooks.py``) puts it into ``docs/catalogue.md`` where ``<!-- catalogue -->`` stands.
"""
from __future__ import annotations

from collections import defaultdict


def group_of(name: str) -> str:
    """The catalogue section of a family: its first two dotted parts (``stark.localization``,
    ``qstrx.prefix-word``), or the whole name when it has fewer."""
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 2 else parts[0]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def catalogue_markdown(example_chars: int = 1200) -> str:
    """The catalogue as Markdown (tables per group, one example prompt per group: task 0 of the
    group's first family, seed 0, cut at ``example_chars`` characters)."""
    from ..registry import generate_task, load_families
    from .suites import all_suites
    families = load_families()
    in_suites: dict[str, list[str]] = defaultdict(list)
    for sname, suite in sorted(all_suites().items()):
        for f in suite.family_names() or []:
            in_suites[f].append(sname)
    groups: dict[str, list[str]] = defaultdict(list)
    for name in sorted(families):
        groups[group_of(name)].append(name)
    out = [f"{len(families)} families in {len(groups)} groups, {len(all_suites())} suites "
           "(generated from the registry by `python -m stsim.benchmarks.catalogue`).", ""]
    for g, names in sorted(groups.items()):
        out += [f"## `{g}`", "", "| family | answer format | rubric | source | suites | description |",
                "| --- | --- | --- | --- | --- | --- |"]
        for n in names:
            f = families[n]
            suites = ", ".join(in_suites.get(n, [])[:4]) + (" ..." if len(in_suites.get(n, [])) > 4 else "")
            out.append(f"| `{n}` | {f.answer_format} | {f.rubric} | {_cell(f.source) or '-'} | {suites or '-'} | "
                       f"{_cell(f.description)} |")
        task = generate_task(names[0], 0, suite="catalogue")
        text = task.prompt + ("\n\n" + task.steps[0].prompt if task.steps else "")
        if len(text) > example_chars:
            text = text[:example_chars] + f" ... [{len(text) - example_chars} more characters]"
        out += ["", f"Example prompt (`{names[0]}`, task 0, seed 0):", "", "````text", text, "````", ""]
    return "\n".join(out) + "\n"


if __name__ == "__main__":  # pragma: no cover
    print(catalogue_markdown(), end="")
