"""Cost of the default trackers with and without the MAP smoother before the refit, against
Stone Soup's particle filter in the same run (issue 20: a family joins
``stark_tier1.SMOOTHED_DEFAULTS`` only while its default stays at least 5x cheaper per task than
Stone Soup's particle filter; the margin for timing noise is the caller's).

For each family: CPU ms per task of its default as it is (``default``) and with the family
added to :data:`stsim.baselines.stark_tier1.SMOOTHED_DEFAULTS` for the run (``+smoother``;
the smoother settings of :func:`stsim.baselines.trajectory_smoother.settings_for`), or removed
when it is in it (``-smoother``), and each one's ratio to the reference: Stone Soup's particle
filter of ``perf/vs_stonesoup.py`` (its ``TUNED["pf"]``) on the family's own tasks where Stone
Soup has its measurement model (range, bearing, range+bearing), else on range tasks (as
``perf/pf_cost.py``), measured before and after the families (both printed; the mean is the
denominator).  Times: ``time.process_time`` per task after a warm-up
(``_common.cpu_ms_per_task``).

Run:  python perf/smoothed_cost.py [--family F ...] [--n 10] [--ref-n 5] [--seed 7]
"""
from __future__ import annotations

import argparse
import sys

from _common import STONESOUP_FAMILIES
from _common import cpu_ms_per_task as _ms_per_task

from stsim.baselines import BASELINES
from stsim.baselines import stark_tier1
from stsim.registry import generate_task

FAMILIES = ["stark.tracking.range", "stark.tracking.range_bearing", "stark.tracking.event",
            "stark.temporal_tracking.event", "stark.tracking.event_xyt"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", nargs="+", choices=FAMILIES, default=FAMILIES)
    ap.add_argument("--n", type=int, default=10, help="tasks per family")
    ap.add_argument("--ref-n", type=int, default=5, help="tasks for Stone Soup's particle filter")
    ap.add_argument("--seed", type=int, default=7, help="suite seed")
    args = ap.parse_args(argv)
    from vs_stonesoup import TUNED, stonesoup_track  # perf/ script: Stone Soup is the 'perf' extra

    def ref_family(fam):
        return fam if fam in STONESOUP_FAMILIES else "stark.tracking.range"

    refs = {}
    for rf in sorted({ref_family(f) for f in args.family}):
        tasks = [generate_task(rf, i, suite="stark-tier1", suite_seed=args.seed) for i in range(args.ref_n)]
        cfg = TUNED["pf"][rf]
        refs[rf] = (lambda tasks=tasks, cfg=cfg: _ms_per_task(lambda t: stonesoup_track(t, "pf", cfg), tasks))
    before = {rf: fn() for rf, fn in refs.items()}
    rows = []
    base = tuple(stark_tier1.SMOOTHED_DEFAULTS)
    try:
        for fam in args.family:
            tasks = [generate_task(fam, i, suite="stark-tier1", suite_seed=args.seed) for i in range(args.n)]
            ms = {}
            for label, smoothed in (("default", base),
                                    ("-smoother" if fam in base else "+smoother",
                                     tuple(f for f in base if f != fam) if fam in base else base + (fam,))):
                stark_tier1.SMOOTHED_DEFAULTS = smoothed
                ms[label] = _ms_per_task(BASELINES[fam], tasks)
            rows.append((fam, ms))
    finally:
        stark_tier1.SMOOTHED_DEFAULTS = base
    after = {rf: fn() for rf, fn in refs.items()}
    for rf in refs:
        print(f"Stone Soup particle filter on {rf}: {0.5 * (before[rf] + after[rf]):.1f} ms/task CPU "
              f"({before[rf]:.1f} before, {after[rf]:.1f} after the families; {args.ref_n} tasks)")
    print(f"{'family':32s} {'variant':10s} {'ms/task':>8s} {'PF/ours':>8s}")
    for fam, ms in rows:
        rf = ref_family(fam)
        ref = 0.5 * (before[rf] + after[rf])
        for label, v in ms.items():
            print(f"{fam:32s} {label:10s} {v:8.1f} {ref / v:8.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
