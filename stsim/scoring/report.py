"""Human-readable reports: the per-family table printed by ``stsim run`` / ``stsim score``.

Numeric families show our physical errors (Euclidean distance, absolute time difference, or a
relative L2 error for field families) and, for STARK families, STARK's own per-item convention
(``stark_trimmed``, :mod:`stsim.scoring.stark_metric`) with STARK Table 3's best model figure
beside it: the paper's figure is only comparable with the STARK-convention column."""
from __future__ import annotations

import math
from typing import Any

from .stark_metric import STARK_TRIM, TS_LEN

#: Best (lowest) trimmed RMSE per family among the 11 models of STARK Table 3, with the model
#: (STARK's per-item convention: compare with ``stark_trimmed``, not with our Euclidean figures).
PAPER_BEST: dict[str, tuple[float, str]] = {
    "stark.localization.range": (0.036, "o3"),
    "stark.localization.bearing": (0.117, "o4-mini"),
    "stark.localization.range_bearing": (0.043, "o3"),
    "stark.localization.proximity": (0.915, "gpt-4.5"),
    "stark.localization.event": (0.177, "o3"),
    "stark.temporal_localization.event": (0.059, "o3"),
    "stark.tracking.range": (0.669, "o3"),
    "stark.tracking.bearing": (0.580, "o3"),
    "stark.tracking.range_bearing": (0.113, "o3"),
    "stark.tracking.proximity": (1.798, "o3"),
    "stark.tracking.event": (1.052, "o3"),
    "stark.temporal_tracking.event": (0.059, "o3"),
    # field variable prediction: trimmed RMSPE
    "stark.field.spatial_impute": (0.000, "o3"),
    "stark.field.spatiotemporal_forecast": (0.070, "Mistral-7B"),
    "stark.field.spatiotemporal_impute": (0.029, "Mistral-7B"),
    "stark.field.temporal_impute": (0.044, "deepseek"),
}


def _f(x: Any, w: int = 9) -> str:
    if x is None:
        return "-".rjust(w)
    if isinstance(x, float):
        if not math.isfinite(x) or abs(x) >= 1e5:  # huge or overflowed errors: 1.414e+200, inf
            return f"{x:{w}.4g}"
        return f"{x:{w}.4f}"
    return str(x).rjust(w)


def format_table(families: dict[str, dict[str, Any]]) -> str:
    """A fixed-width table of a ``summary.json`` ``families`` mapping."""
    numeric = {f: r for f, r in families.items() if "accuracy" not in r}
    categorical = {f: r for f, r in families.items() if "accuracy" in r}
    lines = []
    if numeric:
        w = max(len(f) for f in numeric)
        stark = any("stark_n" in r for r in numeric.values())
        head = (f"{'family':<{w}}  {'n':>5}  {'measure':>7}  {'trim.err':>9}  {'RMS.err':>9}  {'median':>9}  "
                f"{'failed':>6}")
        if stark:
            head += f"  {'STARK trim':>10}  {'inst':>4}  {'fail':>4}  {'STARK best (Table 3)':>20}"
        lines.append(head)
        for f, r in numeric.items():
            line = (f"{f:<{w}}  {r['n']:>5}  {measure(f, r):>7}  {_f(r.get('trimmed_rmse'))}  {_f(r.get('rmse'))}  "
                    f"{_f(r.get('median_error'))}  {r['failures']:>6}")
            if stark:
                best = PAPER_BEST.get(f)
                b = f"{best[0]:.3f} ({best[1]})" if best else "-"
                if "stark_n" in r:
                    line += (f"  {_f(r.get('stark_trimmed'), 10)}  {r['stark_n']:>4}  {r['stark_failures']:>4}  "
                             f"{b:>20}")
                else:
                    line += f"  {'-':>10}  {'-':>4}  {'-':>4}  {b:>20}"
            lines.append(line)
    if categorical:
        w = max(len(f) for f in categorical)
        if lines:
            lines.append("")
        lines.append(f"{'family':<{w}}  {'n':>5}  {'accuracy':>9}  {'partial':>9}  {'failed':>6}  "
                     f"{'random':>9}  {'rnd.part':>9}  {'chance':>9}")
        for f, r in categorical.items():
            acc = "n/a".rjust(9) if r["accuracy"] is None else _f(r["accuracy"])
            lines.append(f"{f:<{w}}  {r['n']:>5}  {acc}  {_f(r.get('partial_accuracy'))}  "
                         f"{r['failures']:>6}  {_f(r.get('random_accuracy'))}  "
                         f"{_f(r.get('random_partial_accuracy'))}  {_f(r.get('chance'))}")
        for f, r in categorical.items():
            for key, rows in (r.get("breakdown") or {}).items():
                lines.append("")
                lines.append(format_breakdown(f, key, rows))
    return "\n".join(lines)


def measure(family: str, row: dict[str, Any]) -> str:
    """What our error columns measure for a numeric family: ``rel.L2`` (field families,
    ``||pred - gold|| / ||gold||``), ``abs`` (a time or scalar: absolute difference; ``abs s``
    or ``abs min`` when the summary row names the tasks' time unit, ``row["time_unit"]``) or
    ``eucl`` (Euclidean distance of points and vectors)."""
    if row.get("metric") == "rmspe":
        return "rel.L2"
    if ".temporal_" in family or row.get("error_measure") == "abs" or _answer_format(family) in ("scalar", "time"):
        return f"abs {row['time_unit']}" if row.get("time_unit") else "abs"
    return row.get("error_measure", "eucl")


def _answer_format(family: str) -> str | None:
    """The registered family's answer format, ``None`` for a family not registered here."""
    from ..registry import FAMILIES, load_families
    try:
        load_families()
    except Exception:  # noqa: BLE001 - the report falls back to the name rule
        pass
    fam = FAMILIES.get(family)
    return fam.answer_format if fam is not None else None


def format_breakdown(family: str, key: str, rows: dict[str, dict[str, Any]]) -> str:
    """Accuracy of one family per label of one breakdown key (STARK Tables 29-31 style)."""
    w = max([len(k) for k in rows] + [len(key)])
    out = [f"{family} by {key}", f"  {key:<{w}}  {'n':>5}  {'accuracy':>9}"]
    out += [f"  {label:<{w}}  {v['n']:>5}  {_f(v['accuracy'])}" for label, v in rows.items()]
    return "\n".join(out)


def _heavy(families: dict[str, dict[str, Any]], numeric: list[str]) -> list[str]:
    """Numeric families whose RMS.err is over 3x their trim.err (a heavy tail of errors)."""
    return [f for f in numeric if (families[f].get("rmse") or 0) > 3 * (families[f].get("trimmed_rmse") or float("inf"))]


def _xyt_units(families: dict[str, dict[str, Any]], numeric: list[str]) -> str:
    """``"family: unit, ..."`` of the x-y-t families among ``numeric`` whose rows name their
    time unit (``row["time_unit"]``: the unit of dt in their error); "" when none does."""
    return ", ".join(f"{f}: {families[f]['time_unit']}" for f in numeric
                     if f.endswith("event_xyt") and families[f].get("time_unit"))


def _pct(trim: float) -> str:
    """A trim fraction as the legends print it: 0.1 -> '10 %', 0.125 -> '12.5 %'."""
    return f"{100 * trim:g} %"


def _trimmed_words(trim: float) -> str:
    """What the trim did, for 'X ... {words}': 'after dropping the 10 % smallest and largest'
    or, with ``--trim 0``, 'with nothing dropped (--trim 0)'."""
    return "with nothing dropped (--trim 0)" if trim == 0 else f"after dropping the {_pct(trim)} smallest and largest"


def _off_stark_scale(trim: float, max_steps: int | None, tracking: bool) -> str:
    """How this table's STARK aggregation differs from the paper's ('--trim 0.25', '--max-steps
    5'); "" when it is the paper's (trim 10 %, tracking over the first 10 steps)."""
    diff = ([] if trim == STARK_TRIM else [f"--trim {trim:g}"]) + \
           ([] if not tracking or max_steps == TS_LEN else [f"--max-steps {max_steps or 0}"])
    return " and ".join(diff)


def short_legend(families: dict[str, dict[str, Any]], explain: str, *, trim: float,
                 max_steps: int | None) -> str:
    """What the printed table's columns are, in a few lines, and the command (``explain``,
    e.g. ``stsim run quickstart --explain``) that prints the full :func:`legend`: every
    convention, its source and the notes about this run's families.

    Args:
        trim: the fraction trimmed each side in the table's trimmed columns (``--trim``).
        max_steps: tracking steps scored per task (``--max-steps``; ``None``: all).
    """
    numeric = [f for f, r in families.items() if "accuracy" not in r]
    categorical = [f for f, r in families.items() if "accuracy" in r]
    # n is every item of the family (summarise: len(items)), failed ones included, not only
    # the items with an error or a verdict
    lines = ["n: items, failed ones included" + (" (a tracking task: one per scored step)" if any(
        "tracking" in f for f in families) else "") + ("; trim.err / RMS.err / median: our physical error per "
                                                        "item ('measure': eucl in the task's plane units, km "
                                                        "for event tasks; abs in s or min; rel.L2 a ratio), "
                                                        + ("trim.err: nothing trimmed (--trim 0), as RMS.err."
                                                           if trim == 0 else
                                                           f"trim.err without the {_pct(trim)} smallest and largest.")
                                                        if numeric else ".")]
    if any(f.endswith("event_xyt") for f in numeric):   # the one error that mixes units: not left to --explain
        units = _xyt_units(families, numeric)
        lines.append("event_xyt: the error is the norm of (dx km, dy km, dt) together, mixing units"
                     + (f" (dt in {units})." if units else "."))
    stark = [f for f in numeric if "stark_n" in families[f]]
    if stark:
        off = _off_stark_scale(trim, max_steps, any("tracking" in f for f in stark))
        lines.append("STARK trim / inst / fail: STARK's own per-item convention and its instance counts; "
                     "'STARK best (Table 3)' is the paper's best model on its own tasks, on that scale"
                     + (f" when made as the paper does (10 % trimmed, tracking over the first 10 steps), which "
                        f"{off} is not." if off else "."))
    if categorical:
        lines.append("accuracy / partial: correct / partial credit; random / rnd.part / chance: the random-guess "
                     "reference on the same tasks and its expectation.")
    lines.append("failed: items with no usable answer, " + ", ".join(
        (["left out of the error columns"] if numeric else []) + (["counted wrong in accuracy"] if categorical else []))
        + ".")
    heavy = _heavy(families, numeric)
    notes = [f"RMS.err over 3x trim.err for {', '.join(heavy)} (a few items far off the rest: "
             "trim.err leaves them out)"] if heavy else []
    notes += ["accuracy n/a for a family with no answer at all"] if any(
        families[f]["accuracy"] is None for f in categorical) else []
    if notes:   # on a line of its own: inside the legend's last line it was easy to miss
        lines.append("Note on this run: " + "; ".join(notes) + ".")
    lines.append(f"Full legend and notes: {explain}" if notes else f"Full legend: {explain}")
    return "\n".join(lines)


def legend(families: dict[str, dict[str, Any]], *, trim: float, max_steps: int | None) -> str:
    """The notes that explain the printed table, only those that apply to its families (the
    full legend: ``--explain``; :func:`short_legend` is printed by default).

    Args:
        trim: the fraction trimmed each side in the table's trimmed columns (``--trim``).
        max_steps: tracking steps scored per task (``--max-steps``; ``None``: all).
    """
    numeric = [f for f, r in families.items() if "accuracy" not in r]
    categorical = [f for f, r in families.items() if "accuracy" in r]
    steps = "every step" if max_steps is None else "the first step" if max_steps == 1 else f"the first {max_steps}"
    notes = ["'n' counts items, failed ones included" + (
        f": one per scored step of a tracking task ({steps}, --max-steps), one per task otherwise"
        if any("tracking" in f for f in families) else "") + "."]
    if numeric:
        notes.append("Our columns (trim.err, RMS.err, median) are physical errors per item, as 'measure' says: "
                     "eucl = Euclidean distance in the task's plane units (km for event tasks), abs = absolute "
                     "time error (abs s: seconds, abs min: minutes), rel.L2 = ||pred - gold|| / ||gold|| (field families); trim.err is "
                     f"their root mean square {_trimmed_words(trim)}"
                     + (" (STARK §4.1)." if trim == STARK_TRIM else "; STARK §4.1 drops 10 %."))
    if any(f.endswith("event_xyt") for f in numeric):
        units = _xyt_units(families, numeric)
        notes.append("event_xyt families answer [x, y, t0]; our error is the Euclidean norm of "
                     "(dx km, dy km, dt s or min) together, so it mixes units"
                     + (f" (dt in {units})." if units else "."))
    if "stark.field.spatial_impute" in numeric:
        notes.append("stark.field.spatial_impute: STARK's prompt states the rule (inverse-distance weighting of "
                     "the shown readings) and its gold follows that rule, so a solver applying it scores 0 "
                     "(Table 3: o3, 0.000); the gold is computed from the inputs, it does not leak into them.")
    stark = [f for f in numeric if "stark_n" in families[f]]
    if stark:
        off = _off_stark_scale(trim, max_steps, any("tracking" in f for f in stark))
        pooled = "all its steps" if max_steps is None else f"its first {max_steps} step{'s' * (max_steps != 1)}"
        notes.append("'STARK trim' is STARK's own convention (its released distance.py/main.py): per item the "
                     "root mean square over the coordinates (a 2-D point: Euclidean error / sqrt 2), one value per "
                     f"tracking instance over {pooled} pooled, the relative L2 norm for field families "
                     "(x-y-t localisation: the spatial part; the temporal part is stark_trimmed_time in "
                     f"summary.json); the mean of the per-item values {_trimmed_words(trim)}. "
                     "Its 'inst' and 'fail' count instances (not steps); 'STARK best (Table 3)' is on this scale"
                     + (f" only with STARK's 10 % trim and first 10 steps, not with this table's {off}." if off
                        else "."))
    heavy = _heavy(families, numeric)
    if heavy:
        notes.append(f"RMS.err is over 3x trim.err for {', '.join(heavy)}"
                     ": a few items have errors far above the rest (e.g. a first tracking step whose one or two "
                     "readings leave the position ambiguous, or a tracker that lost its target for some "
                     "steps); trim.err leaves them out, RMS.err keeps them, the median shows the typical item.")
    failed = "'failed' counts items with no usable answer (no estimate, unparsable, refused, missing)"
    effects = ([] if not numeric else ["they are left out of the error columns"]) + \
              ([] if not categorical else ["they count as wrong in 'accuracy'"])
    notes.append(failed + ("; " + " and ".join(effects) if effects else "") + ".")
    if any(f in PAPER_BEST for f in numeric):
        notes.append("'STARK best' is the best model of STARK Table 3 on the paper's own (~15-item) "
                     "subsets of its released tasks: context, not the same tasks as this run; compare it with "
                     "'STARK trim', not with our Euclidean columns.")
    if any(families[f]["accuracy"] is None for f in categorical):
        notes.append("accuracy n/a: the solver gave no answer for any item of the family (no_estimate: e.g. "
                     "world-knowledge items have no first-principle baseline); it is not a score of 0.")
    if categorical:
        notes.append("'random' / 'rnd.part' are the measured random-guess reference on the same tasks, "
                     "'chance' its expected accuracy; 'partial' is partial credit (DE-9IM: fraction of "
                     "correct matrix cells).")
    return "\n".join(notes)
