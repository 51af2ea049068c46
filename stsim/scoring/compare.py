"""Compare two runs family by family (``stsim compare RUN_A RUN_B``), e.g. direct answer (A)
against code interpreter (B), as STARK §4.4 / Table 4 does: the relative change in trimmed
RMSE, ``(RMSE_B - RMSE_A) / RMSE_A``, with the top and bottom 25 % of each run's errors removed
(negative = B is better).  Failures are counted, not trimmed away: they have no error.
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

from ..records import RecordError, iter_jsonl
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


def _family_errors(run: str | Path) -> dict[str, dict[str, Any]]:
    path = Path(run) / "scores.jsonl" if Path(run).is_dir() else Path(run)
    fams: dict[str, dict[str, Any]] = defaultdict(lambda: {"errors": [], "n": 0, "failures": 0})
    for lineno, obj in iter_jsonl(path):
        if "family" not in obj or "status" not in obj:
            raise RecordError(f"{path}:{lineno}: a score needs 'family' and 'status'")
        f = fams[obj["family"]]
        f["n"] += 1
        if obj["status"] != "ok":
            f["failures"] += 1
        elif obj.get("error") is not None:
            f["errors"].append(float(obj["error"]))
    return dict(fams)


def compare_runs(run_a: str | Path, run_b: str | Path, trim: float = STARK_CI_TRIM) -> dict[str, dict[str, Any]]:
    """Per family present in both runs: n, failures and trimmed RMSE of each, and
    ``relative_change`` of B against A (``None`` when undefined: no errors, or A's RMSE is 0).

    Args:
        run_a, run_b: run folders (holding ``scores.jsonl``) or ``scores.jsonl`` files.
        trim: fraction of errors removed on each side before the RMSE (STARK §4.4: 0.25).
    Raises:
        RecordError: a missing or malformed scores file.
        NothingToCompare: (a RecordError) no family is in both runs, naming each run's families.
    """
    a, b = _family_errors(run_a), _family_errors(run_b)
    if not set(a) & set(b):
        raise NothingToCompare(f"no family in common: {_families_text(run_a, a)}; {_families_text(run_b, b)}")
    out = {}
    for fam in sorted(set(a) & set(b)):
        ra = trimmed_rmse(a[fam]["errors"], trim) if a[fam]["errors"] else None
        rb = trimmed_rmse(b[fam]["errors"], trim) if b[fam]["errors"] else None
        change = None if ra is None or rb is None or ra == 0 else (rb - ra) / ra
        out[fam] = {"n_a": a[fam]["n"], "n_b": b[fam]["n"], "failures_a": a[fam]["failures"],
                    "failures_b": b[fam]["failures"], "trimmed_rmse_a": ra, "trimmed_rmse_b": rb,
                    "relative_change": change}
    return out


def format_comparison(rows: dict[str, dict[str, Any]]) -> str:
    """Fixed-width table of :func:`compare_runs` (at least one row)."""
    w = max(len(f) for f in rows)
    f4 = lambda x: "-".rjust(9) if x is None else f"{x:9.4f}"  # noqa: E731
    lines = [f"{'family':<{w}}  {'n A':>5}  {'n B':>5}  {'fail A':>6}  {'fail B':>6}  {'trim.RMSE A':>11}  "
             f"{'trim.RMSE B':>11}  {'change':>8}"]
    for fam, r in rows.items():
        ch = "-" if r["relative_change"] is None else f"{100 * r['relative_change']:+.1f}%"
        lines.append(f"{fam:<{w}}  {r['n_a']:>5}  {r['n_b']:>5}  {r['failures_a']:>6}  {r['failures_b']:>6}  "
                     f"{f4(r['trimmed_rmse_a']):>11}  {f4(r['trimmed_rmse_b']):>11}  {ch:>8}")
    return "\n".join(lines)
