"""The geoqa report: EM, NE, coverage and EM over covered items per spatial-function family
(SFID) and per answer format (seed 003 §4: "EM and NE are the means of E and e over the N
questions ... coverage (Cov), the share of questions receiving a parseable answer, and EM_cov
over those, so that EM = Cov x EM_cov").  Items without a usable answer (refusal, format
error, no estimate, missing, and the agentic tier's ``budget_exhausted``) count EM 0 and NE 1
and are not covered; ``budget_exhausted`` is counted apart and is no refusal (FRR / NRR
exclude it, :mod:`stsim.scoring.geoqa_premise`).
"""
from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from ..records import Answer, Task


def geoqa_table(tasks: list[Task], answers: list[Answer]) -> dict[str, Any]:
    """Per-SFID and per-format EM / NE / Cov / EM_cov with counts, and the overall row."""
    from .score import score_answers
    scores = score_answers(tasks, answers)
    by_task = {t.id: t for t in tasks}
    groups: dict[str, dict[str, list]] = {"sfid": defaultdict(list), "format": defaultdict(list)}
    overall = []
    for s in scores:
        t = by_task[s.task_id]
        if t.inputs.get("premise") == "false":
            continue  # EM / NE / Cov are over true-premise questions (seed 003 §4); see premise_table
        em = int(s.correct or 0) if s.status == "ok" else 0
        ne = float(s.extra.get("ne", 1.0 - em)) if s.status == "ok" else 1.0
        row = (em, ne, s.status == "ok")
        groups["sfid"][t.inputs.get("sfid", "?")].append(row)
        groups["format"][t.answer_format].append(row)
        overall.append(row)

    def stats(rows):
        n = len(rows)
        cov = sum(r[2] for r in rows)
        em = sum(r[0] for r in rows)
        return {"n": n, "em": round(em / n, 6), "ne": round(sum(r[1] for r in rows) / n, 6),
                "coverage": round(cov / n, 6), "em_cov": round(em / cov, 6) if cov else None}
    out = {k: {label: stats(rows) for label, rows in sorted(g.items())} for k, g in groups.items()}
    out["overall"] = stats(overall) if overall else None
    from .geoqa_premise import premise_table
    out["premise"] = premise_table(tasks, answers)
    from .geoqa_strata import strata_table
    out["strata"] = strata_table(tasks, scores)
    from .geoqa_languages import language_table
    out["languages"] = language_table(tasks, scores)
    out["n_tasks"] = len(tasks)
    last = {a.task_id: a for a in answers}
    out["budget_exhausted"] = sum(1 for t in tasks if t.id in last and last[t.id].status == "budget_exhausted")
    return out


def format_geoqa_table(result: dict[str, Any]) -> str:
    """One fixed-width table: a block per SFID, a block per answer format, then all items."""
    lines = []
    w = max([len(k) for g in ("sfid", "format") for k in result[g]] + [14])
    head = f"{'':<{w}}  {'n':>6}  {'EM':>6}  {'NE':>6}  {'Cov':>6}  {'EM_cov':>6}"

    def row(label, r):
        emc = "-" if r["em_cov"] is None else f"{100 * r['em_cov']:.1f}"
        return (f"{label:<{w}}  {r['n']:>6}  {100 * r['em']:>6.1f}  {100 * r['ne']:>6.1f}  "
                f"{100 * r['coverage']:>6.1f}  {emc:>6}")
    lines.append(head.replace(" " * w, "SFID".ljust(w), 1))
    lines += [row(k, r) for k, r in result["sfid"].items()]
    lines.append("")
    lines.append(head.replace(" " * w, "answer format".ljust(w), 1))
    lines += [row(k, r) for k, r in result["format"].items()]
    lines.append("")
    if result["overall"] is not None:
        lines.append(row("all", result["overall"]))
    from .geoqa_premise import format_premise
    if result.get("premise"):
        lines.append(format_premise(result["premise"]))
    if result.get("budget_exhausted"):
        lines.append(f"\nagentic step budget used up on {result['budget_exhausted']} question(s): no answer "
                     "(EM 0, NE 1, not covered), not a refusal (left out of FRR and NRR).")
    from .geoqa_strata import format_strata
    if result.get("strata"):
        lines.append(format_strata(result["strata"]))
    from .geoqa_languages import format_languages
    if result.get("languages"):
        lines.append(format_languages(result["languages"]))
    lines.append("EM, NE, Cov, EM_cov in % (seed 003 §4): EM exact match under each format's tolerance, "
                 "NE normalised error (0 best; 1 for refusals and format errors), Cov share of parseable "
                 "answers, EM_cov = EM / Cov. Tolerances: docs/answer-formats.md.")
    return "\n".join(lines)


def geoqa_analysis(tasks: list[Task], answers: list[Answer], out_dir: Path | None) -> dict[str, Any]:
    """The ``geoqa.`` analysis of :data:`stsim.scoring.score.ANALYSES`; writes
    ``geoqa_report.json`` into ``out_dir`` when given."""
    result = geoqa_table(tasks, answers)
    text = format_geoqa_table(result)
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "geoqa_report.json").write_text(json.dumps(result, indent=1, sort_keys=True), encoding="utf-8")
    return {**result, "headline": text, "replaces_family_table": True}
