"""``stsim fidelity``: are generated tasks drawn like the released ones?

For every family of a suite that has released counterparts (STARK tier 1 today), the suite's
generator draws ``n`` tasks and the release loader reads the released ones; both go through the
same per-task feature functions (:func:`task_features`), and each feature's two samples are
compared with the two-sample Kolmogorov-Smirnov test (``scipy.stats.ks_2samp``).

Per feature the report gives both medians, the KS statistic ``D`` (largest gap between the two
empirical CDFs, 0..1) with a percentile-bootstrap 95 % interval, the KS ``p`` and the
Benjamini-Hochberg adjusted ``p`` (Benjamini & Hochberg 1995, step-up false-discovery-rate
control, applied per family over that family's features); a feature is *flagged* when its
adjusted p is below ``alpha`` (0.05).  ``D`` is the effect size: with 50 released tasks a
``D`` below about 0.2 cannot be told apart from sampling noise (docs/stark-tier1.md, "Fidelity
report").

Features are computed from what a solver sees (printed sensors and readings) and the gold answer;
a feature a family's gold does not determine (e.g. the trajectory of a time-only task) is left
out for both sides.  Units: plane units (STARK's [0, 10]^2 square, km for events), seconds or
minutes as the task states, radians for turns.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, Iterable

import numpy as np

from ..records import Task
from ..sim.noise import STARK_BEARING_NOISE_RAD
from ..sim.sensors import bearings_deg, distances
from .suites import SuiteError, get_suite

DOMAIN = (0.0, 10.0)
SCORED_STEPS = 10  # STARK scores the first 10 tracking steps (§4.1)
RANGE_SIGMA = 0.01  # Table 7: range noise U(-1 %, +1 %) of the true range
BEARING_HALF_DEG = math.degrees(STARK_BEARING_NOISE_RAD.half_width)  # 3.6 degrees
TOA_HALF = 0.01  # Table 7: ToA noise U(-0.01, 0.01) in the task's time unit

#: Feature groups of issue 15 (the three ways generated tasks used to differ from released ones).
_DROPOUT = ("readings_min", "readings_max", "readings_mean")
_TRAJECTORY = ("start_edge_dist", "speed_scored", "turn_per_step", "displacement", "path_length")
_PROXIMITY_SCENE = ("hull_area", "detections", "feasible_area", "gold_to_sensor_centroid")


def feature_group(family: str, feature: str) -> str:
    """The issue-15 group a feature of a family belongs to: ``dropout`` (readings per step of
    the tracking families with dropout), ``trajectory`` (trajectory shape, every tracking
    family), ``proximity scene`` (sensor hull, detections, feasible region and target placement
    of proximity localisation), or ``""`` (every other feature)."""
    if feature in _TRAJECTORY:
        return "trajectory"
    if feature in _DROPOUT and family != "stark.tracking.proximity":
        return "dropout"
    if feature in _PROXIMITY_SCENE and family == "stark.localization.proximity":
        return "proximity scene"
    return ""


# ----------------------------------------------------------------------------------- features
def _hull_area(p: np.ndarray) -> float:
    import shapely
    return float(shapely.MultiPoint([tuple(q) for q in p]).convex_hull.area)


def _sensor_features(s: np.ndarray) -> dict[str, float]:
    d = distances(s, s)
    iu = np.triu_indices(len(s), 1)
    return {"hull_area": _hull_area(s), "sensor_min_spacing": float(d[iu].min()),
            "sensor_mean_spacing": float(d[iu].mean()),
            "sensor_centroid_x": float(s[:, 0].mean()), "sensor_centroid_y": float(s[:, 1].mean())}


def _edge_dist(p: np.ndarray) -> float:
    """Distance of point (2,) to the nearest side of the domain square."""
    return float(min(p[0] - DOMAIN[0], p[1] - DOMAIN[0], DOMAIN[1] - p[0], DOMAIN[1] - p[1]))


def trajectory_features(p: np.ndarray) -> dict[str, float]:
    """Shape features of a trajectory ``p`` (n, 2), n >= 3, in plane units.

    ``start_edge_dist``: distance of the first point to the nearest side of the domain (0 when
    the trajectory starts on the edge, which min-max normalisation makes common);
    ``speed_scored``: path length over the scored steps (points 0..9, 9 segments);
    ``turn_per_step``: mean absolute change of heading between successive segments (radians,
    in [0, pi]); ``displacement``: straight-line distance first -> last point;
    ``path_length``: total path length.
    """
    p = np.asarray(p, dtype=float)
    seg = np.diff(p, axis=0)
    length = np.hypot(seg[:, 0], seg[:, 1])
    heading = np.arctan2(seg[:, 1], seg[:, 0])
    turn = np.abs((np.diff(heading) + np.pi) % (2 * np.pi) - np.pi)
    return {"start_edge_dist": _edge_dist(p[0]),
            "speed_scored": float(length[:SCORED_STEPS - 1].sum()),
            "turn_per_step": float(turn.mean()),
            "displacement": float(np.hypot(*(p[-1] - p[0]))),
            "path_length": float(length.sum())}


def _gold_points(task: Task) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(positions (k, 2) or None, emission times (k,) or None) the gold answers state."""
    golds = [s.answer for s in task.steps] if task.steps else [task.answer]
    fmt = task.answer_format
    if fmt == "time":
        return None, np.array(golds, dtype=float)
    g = np.array(golds, dtype=float)
    if fmt == "vector":
        return g[:, :2], g[:, 2]
    times = None
    if task.steps and task.inputs.get("modality") == "toa" and task.inputs.get("times") is not None:
        times = np.array(task.inputs["times"], dtype=float)  # known emission times
    return g, times


def _rows(task: Task) -> list[list[Any]]:
    return [s.inputs["readings"] for s in task.steps] if task.steps else [task.inputs["readings"]]


def _noise(task: Task, sensors: np.ndarray, pos: np.ndarray | None,
           emit: np.ndarray | None) -> dict[str, float]:
    """Mean absolute reading error relative to the noiseless reading implied by the printed
    sensors and the gold, in units of the Table-7 half-width (uniform noise: 0.5 on average)."""
    m = task.inputs["modality"]
    rows = _rows(task)
    if pos is None or m == "proximity":
        return {}
    rel_r, err_b, err_t = [], [], []
    for k, row in enumerate(rows):
        q = pos[k]
        d = distances(sensors, q[None])[0]
        bear = bearings_deg(sensors, q[None])[0]
        for j, r in enumerate(row):
            if r is None:
                continue
            if m in ("range", "range_bearing"):
                rr = r[0] if m == "range_bearing" else r
                if d[j] > 1e-9:
                    rel_r.append(abs(rr - d[j]) / (RANGE_SIGMA * d[j]))
            if m in ("bearing", "range_bearing"):
                b = r[1] if m == "range_bearing" else r
                err_b.append(abs((b - bear[j] + 180.0) % 360.0 - 180.0) / BEARING_HALF_DEG)
            if m == "toa":
                err_t.append((r - d[j] / float(task.inputs["wave_speed"])))
    out = {}
    if rel_r:
        out["noise_range"] = float(np.mean(rel_r))
    if err_b:
        out["noise_bearing"] = float(np.mean(err_b))
    if err_t:
        e = np.array(err_t)
        if emit is not None and len(rows) == len(emit):
            t = np.concatenate([[emit[k]] * sum(r is not None for r in row) for k, row in enumerate(rows)])
            out["noise_toa"] = float(np.mean(np.abs(e - t)) / TOA_HALF)
        else:  # emission time unknown: residuals about the implied emission time
            out["toa_residual"] = float(np.mean(np.abs(e - e.mean())) / TOA_HALF)
            out["emit_time"] = float(e.mean())
    return out


def task_features(task: Task) -> dict[str, float]:
    """Per-task features of a STARK tier-1 task (generated or released); see the module
    docstring and docs/stark-tier1.md ("Fidelity report") for each one's meaning.

    Raises:
        ValueError: a task that is not a tier-1 localisation / tracking task (no
            ``inputs.sensors`` / ``inputs.modality``).
    """
    inp = task.inputs
    if "sensors" not in inp or "modality" not in inp:
        raise ValueError(f"task {task.id}: not a STARK tier-1 task (inputs.sensors / inputs.modality missing)")
    s = np.array(inp["sensors"], dtype=float)
    f = _sensor_features(s)
    m = inp["modality"]
    pos, emit = _gold_points(task)
    rows = _rows(task)
    if pos is not None and not task.steps:
        f["gold_x"], f["gold_y"] = float(pos[0, 0]), float(pos[0, 1])
        f["gold_edge_dist"] = _edge_dist(pos[0])
        f["gold_to_sensor_centroid"] = float(np.hypot(*(pos[0] - s.mean(axis=0))))
    if task.steps:
        counts = np.array([sum(r is not None for r in row) for row in rows], dtype=float)
        f.update(n_steps=float(len(rows)), readings_min=float(counts.min()),
                 readings_max=float(counts.max()), readings_mean=float(counts.mean()))
        times = inp.get("times")
        if times is None and emit is not None:
            times = emit
        if times is not None and len(times) > 1:
            f["time_step"] = float(np.median(np.diff(np.asarray(times, dtype=float))))
        if pos is not None and len(pos) >= 3:
            f.update(trajectory_features(pos))
    if m == "proximity":
        hits = np.array([[np.nan if r is None else float(r) for r in row] for row in rows])
        f["detections"] = float(np.nanmean(hits.sum(axis=1)))
        if not task.steps:
            from ..baselines.geometry import feasible_region
            radius = float(inp.get("radius", 4.0))
            f["feasible_area"] = float(feasible_region(s, hits[0], radius).area)
    if m == "toa":
        flat = [r for row in rows for r in row if r is not None]
        if emit is not None:
            f["emit_time"] = float(emit[0])
        if not task.steps:
            f["toa_spread"] = float(max(flat) - min(flat))
    f.update({k: v for k, v in _noise(task, s, pos, emit).items() if k not in f})
    return f


# -------------------------------------------------------------------------------- statistics
def bh_adjust(p: Iterable[float]) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (Benjamini & Hochberg 1995): with the m p-values
    sorted ascending, ``q_(i) = min_{j >= i} min(1, p_(j) m / j)``, returned in input order.
    Rejecting every hypothesis with ``q < alpha`` controls the false discovery rate at alpha.

    Raises:
        ValueError: a p-value outside [0, 1] or NaN.
    """
    p = np.asarray(list(p), dtype=float)
    if p.size == 0:
        return p
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError(f"p-values must be in [0, 1], got {p.tolist()}")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    q = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(q, 1.0)
    return out


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample KS statistic ``sup_x |F_a(x) - F_b(x)|`` of two 1-d samples (the statistic
    of ``scipy.stats.ks_2samp``, computed with ``searchsorted`` for the bootstrap)."""
    a, b = np.sort(a), np.sort(b)
    x = np.concatenate([a, b])
    fa = np.searchsorted(a, x, side="right") / a.size
    fb = np.searchsorted(b, x, side="right") / b.size
    return float(np.max(np.abs(fa - fb)))


def bootstrap_d(a: np.ndarray, b: np.ndarray, rng: np.random.Generator, reps: int = 300,
                level: float = 0.95) -> tuple[float, float]:
    """Percentile-bootstrap interval of the KS statistic: both samples resampled with
    replacement ``reps`` times.  (D is bounded below by 0, so the interval is a guide to the
    effect size, not a test.)"""
    ds = np.array([ks_statistic(rng.choice(a, a.size), rng.choice(b, b.size)) for _ in range(reps)])
    lo, hi = np.quantile(ds, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def bootstrap_median(a: np.ndarray, rng: np.random.Generator, reps: int = 1000,
                     level: float = 0.95) -> tuple[float, float]:
    """Percentile-bootstrap interval of the median of ``a``."""
    meds = np.median(rng.choice(a, (reps, a.size)), axis=1)
    lo, hi = np.quantile(meds, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def ks_critical_d(n: int, m: int, alpha: float = 0.05) -> float:
    """Asymptotic two-sample KS critical value: ``sqrt(-ln(alpha / 2) / 2) * sqrt((n + m) / (n m))``
    (1.358 * sqrt((n + m) / (n m)) at alpha = 0.05; Smirnov 1948).  A single feature's D below it
    is not significant at ``alpha`` before any multiple-testing adjustment: for 50 released vs
    200 generated tasks it is 0.215, so D < 0.2 is about the resolution of the release."""
    return math.sqrt(-math.log(alpha / 2) / 2) * math.sqrt((n + m) / (n * m))


@dataclass
class FeatureRow:
    """One feature of one family: sample sizes, medians (released, generated), KS D with its
    bootstrap interval and its 5 % critical value, KS p, BH-adjusted p, and whether it is
    flagged."""
    family: str
    feature: str
    group: str
    n_released: int
    n_generated: int
    median_released: float
    median_generated: float
    d: float
    d_low: float
    d_high: float
    p: float
    d_crit: float = 0.0
    p_bh: float = 1.0
    flagged: bool = False


def compare_features(family: str, released: list[dict[str, float]], generated: list[dict[str, float]],
                     rng: np.random.Generator, alpha: float = 0.05) -> list[FeatureRow]:
    """KS-compare every feature present in both samples (tasks missing a feature are left out
    of that feature), then BH-adjust the family's p-values."""
    from scipy.stats import ks_2samp
    names = [k for k in dict.fromkeys(k for f in released for k in f)
             if any(k in g for g in generated)]
    rows = []
    for k in names:
        a = np.array([f[k] for f in released if k in f], dtype=float)
        b = np.array([g[k] for g in generated if k in g], dtype=float)
        if a.size < 2 or b.size < 2:
            continue
        r = ks_2samp(a, b)
        lo, hi = bootstrap_d(a, b, rng)
        rows.append(FeatureRow(family, k, feature_group(family, k), int(a.size), int(b.size),
                               float(np.median(a)), float(np.median(b)), float(r.statistic), lo, hi,
                               float(r.pvalue), ks_critical_d(a.size, b.size, alpha)))
    for row, q in zip(rows, bh_adjust([r.p for r in rows])):
        row.p_bh = float(q)
        row.flagged = bool(q < alpha)
    return rows


# ------------------------------------------------------------------------------------ report
def fidelity_suites() -> list[str]:
    """The generated suites :func:`fidelity_report` takes: those with a family that has
    released counterparts (STARK tier 1), sorted."""
    from .stark_release.tier1 import FOLDERS
    from .suites import all_suites
    fams = {f for f, _, _ in FOLDERS.values()}
    return sorted(name for name, suite in all_suites().items()
                  if suite.loader is None and any(f in fams for f in suite.families))


def released_loader(suite_name: str):
    """(loader, families it can yield) of the release matching a generated suite.

    Raises:
        SuiteError: no released counterpart is known for the suite's families.
    """
    from .stark_release.tier1 import FOLDERS, load_published
    fams = {f for f, _, _ in FOLDERS.values()}
    suite = get_suite(suite_name)
    if suite.loader is not None:
        raise SuiteError(f"suite {suite_name!r} reads data; fidelity compares a *generated* suite "
                         "with its released counterpart (e.g. stark-tier1)")
    if not any(f in fams for f in suite.families):
        raise SuiteError(f"suite {suite_name!r} has no family with released counterparts; fidelity "
                         f"knows STARK tier 1 ({', '.join(sorted(fams))})")
    return load_published, fams


def fidelity_report(suite_name: str, data: str | Path, n: int = 200, seed: int = 0,
                    only: str | None = None, alpha: float = 0.05) -> dict[str, Any]:
    """Generate ``n`` tasks per family of ``suite_name`` (seed ``seed``), load every released
    counterpart from ``data`` (folder or archive), and compare per-task features.

    Returns: ``{"suite", "seed", "n", "alpha", "families": {family: [FeatureRow as dict]},
    "skipped": [families without released counterparts], "flagged": count}``.

    Raises:
        SuiteError: unknown suite, no released counterpart, unreadable data, ``n < 2``.
    """
    from ..registry import generate_task
    if n < 2:
        raise SuiteError(f"--n must be at least 2 for a KS test, got {n}")
    loader, known = released_loader(suite_name)
    suite = get_suite(suite_name)
    fams = [f for f in suite.families if only is None or fnmatch(f, only)]
    if not fams:
        raise SuiteError(f"no family of suite {suite_name!r} matches {only!r}")
    wanted = [f for f in fams if f in known]
    released: dict[str, list[dict[str, float]]] = {f: [] for f in wanted}
    for t in loader(Path(data), None, {"families": wanted}):
        if t.family in released:
            released[t.family].append(task_features(t))
    out: dict[str, Any] = {"suite": suite_name, "seed": seed, "n": n, "alpha": alpha,
                           "families": {}, "skipped": [f for f in fams if f not in known]}
    rng = np.random.default_rng([seed, 15])
    for fam in wanted:
        gen = [task_features(generate_task(fam, i, suite=suite_name, suite_seed=seed)) for i in range(n)]
        if not released[fam]:
            out["skipped"].append(fam)
            continue
        out["families"][fam] = [asdict(r) for r in compare_features(fam, released[fam], gen, rng, alpha)]
    out["flagged"] = sum(r["flagged"] for rows in out["families"].values() for r in rows)
    return out


def _fmt(v: float) -> str:
    if v == 0 or 1e-3 <= abs(v) < 1e4:
        return f"{v:.3f}"
    return f"{v:.1e}"


def format_report(rep: dict[str, Any]) -> str:
    """The report as text: one table per family, then one summary line per family (max D and
    the number of flagged features) and the total."""
    lines = [f"fidelity: suite {rep['suite']}, {rep['n']} generated per family (seed {rep['seed']}) "
             f"vs released; KS per feature, BH-adjusted p < {rep['alpha']} flagged (*)", ""]
    head = f"{'feature':24s} {'group':16s} {'n_rel':>5s} {'n_gen':>5s} {'med_rel':>9s} {'med_gen':>9s} " \
           f"{'D':>6s} {'D 95% CI':>13s} {'D_crit':>6s} {'p':>8s} {'p_BH':>8s}"
    for fam, rows in rep["families"].items():
        lines += [fam, head]
        for r in rows:
            lines.append(f"{r['feature']:24s} {r['group']:16s} {r['n_released']:5d} {r['n_generated']:5d} "
                         f"{_fmt(r['median_released']):>9s} {_fmt(r['median_generated']):>9s} "
                         f"{r['d']:6.3f} [{r['d_low']:.2f}, {r['d_high']:.2f}] {r['d_crit']:6.3f} {_fmt(r['p']):>8s} "
                         f"{_fmt(r['p_bh']):>8s}{' *' if r['flagged'] else ''}")
        lines.append("")
    lines.append("summary")
    for fam, rows in rep["families"].items():
        worst = max(rows, key=lambda r: r["d"])
        flagged = [r["feature"] for r in rows if r["flagged"]]
        lines.append(f"  {fam:34s} features {len(rows):2d}  max D {worst['d']:.3f} ({worst['feature']})  "
                     f"flagged {len(flagged)}{': ' + ', '.join(flagged) if flagged else ''}")
    for g in sorted({r["group"] for rows in rep["families"].values() for r in rows} - {""}):
        rs = [r for rows in rep["families"].values() for r in rows if r["group"] == g]
        worst = max(rs, key=lambda r: r["d"])
        lines.append(f"  group {g:28s} features {len(rs):2d}  max D {worst['d']:.3f} "
                     f"({worst['family']} {worst['feature']})  flagged {sum(r['flagged'] for r in rs)}")
    if rep["skipped"]:
        lines.append(f"  no released counterpart: {', '.join(rep['skipped'])}")
    lines.append(f"  total flagged: {rep['flagged']}")
    return "\n".join(lines)
