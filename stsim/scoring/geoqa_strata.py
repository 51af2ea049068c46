"""EM by income x density stratum, standardised to the run's SFID mix (seed 003 §5.3).

Strata differ in which spatial functions their questions ask (country questions carry no
density tier, simulated-city questions no income tier), so a raw EM per stratum mixes
difficulty with geography.  Direct standardisation: with ``w_f`` the share of SFID ``f``
among all true-premise questions of the run and ``EM_{s,f}`` the EM of stratum ``s`` on SFID
``f``, ``EM_std(s) = sum_f w_f EM_{s,f} / sum_f w_f`` over the SFIDs stratum ``s`` has
questions of.  Rows by income tier, by density tier and by cell (``INCOME/DENSITY``).
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any


def standardised(rows: list[tuple[str, str, int]]) -> dict[str, dict[str, Any]]:
    """``rows``: (stratum label, SFID, EM 0/1) per true-premise question.  Returns label ->
    ``{"n", "em", "em_std"}`` (EM as a share; ``em_std`` standardised to the SFID mix of all
    rows)."""
    n = len(rows)
    if not n:
        return {}
    w: dict[str, float] = defaultdict(float)
    cells: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for label, sfid, em in rows:
        w[sfid] += 1.0 / n
        cells[label][sfid].append(em)
    out = {}
    for label, by in sorted(cells.items()):
        tot = sum(len(v) for v in by.values())
        num = sum(w[f] * (sum(v) / len(v)) for f, v in by.items())
        den = sum(w[f] for f in by)
        out[label] = {"n": tot, "em": round(sum(sum(v) for v in by.values()) / tot, 6),
                      "em_std": round(num / den, 6)}
    return out


def strata_table(tasks, scores) -> dict[str, Any] | None:
    """Income, density and cell rows of :func:`standardised` for the true-premise tasks that
    carry ``inputs["stratum"]``; None when none does."""
    by_task = {t.id: t for t in tasks}
    rows = []
    for s in scores:
        t = by_task[s.task_id]
        if t.inputs.get("premise") == "false" or "stratum" not in t.inputs:
            continue
        em = int(s.correct or 0) if s.status == "ok" else 0
        rows.append((t.inputs["stratum"], t.inputs.get("sfid", "?"), em))
    if not rows:
        return None
    return {"income": standardised([(lab.split("/")[0], f, e) for lab, f, e in rows]),
            "density": standardised([(lab.split("/")[1], f, e) for lab, f, e in rows]),
            "cell": standardised(rows)}


def format_strata(r: dict[str, Any]) -> str:
    lines = ["", f"{'stratum':<24}  {'n':>6}  {'EM':>6}  {'EM_std':>6}"]
    for key in ("income", "density"):
        for label, row in r[key].items():
            lines.append(f"{key + ' ' + label:<24}  {row['n']:>6}  {100 * row['em']:>6.1f}  {100 * row['em_std']:>6.1f}")
    lines.append("EM_std: EM standardised to the run's SFID mix (seed 003 §5.3); strata are proxies "
                 "(income: GDP per capita at World Bank FY2026 thresholds; density: H3-res-3 terciles "
                 "of GeoNames populations), docs/geoqa.md.")
    return "\n".join(lines)
