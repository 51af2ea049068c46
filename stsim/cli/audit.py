"""``stsim audit`` and ``stsim fidelity``: every gold answer checked against its readings and
noise model (or shapely / Allen), and a generated suite compared with the released tasks."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from ..records import GoldError, RecordError
from .common import MAX_N_PER_FAMILY, N_WHY, CLIError, int_at_least


def add_audit(sub) -> None:
    """``stsim audit TASKS``."""
    a = sub.add_parser("audit", help="check every gold answer against its readings and noise model, "
                       "or (relation tasks) against shapely / Allen on the printed numbers, or (QSTR questions) "
                       "against the calculus' converse, composition and neighbourhood tables")
    a.add_argument("tasks", type=Path, help="the full tasks JSONL (stsim generate -o, or a run's tasks.jsonl)")
    a.add_argument("--limit", type=int_at_least(0), default=50, help="violations to print (default 50)")


def _source_of(task) -> str:
    """`` [source: ...]`` naming where a task came from (``meta.source`` and ``meta.instance``,
    e.g. the released STARK folder and instance number), or ``""`` for generated tasks."""
    src = task.meta.get("source")
    if not src:
        return ""
    inst = task.meta.get("instance")
    return f" [source: {src}" + (f", instance {inst}" if inst is not None else "") + "]"


def cmd_audit(args) -> int:
    """``stsim audit``: print the inconsistent gold answers; exit 1 when there are any."""
    from ..scoring.audit import audit_tasks
    from ..records import read_task_lines
    from ..registry import validate_task
    from ..scoring.audit import AuditResult
    from ..scoring.audit_relations import RELATION_FAMILIES
    numbered = read_task_lines(args.tasks)
    tasks = [t for _, t in numbered]
    valid, report = [], []
    for line, t in numbered:
        try:
            validate_task(t)
            valid.append(t)
        except GoldError as exc:     # well-formed inputs, a gold they do not give: a finding
            report.append(AuditResult(t.id, None, False, 1.0, f"[label] {exc}"))
        except RecordError as exc:
            if t.family not in RELATION_FAMILIES:
                raise CLIError(f"{exc} (in {args.tasks}, line {line})") from None
            report.append(AuditResult(t.id, None, False, 1.0, f"[degenerate] {exc}"))
    report += audit_tasks(valid)
    bad = [r for r in report if not r.ok]
    skipped = sum(1 for r in report if r.skipped)
    checked = len(report) - skipped
    where = {t.id: _source_of(t) for t in tasks}
    for r in bad[: args.limit]:
        print(f"FAIL {r.task_id}" + (f" step {r.step}" if r.step is not None else "") + where.get(r.task_id, "") +
              f": {r.reason} (violation {r.violation:.6g})")
    if len(bad) > args.limit:
        print(f"... and {len(bad) - args.limit} more")
    tags = Counter(r.reason.split("]", 1)[0] + "]" for r in bad if r.reason.startswith("["))
    if tags:
        print("findings by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(tags.items())))
    print(f"audited {checked} item(s) of {len(tasks)} task(s): {len(bad)} inconsistent"
          + (f", {skipped} skipped (family has no audit rule)" if skipped else ""))
    return 1 if bad else 0


def add_fidelity(sub) -> None:
    """``stsim fidelity SUITE --data DIR``."""
    fi = sub.add_parser("fidelity", help="compare a generated suite's tasks with the released ones, "
                        "feature by feature (two-sample KS, Benjamini-Hochberg)",
                        description="Generate N tasks per family of SUITE, load the released counterparts "
                        "from --data, and compare per-task features (sensor geometry, gold position, noise, "
                        "readings per step, trajectory shape, feasible region, emission times) with "
                        "two-sample Kolmogorov-Smirnov tests; a feature is flagged (*) when its "
                        "Benjamini-Hochberg adjusted p is below --alpha. Exit 1 when any feature is "
                        "flagged. See docs/stark-tier1.md, 'Fidelity report'.")
    fi.add_argument("suite", help="a generated suite with released counterparts (listed at the end of --help)")
    fi.add_argument("--data", type=Path, required=True, help="released data: folder or data_final.tar.gz")
    fi.add_argument("--n", type=int_at_least(2, MAX_N_PER_FAMILY, N_WHY), default=200, metavar="N",
                    help="generated tasks per family (default 200)")
    fi.add_argument("--seed", type=int_at_least(0), default=0, help="suite seed (default 0)")
    fi.add_argument("--family", default=None, metavar="GLOB", help="only families matching this pattern")
    fi.add_argument("--alpha", type=float, default=0.05, help="flag when the BH-adjusted p < ALPHA (default 0.05)")
    fi.add_argument("--json", action="store_true", help="print JSON instead of tables")


def cmd_fidelity(args) -> int:
    """``stsim fidelity``: print the feature comparison; exit 1 when a feature is flagged."""
    from ..benchmarks.fidelity import fidelity_report, format_report
    if not 0 < args.alpha < 1:  # also false for NaN
        raise CLIError(f"--alpha must be in (0, 1), got {args.alpha}")
    rep = fidelity_report(args.suite, args.data, n=args.n, seed=args.seed, only=args.family,
                          alpha=args.alpha)
    print(json.dumps(rep, indent=1) if args.json else format_report(rep))
    return 1 if rep["flagged"] else 0
