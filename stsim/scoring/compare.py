"""Compare two runs family by family (``stsim compare RUN_A RUN_B``), e.g. direct answer (A)
against code interpreter (B), as STARK §4.4 / Table 4 does: the relative change in trimmed
RMSE, ``(RMSE_B - RMSE_A) / RMSE_A``, with the top and bottom 25 % of each run's errors removed
(negative = B is better).  Failures are counted, not trimmed away: they have no error.
Categorical families compare accuracy (B - A).  Every compared figure (failures, RMSE,
accuracy, change) is taken over the items (task and step) both runs scored, so the two sides
answer the same questions; each difference comes with a paired bootstrap 95 % interval over
those items, and runs of different seeds, suites or task sets are named in warnings
(:func:`run_mismatches`).
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from ..records import RUN_FOLDER_FILES, RecordError, iter_jsonl
from .metrics import trimmed_rmse

STARK_CI_TRIM = 0.25  # STARK §4.4: "removing the top and bottom 25% of data points"


class NothingToCompare(RecordError):
    """The two runs share no family, so there is no row to compare."""


def _families_text(run: str | Path, fams: dict[str, Any]) -> str:
    names = sorted(fams)
    if not names:
        return f"{run} has no scored family"
    shown = ", ".join(names[:4]) + (f", ... ({len(names)} in all)" if len(names) > 4 else "")
    return f"{run} has {shown}"


#: the files of a run folder that are not its scores (given to compare by mistake)
_OTHER_RUN_FILES = tuple(n for n in RUN_FOLDER_FILES if n != "scores.jsonl")


def _family_items(run: str | Path) -> dict[str, dict[tuple[str, Any], dict[str, Any]]]:
    """family -> {(task_id, step): {"status", "error", "correct"}} from a run's scores.jsonl."""
    if not Path(run).exists():
        raise RecordError(f"{run}: no such run folder or scores.jsonl")
    path = Path(run) / "scores.jsonl" if Path(run).is_dir() else Path(run)
    if path.name in _OTHER_RUN_FILES and (path.parent / "scores.jsonl").is_file():
        raise RecordError(f"{path}: is the run's {path.name}, not its scores; give the run folder "
                          f"{path.parent} or {path.parent / 'scores.jsonl'}")
    fams: dict[str, dict[tuple[str, Any], dict[str, Any]]] = defaultdict(dict)
    for lineno, obj in iter_jsonl(path):
        if "family" not in obj or "status" not in obj:
            raise RecordError(f"{path}:{lineno}: a score needs 'family' and 'status'")
        fams[obj["family"]][(str(obj.get("task_id")), obj.get("step"))] = {
            "status": obj["status"], "error": obj.get("error"), "correct": obj.get("correct")}
    if not fams:  # not 'no family in common': the file itself holds nothing
        raise RecordError(f"{path}: contains no scores (the file is empty or blank)")
    return dict(fams)


def _run_meta(run: str | Path) -> dict[str, Any]:
    """The run's summary.json (``{}`` when absent or unreadable: a bare scores file)."""
    path = Path(run) / "summary.json" if Path(run).is_dir() else Path(run).with_name("summary.json")
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


#: summary.json settings that make two runs answer different questions when they differ.
_SETTINGS = ("suite", "seed", "data", "n_per_family", "families_filter", "max_steps", "tasks")


def run_mismatches(run_a: str | Path, run_b: str | Path,
                   items: dict[str, tuple[set, set]] | None = None) -> list[str]:
    """Warnings naming each difference between two runs that makes their numbers not paired:
    a setting of summary.json (:data:`_SETTINGS`, e.g. the seed) and, per family, items (task
    and step) present in only one run."""
    a, b = _run_meta(run_a), _run_meta(run_b)
    out = [f"the runs differ in {k}: A {a.get(k)!r}, B {b.get(k)!r}" for k in _SETTINGS
           if k in a and k in b and a.get(k) != b.get(k)]
    for fam, (ka, kb) in sorted((items or {}).items()):
        if ka != kb:
            out.append(f"{fam}: {len(ka - kb)} item(s) only in A, {len(kb - ka)} only in B "
                       f"(e.g. {sorted(ka ^ kb, key=str)[0][0]}); "
                       + (f"compared on the {len(ka & kb)} common item(s)" if ka & kb else
                          "no item in common, so no change is given (n/c: not comparable)"))
    return out


def _ci(values: np.ndarray) -> list[float] | None:
    v = values[np.isfinite(values)]
    if len(v) < 2:
        return None
    lo, hi = np.percentile(v, [2.5, 97.5])
    return [round(float(lo), 6), round(float(hi), 6)]


def _correct(r: dict[str, Any]) -> float:
    """1.0 for a correct item, 0.0 otherwise (a failure counts as wrong)."""
    return 1.0 if r["status"] == "ok" and r.get("correct") else 0.0


def compare_runs(run_a: str | Path, run_b: str | Path, trim: float = STARK_CI_TRIM, *,
                 n_boot: int = 1000, seed: int = 0) -> dict[str, dict[str, Any]]:
    """Per family present in both runs, on the items (task, step) both runs scored.

    ``n_a`` / ``n_b`` count each run's items in the family and ``n_common`` those in both;
    every other figure is taken over the ``n_common`` items alone, so that A and B are measured
    on the same questions (an item only one run has, e.g. a run with a larger ``--n``, would
    otherwise move that run's figure and the change with it).  Numeric families: failures and
    trimmed RMSE of each, ``relative_change`` of B against A (``None`` when undefined: no
    errors, or A's RMSE is 0) and its ``ci95``.  Categorical families (scores with
    ``correct``): ``accuracy_a``, ``accuracy_b`` (failures count as wrong), ``accuracy_delta``
    = B - A and its ``ci95``.  With no item in both runs (``n_common`` 0: other tasks, e.g.
    another suite's ids) the two runs answered different questions: the failures, RMSEs /
    accuracies and ``relative_change`` / ``accuracy_delta`` are ``None`` (the change printed
    ``n/c``, not comparable).

    The 95 % intervals are paired bootstrap percentiles (``n_boot`` resamples, fixed ``seed``)
    over the common items: each resample draws the same items for A and B, so item difficulty
    cancels (Efron & Tibshirani 1993, ch. 13); ``None`` with fewer than 2 common items.

    Args:
        run_a, run_b: run folders (holding ``scores.jsonl``) or ``scores.jsonl`` files.
        trim: fraction of errors removed on each side before the RMSE (STARK §4.4: 0.25).
    Raises:
        RecordError: a missing or malformed scores file.
        NothingToCompare: (a RecordError) no family is in both runs, naming each run's families.
    """
    a, b = _family_items(run_a), _family_items(run_b)
    if not set(a) & set(b):
        raise NothingToCompare(f"no family in common: {_families_text(run_a, a)}; {_families_text(run_b, b)}")
    rng = np.random.default_rng(seed)
    out = {}
    for fam in sorted(set(a) & set(b)):
        ia, ib = a[fam], b[fam]
        common = sorted(set(ia) & set(ib), key=str)
        ca, cb = [ia[k] for k in common], [ib[k] for k in common]  # the items compared, same order
        base = {"n_a": len(ia), "n_b": len(ib), "n_common": len(common),
                "failures_a": sum(r["status"] != "ok" for r in ca) if common else None,
                "failures_b": sum(r["status"] != "ok" for r in cb) if common else None}
        categorical = any(r.get("correct") is not None for r in (*ia.values(), *ib.values()))
        idx = rng.integers(0, len(common), (n_boot, len(common))) if len(common) >= 2 else None
        if categorical:
            xa, xb = np.array([_correct(r) for r in ca]), np.array([_correct(r) for r in cb])
            acc_a, acc_b = (round(float(xa.mean()), 6), round(float(xb.mean()), 6)) if common else (None, None)
            ci = None if idx is None else _ci(xb[idx].mean(axis=1) - xa[idx].mean(axis=1))
            out[fam] = {**base, "kind": "categorical", "accuracy_a": acc_a, "accuracy_b": acc_b,
                        "accuracy_delta": round(float(xb.mean() - xa.mean()), 6) if common else None, "ci95": ci}
            continue
        pa, pb = np.array([_err(r) for r in ca]), np.array([_err(r) for r in cb])  # NaN: a failure
        ea, eb = pa[~np.isnan(pa)], pb[~np.isnan(pb)]
        ra = trimmed_rmse(ea, trim) if len(ea) else None
        rb = trimmed_rmse(eb, trim) if len(eb) else None
        change = None if ra is None or rb is None or ra == 0 else (rb - ra) / ra
        ci = None
        if idx is not None:
            boot = []
            for row in idx:
                xa, xb = pa[row], pb[row]
                xa, xb = xa[~np.isnan(xa)], xb[~np.isnan(xb)]
                if len(xa) and len(xb):
                    ta = trimmed_rmse(xa, trim)
                    boot.append((trimmed_rmse(xb, trim) - ta) / ta if ta else np.nan)
            ci = _ci(np.array(boot, dtype=float))
        out[fam] = {**base, "kind": "numeric", "trimmed_rmse_a": ra, "trimmed_rmse_b": rb,
                    "relative_change": change, "ci95": ci}
    return out


def _err(r: dict[str, Any]) -> float:
    """An item's error; NaN when it was not answered.  An ``ok`` numeric item stored with
    ``error: null`` had a non-finite error (an answer with ``Infinity``: strict JSON has no
    infinity, docs/answer-formats.md), so it counts as ``inf``, as in the run's own summary."""
    if r["status"] != "ok":
        return np.nan
    return float(r["error"]) if r["error"] is not None else np.inf


def family_keys(run_a: str | Path, run_b: str | Path) -> dict[str, tuple[set, set]]:
    """family -> (item keys of A, item keys of B), for families in both runs."""
    a, b = _family_items(run_a), _family_items(run_b)
    return {f: (set(a[f]), set(b[f])) for f in set(a) & set(b)}


def format_comparison(rows: dict[str, dict[str, Any]], trim: float = STARK_CI_TRIM) -> str:
    """Fixed-width tables of :func:`compare_runs` (numeric families, then categorical ones):
    each run's item count, the count in common, then the figures over the common items."""
    lines: list[str] = []
    num = {f: r for f, r in rows.items() if r.get("kind", "numeric") == "numeric"}
    cat = {f: r for f, r in rows.items() if r.get("kind") == "categorical"}
    pct = f"t{100 * trim:g}%"
    f4 = lambda x: "-".rjust(11) if x is None else f"{x:11.4f}"  # noqa: E731
    acc = lambda x: "-".rjust(7) if x is None else f"{x:7.4f}"  # noqa: E731
    fails = lambda x: "-" if x is None else x  # noqa: E731
    counts = lambda r: (f"{r['n_a']:>5}  {r['n_b']:>5}  {r['n_common']:>6}  {fails(r['failures_a']):>6}  "  # noqa: E731
                        f"{fails(r['failures_b']):>6}")
    head = f"{'n A':>5}  {'n B':>5}  {'common':>6}  {'fail A':>6}  {'fail B':>6}"
    if num:
        w = max(len(f) for f in num)
        lines.append(f"{'family':<{w}}  {head}  {'RMSE ' + pct + ' A':>11}  "
                     f"{'RMSE ' + pct + ' B':>11}  {'change':>8}  {'95% CI (paired)':>17}")
        for fam, r in num.items():
            ch = "n/c" if not r["n_common"] else "-" if r["relative_change"] is None else \
                f"{100 * r['relative_change']:+.1f}%"
            ci = "-" if not r.get("ci95") else f"[{100 * r['ci95'][0]:+.1f}%, {100 * r['ci95'][1]:+.1f}%]"
            lines.append(f"{fam:<{w}}  {counts(r)}  "
                         f"{f4(r['trimmed_rmse_a'])}  {f4(r['trimmed_rmse_b'])}  {ch:>8}  {ci:>17}")
    if cat:
        if lines:
            lines.append("")
        w = max(len(f) for f in cat)
        lines.append(f"{'family':<{w}}  {head}  {'acc A':>7}  {'acc B':>7}  "
                     f"{'B - A':>7}  {'95% CI (paired)':>17}")
        for fam, r in cat.items():
            ci = "-" if not r.get("ci95") else f"[{r['ci95'][0]:+.3f}, {r['ci95'][1]:+.3f}]"
            delta = "n/c" if r["accuracy_delta"] is None else f"{r['accuracy_delta']:+7.4f}"
            lines.append(f"{fam:<{w}}  {counts(r)}  "
                         f"{acc(r['accuracy_a'])}  {acc(r['accuracy_b'])}  {delta:>7}  {ci:>17}")
    lines += ["", "n A / n B: items (task and step) each run scored; common: items both runs scored. Every "
              "other column (fail, " + ("RMSE, change" if num else "") + (", " if num and cat else "")
              + ("acc, B - A" if cat else "") + ", CI) is over the common items alone."]
    if any(not r["n_common"] for r in rows.values()):
        lines += ["n/c: not comparable, the two runs have no item (task and step) in common in that family."]
    return "\n".join(lines)
