"""Human-readable reports: the per-family table printed by ``stsim run`` / ``stsim score``,
with STARK Table 3's best model figure next to ours for context."""
from __future__ import annotations

import math
from typing import Any

#: Best (lowest) trimmed RMSE per family among the 11 models of STARK Table 3, with the model.
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
        lines.append(f"{'family':<{w}}  {'n':>5}  {'trim.RMSE':>9}  {'RMSE':>9}  {'median':>9}  "
                     f"{'failed':>6}  {'STARK best (Table 3)':>20}")
        for f, r in numeric.items():
            best = PAPER_BEST.get(f)
            b = f"{best[0]:.3f} ({best[1]})" if best else "-"
            lines.append(f"{f:<{w}}  {r['n']:>5}  {_f(r.get('trimmed_rmse'))}  {_f(r.get('rmse'))}  "
                         f"{_f(r.get('median_error'))}  {r['failures']:>6}  {b:>20}")
    if categorical:
        w = max(len(f) for f in categorical)
        if lines:
            lines.append("")
        lines.append(f"{'family':<{w}}  {'n':>5}  {'accuracy':>9}  {'partial':>9}  {'failed':>6}  "
                     f"{'random':>9}  {'rnd.part':>9}  {'chance':>9}")
        for f, r in categorical.items():
            lines.append(f"{f:<{w}}  {r['n']:>5}  {_f(r['accuracy'])}  {_f(r.get('partial_accuracy'))}  "
                         f"{r['failures']:>6}  {_f(r.get('random_accuracy'))}  "
                         f"{_f(r.get('random_partial_accuracy'))}  {_f(r.get('chance'))}")
        for f, r in categorical.items():
            for key, rows in (r.get("breakdown") or {}).items():
                lines.append("")
                lines.append(format_breakdown(f, key, rows))
    return "\n".join(lines)


def format_breakdown(family: str, key: str, rows: dict[str, dict[str, Any]]) -> str:
    """Accuracy of one family per label of one breakdown key (STARK Tables 29-31 style)."""
    w = max([len(k) for k in rows] + [len(key)])
    out = [f"{family} by {key}", f"  {key:<{w}}  {'n':>5}  {'accuracy':>9}"]
    out += [f"  {label:<{w}}  {v['n']:>5}  {_f(v['accuracy'])}" for label, v in rows.items()]
    return "\n".join(out)


def legend(families: dict[str, dict[str, Any]]) -> str:
    """The notes that explain the printed table, only those that apply to its families."""
    numeric = [f for f, r in families.items() if "accuracy" not in r]
    categorical = [f for f, r in families.items() if "accuracy" in r]
    notes = []
    if any("tracking" in f for f in families):
        notes.append("'n' counts scored items: one per scored step of a tracking task (the first 10 "
                     "by default), one per task otherwise.")
    if numeric:
        notes.append("Errors are distances in the task's plane units (km for event tasks) or absolute "
                     "time errors (s or min); trim.RMSE drops the 10 % smallest and 10 % largest errors "
                     "(STARK §4.1).")
    if any(f.endswith("event_xyt") for f in numeric):
        notes.append("event_xyt families answer [x, y, t0]; their error is the Euclidean norm of "
                     "(dx km, dy km, dt s or min) together, so it mixes units.")
    if any(families[f].get("metric") == "rmspe" for f in numeric):
        notes.append("Field families (stark.field.*) report RMSPE: errors divided by the gold's "
                     "magnitude (vector answers: relative L2 error).")
    failed = "'failed' counts items with no usable answer (no estimate, unparsable, refused, missing)"
    effects = ([] if not numeric else ["they are left out of the error columns"]) + \
              ([] if not categorical else ["they count as wrong in 'accuracy'"])
    notes.append(failed + ("; " + " and ".join(effects) if effects else "") + ".")
    if any(f in PAPER_BEST for f in numeric):
        notes.append("'STARK best' is the best model of STARK Table 3 on the paper's own (~15-item) "
                     "subsets of its released tasks: context, not the same tasks as this run.")
    if categorical:
        notes.append("'random' / 'rnd.part' are the measured random-guess reference on the same tasks, "
                     "'chance' its expected accuracy; 'partial' is partial credit (DE-9IM: fraction of "
                     "correct matrix cells).")
    return "\n".join(notes)
