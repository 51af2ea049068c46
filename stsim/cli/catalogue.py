"""``stsim list``, ``stsim calculus`` and ``stsim entities``: what stsim knows (suites, families,
solvers), the qualitative calculi's tables and RCC-22 witnesses, and the geoqa entity store."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from .common import CLIError, out_dir, refuse_overwrite


def add_list(sub) -> None:
    """``stsim list``: suites, families and solvers."""
    ls = sub.add_parser("list", help="list suites, families and solvers")
    ls.add_argument("--families", metavar="GLOB", nargs="?", const="*", default=None,
                    help="list every family matching GLOB (default: all) instead of the grouped view")


def cmd_list(args) -> int:
    """``stsim list``: print the suites, the families (grouped, or those matching ``--families``)
    and the solvers with their baseline variants."""
    from ..baselines import ALTERNATIVES
    from ..solvers.base import SOLVERS, load_builtin_solvers
    from ..benchmarks.suites import all_suites
    from ..registry import FAMILIES, load_families
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


def add_calculus(sub) -> None:
    """``stsim calculus list | show NAME | witness rcc22 R S T``."""
    c = sub.add_parser("calculus", help="list the qualitative calculi or print one's tables")
    c.add_argument("action", choices=["list", "show", "witness"],
                   help="witness: draw three regions realising R(x,y), S(y,z), T(x,z) (RCC-22)")
    c.add_argument("name", nargs="?", help="calculus for `show` (e.g. rcc8, IA, RCC-22)")
    c.add_argument("relations", nargs="*", metavar="R S T", help="for `witness`: three relation names")
    c.add_argument("--format", choices=["json", "gqr"], default=None, help="for `show` (default json)")
    c.add_argument("--out", type=Path, default=None,
                   help="with --format gqr: write a GQR data folder: DIR/NAME.spec and "
                        "DIR/NAME/calculus/NAME.comp, NAME.conv")


def cmd_calculus(args) -> int:
    """``stsim calculus``: list the calculi, print one's tables (JSON or GQR files), or draw an
    RCC-22 witness."""
    from ..qstr import all_calculi, get_calculus
    from ..qstr.calculus import CalculusError
    from ..qstr.export import to_gqr, to_json
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
    target = {ext: (args.out if ext == "spec" else args.out / cal.key / "calculus") / f"{cal.key}.{ext}"
              for ext in files}
    # files already there are left alone: the same bytes are kept, other content is refused
    # before anything is written (as generate -o, export -o and run --out do)
    differ = [p for ext, p in target.items() if p.exists() and (
        not p.is_file() or p.read_bytes() != files[ext].encode("utf-8"))]
    if differ:
        refuse_overwrite(f"--out {args.out}", "holds " + ", ".join(str(p.relative_to(args.out)) for p in differ)
                         + " with other content than these tables", len(differ), "writing")
    out_dir(args.out)
    out_dir(args.out / cal.key / "calculus")
    kept = [ext for ext in files if target[ext].exists()]
    for ext, text in files.items():
        if ext not in kept:
            target[ext].write_text(text, encoding="utf-8")
    if len(kept) == len(files):
        print(f"{args.out} already holds {cal.key}'s GQR files, byte for byte: left as they were", file=sys.stderr)
    else:
        print(f"wrote {cal.key}.spec, {cal.key}/calculus/{cal.key}.comp and .conv to {args.out} "
              f"(a GQR data folder)", file=sys.stderr)
    return 0


def _calculus_witness(name: str, relations: list[str]) -> int:
    """Print a drawn configuration behind one entry of the RCC-22 composition table."""
    from ..qstr import get_calculus
    from ..qstr.calculus import CalculusError
    from ..qstr.descriptions import draw_cells
    from ..qstr.rcc23_witnesses import find_witness
    from ..qstr.topology import rcc23_code
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


def add_entities(sub) -> None:
    """``stsim entities info | strata [SUITE]``."""
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


def cmd_entities(args) -> int:
    """``stsim entities``: the entity store's sources and counts, or a geoqa suite's strata."""
    from ..geoqa.store import StoreError, info_text
    try:
        if args.entities_command == "strata":
            from ..benchmarks.geoqa_suites import composition, format_composition
            c = composition(args.suite, args.family)
            if args.languages:
                from ..benchmarks.geoqa_suites import format_language_composition, language_composition
                c["languages"] = language_composition(args.suite, args.family)
            print(json.dumps(c, indent=1) if args.json else format_composition(c) + (
                "\n\n" + format_language_composition(c["languages"]) if args.languages else ""))
        else:
            print(info_text())
    except StoreError as exc:
        raise CLIError(str(exc)) from None
    return 0
