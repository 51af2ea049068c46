"""Time deriving the nine calculi's tables and generating the QSTRBench suites (one core).

Usage: ``python perf/qstr_perf.py``.  Prints CPU seconds per stage next to the issue's
reference budget (10 s for everything together on one core).
"""
from __future__ import annotations

import time


def _cpu(fn) -> tuple[float, object]:
    t = time.process_time()
    out = fn()
    return time.process_time() - t, out


def main() -> int:
    from stsim.qstr.directions import build_cdc, build_star
    from stsim.qstr.temporal import build_ia, build_indu, build_pa
    from stsim.qstr.topology import build_9im, build_rcc5, build_rcc8, build_rcc22

    def derive_all():
        pa, r8 = build_pa(), build_rcc8()
        return [pa, r8, build_rcc5(r8), build_cdc(pa), build_ia(), build_indu(), build_star(),
                build_9im(r8), build_rcc22(r8)]

    from stsim.qstr.rcc23_witnesses import derive_rcc23_composition
    rows = []
    t, comp = _cpu(derive_rcc23_composition)
    rows.append(("RCC-23 table from witnesses", t, len(comp)))
    t, cals = _cpu(derive_all)
    rows.append(("derive 9 calculi (+ RCC-22)", t, len(cals)))
    from stsim.benchmarks.suites import get_suite
    for suite in ("qstrbench", "qstrbench-extended"):
        t, tasks = _cpu(lambda s=suite: list(get_suite(s).tasks()))
        rows.append((f"generate {suite}", t, len(tasks)))
    total = sum(r[1] for r in rows)
    print(f"{'stage':<30} {'cpu s':>8} {'items':>7}")
    for name, t, n in rows:
        print(f"{name:<30} {t:>8.2f} {n:>7}")
    print(f"{'total':<30} {total:>8.2f}   (reference: issue 3 budget 10 s on one core)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
