"""stsim's default trackers against Stone Soup's (EKF, UKF, particle filter) on the same
generated STARK tier-1 tracking tasks: trimmed RMSE of the Euclidean error over the first 10
steps and over all 50, STARK's per-task convention over the first 10, and CPU time per task.

Stone Soup (https://stonesoup.readthedocs.io, a perf-only dependency: ``pip install
'stsim[perf]'``; measured with 1.9.1) is set up as its tutorials do: constant-velocity
transition (``CombinedLinearGaussianTransitionModel`` of two ``ConstantVelocity``), one
detection per available reading with its own sensor-offset measurement model
(``Cartesian2DToBearing``, ``CartesianToBearingRange``, and a range-only model written here on
Stone Soup's ``NonLinearGaussianMeasurement``, which has none), the uniform Table 7 noise
replaced by a Gaussian of the same variance (half-width^2 / 3) times ``r_sd^2``, readings of a
step applied one after the other, prediction only on steps without readings; initialised from
the first step's readings (stsim's localisation posterior mean, sd 0.5, when they fix a point,
else the domain centre with a 3-unit sd, or for the particle filter uniform on the task's
domain), velocity 0 +- ``v0`` units/s per axis.

Tuning (``--tune``), on tasks of suite seed 11 (20 per family), never on the test seed 7, the
same rule for every tracker: the lowest mean of the 10-step and the all-step trimmed RMSE
(both are issue 20 targets).
* EKF, UKF: ``ConstantVelocity`` noise ``q`` in {0.5, 2, 8, 16, 32, 64} units^2/s^3, ``v0`` in
  {1, 3}, noise scale ``r_sd`` in {1, 2} (a filter's measurement noise is a tuning knob too:
  inflating it absorbs linearisation error).
* Particle filter (``ParticlePredictor``, ``ParticleUpdater``), in three stages: (0) ``q`` in
  {2, 4, 8, 16} x ``r_sd`` in {1, 2, 4, 8} with ``v0`` = 3 and Stone Soup's degeneracy
  remedies: ``ESSResampler`` (systematic resampling only when Kish's effective sample size falls
  below N/2, Doucet & Johansen 2009 sec. 3.5), ``MCMCRegulariser`` (a Metropolis-Hastings move
  after each resampling, Ristic, Arulampalam & Gordon 2004; Stone Soup 1.9 has no
  ``RegularisedParticleUpdater``, the regulariser is an argument of ``ParticleUpdater``; here
  it skips a collapsed cloud whose covariance is singular instead of raising), particles
  uniform on the domain when the first readings fix no point, and the domain as
  ``constraint_func`` (zero weight outside); (1) each of those left out in turn; (2) the particle
  count in {500, 1000, 2000, 4000}: the smallest within 5 % of the best count's score (more
  particles cost time that the speed target counts against Stone Soup).  Stone Soup's
  ``KalmanProposal`` was not tried: it runs a Kalman update per particle in Python (about 1000
  times the bootstrap's cost per step).
* Chosen (``TUNED`` below): see the table in docs/stark-tier1.md.  ``--config old`` runs the
  first version's settings (``q`` 0.5, ``v0`` 1, ``r_sd`` 1, 1000 particles, systematic
  resampling after every reading, no moves, Gaussian start).

Why the first version's particle filter scored 2.8 on range (the issue's table, from an
uncommitted setup on an earlier generator, says 0.392): its process noise (``q`` 0.5, ``v0``
1) is far below the generator's motion (median speed 3.7 units/s, acceleration sd 2.5 and 4.3
units/s^2 per axis on the 30 range tasks of seed 7), so after a step the particles sit behind
the target; with 1 % range noise (sd ~0.03 units) the readings' likelihood is much narrower
than the predicted cloud, so a few particles take all the weight (Kish ESS below 10 of 1000 on
40 % of the updates of 10 range tasks; 14 % with ``q`` 8, ``v0`` 3), and resampling after every
reading without moves leaves copies of them that never catch up (trimmed RMSE 2.86 / 5.30 over 10 / 50 steps on
seed 7; the first version's EKF and UKF: 0.64 and 0.52).  The first version's settings on
tasks of the generator before issue 15 (commit 4a5a935) score PF 2.51, EKF 1.56, UKF 0.76:
the issue's numbers cannot be reproduced from the committed script.  Time: the issue's
264-336 ms/task and 73 ms/task were wall-clock on machines under different loads; times
here are CPU time (``time.process_time``) after one untimed warm-up task per tracker.

Targets (issue 20): stsim's default at least as accurate as the best Stone Soup tracker (both
horizons) and at least 5x faster per task (CPU) than Stone Soup's (tuned) particle filter.
Exit 1 when one is missed.  The speed target is checked on ``--rounds`` (3) timing rounds
after the scoring, on the first ``--speed-n`` (10) tasks: the particle filter, then stsim and
the particle filter again in each round; a round's ratio is the mean of the filter's times on
either side of it over stsim's (``_common.round_ratios``), and the target applies to their
median (one pass's ratio swings by 10-20 % with the machine's speed: range+bearing 4.0-5.9x
in three passes of the same code).

Run:  python perf/vs_stonesoup.py [--n 30] [--seed 7] [--variant ekf] [--config old] [--pf-seeds 3]
          [--rounds 3] [--speed-n 10]
      python perf/vs_stonesoup.py --tune [--n 20] [--tune-seed 11] [--family ...] [--kind pf]
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import numpy as np

try:
    from stonesoup.initiator.simple import SimpleMeasurementInitiator  # noqa: F401
    from stonesoup.models.measurement.nonlinear import (Cartesian2DToBearing,
                                                        CartesianToBearingRange,
                                                        NonLinearGaussianMeasurement)
    from stonesoup.models.transition.linear import (CombinedLinearGaussianTransitionModel,
                                                    ConstantVelocity)
    from stonesoup.predictor.kalman import ExtendedKalmanPredictor, UnscentedKalmanPredictor
    from stonesoup.predictor.particle import ParticlePredictor
    from stonesoup.regulariser.particle import MCMCRegulariser
    from stonesoup.resampler.particle import ESSResampler, SystematicResampler
    from stonesoup.types.array import StateVector, StateVectors
    from stonesoup.types.detection import Detection
    from stonesoup.types.hypothesis import SingleHypothesis
    from stonesoup.types.state import GaussianState, ParticleState
    from stonesoup.updater.kalman import ExtendedKalmanUpdater, UnscentedKalmanUpdater
    from stonesoup.updater.particle import ParticleUpdater
except ImportError:  # pragma: no cover
    sys.exit("stsim: error: perf/vs_stonesoup.py needs Stone Soup: pip install 'stsim[perf]'")

from _common import STONESOUP_FAMILIES as FAMILIES
from _common import cpu_ms_per_task, item_errors, round_ratios, timed_each, timed_rounds

from stsim.baselines import ALTERNATIVES, BASELINES
from stsim.baselines.stark_tier1 import _noise_levels, _readings, solve_localization
from stsim.cli.common import int_at_least
from stsim.records import Task
from stsim.registry import generate_task
from stsim.scoring.metrics import trimmed_rmse
from stsim.scoring.stark_metric import STARK_DATASETS, stark_track_error, stark_trimmed_mean

T0 = datetime(2000, 1, 1)


class CartesianToRange2D(NonLinearGaussianMeasurement):
    """Range ``|p - s|`` from a sensor at ``translation_offset`` (Stone Soup has no range-only
    2-D model)."""
    from stonesoup.base import Property
    translation_offset: StateVector = Property(default_factory=lambda: StateVector([[0.], [0.]]))

    @property
    def ndim_meas(self):
        return 1

    def function(self, state, noise=False, **kwargs):
        if isinstance(noise, bool) or noise is None:
            noise = self.rvs(num_samples=state.state_vector.shape[1], **kwargs) if noise else 0
        dx = state.state_vector[self.mapping[0], :] - self.translation_offset[0, 0]
        dy = state.state_vector[self.mapping[1], :] - self.translation_offset[1, 0]
        return StateVectors([np.hypot(np.asarray(dx, float), np.asarray(dy, float))]) + noise


def _detections(task: Task, k: int, when: datetime, r_sd: float = 1.0):
    """Stone Soup detections of step ``k``'s readings, each with its own sensor-offset
    measurement model; ``r_sd`` scales the noise standard deviations (1: the Table 7 variance)."""
    m = task.inputs["modality"]
    s = np.asarray(task.inputs["sensors"], float)
    z = _readings(task)[k]
    rs, bs = _noise_levels(task)
    rs, bs = rs * r_sd, bs * r_sd
    vb = bs ** 2 / 3.0
    out = []
    for j in range(len(s)):
        off = StateVector([[s[j, 0]], [s[j, 1]]])
        if m == "range" and np.isfinite(z[j]):
            mm = CartesianToRange2D(ndim_state=4, mapping=(0, 2), translation_offset=off,
                                    noise_covar=np.array([[max((rs * z[j]) ** 2 / 3.0, 1e-8)]]))
            out.append(Detection(StateVector([[z[j]]]), timestamp=when, measurement_model=mm))
        elif m == "bearing" and np.isfinite(z[j]):
            mm = Cartesian2DToBearing(ndim_state=4, mapping=(0, 2), translation_offset=off,
                                      noise_covar=np.array([[vb]]))
            from stonesoup.types.angle import Bearing
            out.append(Detection(StateVector([[Bearing(np.radians(z[j]))]]), timestamp=when,
                                 measurement_model=mm))
        elif m == "range_bearing" and np.all(np.isfinite(z[j])):
            mm = CartesianToBearingRange(ndim_state=4, mapping=(0, 2), translation_offset=off,
                                         noise_covar=np.diag([vb, max((rs * z[j, 0]) ** 2 / 3.0, 1e-8)]))
            from stonesoup.types.angle import Bearing
            out.append(Detection(StateVector([[Bearing(np.radians(z[j, 1]))], [z[j, 0]]]),
                                 timestamp=when, measurement_model=mm))
    return out


def _initial(task: Task) -> tuple[np.ndarray | None, np.ndarray]:
    """(first position or None, its standard deviation): stsim's localisation posterior mean of
    the first step's readings when they fix a point (sd 0.5), else None (no fix)."""
    first = Task(id=task.id, family=task.family.replace("tracking", "localization"), prompt="",
                 inputs={**task.inputs, "readings": task.inputs["readings"][0]},
                 answer=None, answer_format="point")
    ok = np.isfinite(_readings(task)[0].reshape(len(task.inputs["sensors"]), -1)).all(axis=1).sum()
    need = {"range": 3, "bearing": 2, "range_bearing": 1}[task.inputs["modality"]]
    if ok >= need:
        try:
            a = solve_localization(first)[0]
            if a.status == "ok":
                return np.array(a.value, float), np.array([0.5, 0.5])
        except Exception:  # noqa: BLE001 -- readings with a dropped value: no fix
            pass
    return None, np.array([3.0, 3.0])


class _MCMCRegulariser(MCMCRegulariser):
    """Stone Soup's ``MCMCRegulariser`` (Metropolis-Hastings move after resampling, Ristic et
    al. 2004), skipping the move when the resampled cloud has collapsed so far that its sample
    covariance is singular (Stone Soup's own raises ``LinAlgError`` from SciPy's
    ``multivariate_normal`` then)."""

    def regularise(self, prior, posterior, **kwargs):
        try:
            return super().regularise(prior, posterior, **kwargs)
        except np.linalg.LinAlgError:
            return posterior


@dataclass(frozen=True)
class Config:
    """One Stone Soup tracker's settings.

    ``q``: ``ConstantVelocity`` noise diffusion coefficient (units^2/s^3, both axes);
    ``v0``: standard deviation of the initial velocity per axis (units/s);
    ``particles``, ``resampler`` (``"systematic"``: ``SystematicResampler`` after every update;
    ``"ess"``: ``ESSResampler``, systematic resampling when Kish's ESS < N/2),
    ``regularise`` (``MCMCRegulariser`` move after each resampling), ``init`` (``"gauss"``: domain
    centre +- 3 units when the first readings fix no point; ``"uniform"``: particles uniform on
    the task's domain then) only matter for the particle filter."""
    q: float = 0.5
    v0: float = 1.0
    particles: int = 1000
    resampler: str = "systematic"
    regularise: bool = False
    init: str = "gauss"
    r_sd: float = 1.0
    constrain: bool = False

    def label(self, kind: str) -> str:
        s = f"q={self.q:g} v0={self.v0:g} R*{self.r_sd:g}^2"
        if kind == "pf":
            s += (f" N={self.particles} {self.resampler}{'+MCMC' if self.regularise else ''}"
                  f" init={self.init}{' in-domain' if self.constrain else ''}")
        return s


# The configuration of the first version of this script (q 0.5, velocity sd 1, systematic
# resampling after every reading): kept to reproduce the "before" table with --config old.
OLD = {k: Config() for k in ("ekf", "ukf", "pf")}
# Chosen by ``--tune --n 20`` (suite seed 11, never the test seed): the lowest mean of the
# 10-step and all-step trimmed RMSE per tracker and family; the particle count the smallest
# within 5 % of the best count's score (8000 particles checked for range and bearing: no gain
# over 4000).  Scores and the runners-up are in docs/stark-tier1.md.
_R, _B, _RB = FAMILIES
_PF = dict(v0=3, resampler="ess", regularise=True, init="uniform")
TUNED = {
    "ekf": {_R: Config(q=16, v0=3), _B: Config(q=8, v0=3, r_sd=2), _RB: Config(q=8, v0=3, r_sd=2)},
    "ukf": {_R: Config(q=2, v0=1), _B: Config(q=8, v0=1), _RB: Config(q=2, v0=3)},
    "pf": {_R: Config(q=16, particles=4000, r_sd=4, **_PF),
           _B: Config(q=8, particles=4000, constrain=True, **_PF),
           _RB: Config(q=16, particles=2000, r_sd=2, **_PF)},
}


def stonesoup_track(task: Task, kind: str, cfg: Config | None = None, seed: int = 0,
                    particles: int | None = None) -> np.ndarray:
    """(k, 2) Stone Soup estimates, one per step, clipped to the domain (``kind`` in ekf, ukf,
    pf; ``cfg`` defaults to the tuned configuration of ``kind`` for the task's family;
    ``particles`` overrides its particle count).  ``seed`` seeds the initial particles and
    NumPy's global generator, which Stone Soup's predictor, resampler and regulariser draw from."""
    if cfg is None:
        cfg = TUNED[kind][task.family]
    if particles is not None:
        cfg = replace(cfg, particles=particles)
    times = np.asarray(task.inputs["times"], float)
    lo, hi = (float(v) for v in task.inputs.get("domain", (0.0, 10.0)))
    trans = CombinedLinearGaussianTransitionModel([ConstantVelocity(cfg.q), ConstantVelocity(cfg.q)])
    p0, sd0 = _initial(task)
    centre = np.full(2, 0.5 * (lo + hi))
    mean = StateVector([[(centre if p0 is None else p0)[0]], [0.0],
                        [(centre if p0 is None else p0)[1]], [0.0]])
    cov = np.diag([sd0[0] ** 2, cfg.v0 ** 2, sd0[1] ** 2, cfg.v0 ** 2])
    np.random.seed(seed)
    if kind == "pf":
        n = cfg.particles
        rng = np.random.default_rng(seed)
        pts = rng.multivariate_normal(mean.ravel(), cov, size=n).T
        if p0 is None and cfg.init == "uniform":
            pts[[0, 2]] = rng.uniform(lo, hi, size=(2, n))
        state = ParticleState(StateVectors(pts), weight=np.full(n, 1.0 / n), timestamp=T0)
        predictor = ParticlePredictor(trans)
        resampler = ESSResampler() if cfg.resampler == "ess" else SystematicResampler()
        def outside(st, lo=lo, hi=hi):
            xy = np.asarray(st.state_vector, float)[[0, 2]]
            out = ((xy < lo) | (xy > hi)).any(axis=0)
            return out if not out.all() else np.zeros_like(out)
        updater = ParticleUpdater(None, resampler=resampler,
                                  constraint_func=outside if cfg.constrain else None,
                                  regulariser=_MCMCRegulariser(transition_model=trans)
                                  if cfg.regularise else None)
    else:
        state = GaussianState(mean, cov, timestamp=T0)
        predictor = (ExtendedKalmanPredictor if kind == "ekf" else UnscentedKalmanPredictor)(trans)
        updater = (ExtendedKalmanUpdater if kind == "ekf" else UnscentedKalmanUpdater)(None)
    out = np.empty((len(times), 2))
    for k, t in enumerate(times):
        when = T0 + timedelta(seconds=float(t - times[0]))
        dets = _detections(task, k, when, cfg.r_sd)
        if not dets:
            state = predictor.predict(state, timestamp=when)
        for det in dets:  # one reading at a time; dt = 0 after the first
            state = updater.update(SingleHypothesis(predictor.predict(state, timestamp=when), det))
        sv = np.asarray(state.mean if kind == "pf" else state.state_vector, float).ravel()
        out[k] = np.clip([sv[0], sv[2]], lo, hi)
    return out


def _score(tasks, solve) -> tuple[float, float, float, float]:
    """(trimmed RMSE over the first 10 steps, over all steps, STARK's convention over 10 steps,
    CPU ms per task) of ``solve(index, task) -> (k, 2) estimates``; one untimed warm-up call on
    the first task (lazy imports, cached tables)."""
    ests, each = timed_each(lambda it: np.asarray(solve(*it), float), list(enumerate(tasks)))
    e10, eall, st = [], [], []
    for task, est in zip(tasks, ests):
        gold = np.array([s.answer for s in task.steps], float)
        e = item_errors(task.answer_format, est, gold)
        e10 += e[:10].tolist()
        eall += e.tolist()
        st.append(stark_track_error(STARK_DATASETS[task.family], list(est[:10]), list(gold[:10])))
    return trimmed_rmse(e10), trimmed_rmse(eall), stark_trimmed_mean(st), 1000 * float(np.mean(each))


def tuning_grid(kind: str, best: Config | None = None, stage: int = 0) -> list[Config]:
    """The settings ``--tune`` tries for ``kind`` (see the module docstring).  EKF and UKF: one
    grid.  Particle filter, in three stages around the best so far: 0, process noise x noise
    scale with ESS resampling, MCMC moves, uniform start and the domain constraint; 1, each of
    those components left out in turn (Stone Soup's defaults); 2, the particle count."""
    if kind != "pf":
        return [Config(q=q, v0=v0, r_sd=r) for q in (0.5, 2, 8, 16, 32, 64) for v0 in (1, 3)
                for r in (1, 2)]
    if stage == 0:
        return [Config(q=q, v0=3, r_sd=r, resampler="ess", regularise=True, init="uniform",
                       constrain=True) for q in (2, 4, 8, 16) for r in (1, 2, 4, 8)]
    if stage == 1:
        return [best, replace(best, resampler="systematic", regularise=False),
                replace(best, regularise=False), replace(best, constrain=False),
                replace(best, init="gauss")]
    return [replace(best, particles=n) for n in (500, 1000, 2000, 4000)]


def tune(families, seed: int, n: int, kinds=("ekf", "ukf", "pf")) -> dict:
    """Score every ``tuning_grid`` setting on ``n`` tasks of ``seed`` per family and print the
    rows; returns ``{kind: {family: best Config}}``, best = lowest mean of the 10-step and
    all-step trimmed RMSE (both are targets of issue 20); for the particle count, the
    smallest count within 5 % of the best count's score (more particles cost time that the
    speed target would count against Stone Soup)."""
    best: dict = {k: {} for k in kinds}
    for fam in families:
        tasks = [generate_task(fam, i, suite="stark-tier1", suite_seed=seed) for i in range(n)]
        for kind in kinds:
            cfg = None
            for stage in ((0, 1, 2) if kind == "pf" else (0,)):
                scored = []
                for c in tuning_grid(kind, cfg, stage):
                    r = _score(tasks, lambda i, t: stonesoup_track(t, kind, c, seed=i))
                    scored.append((0.5 * (r[0] + r[1]), c, r))
                    print(f"{fam:30s} {kind:4s} {c.label(kind):62s} {r[0]:8.4f} {r[1]:8.4f} "
                          f"{r[3]:7.1f}", flush=True)
                top = min(x[0] for x in scored)
                if stage == 2:
                    scored = [x for x in scored if x[0] <= 1.05 * top]
                    cfg = min(scored, key=lambda x: x[1].particles)[1]
                else:
                    cfg = min(scored, key=lambda x: x[0])[1]
            best[kind][fam] = cfg
            print(f"BEST {fam} {kind}: {cfg!r}", flush=True)
    return best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=30, help="tasks per family")
    ap.add_argument("--seed", type=int, default=7, help="suite seed")
    ap.add_argument("--particles", type=int, default=None,
                    help="override the Stone Soup particle filter's tuned particle count")
    ap.add_argument("--family", nargs="*", choices=FAMILIES)
    ap.add_argument("--variant", nargs="*", default=[],
                    help="also time and score these stsim baseline variants (baseline:NAME), e.g. ekf pf")
    ap.add_argument("--config", choices=["tuned", "old"], default="tuned",
                    help="Stone Soup settings: tuned (default) or the first version's (q 0.5, "
                         "velocity sd 1, systematic resampling every reading)")
    ap.add_argument("--pf-seeds", type=int, default=1,
                    help="also run Stone Soup's particle filter with this many filter seeds and print "
                         "the spread of its errors (the table and the targets use seed 0)")
    ap.add_argument("--tune", action="store_true",
                    help="score the tuning grid on --tune-seed instead (prints every setting and the best)")
    ap.add_argument("--rounds", type=int_at_least(1), default=3,
                    help="timing rounds for the speed target (its median ratio is checked)")
    ap.add_argument("--speed-n", type=int_at_least(1), default=10, help="tasks of the timing rounds")
    ap.add_argument("--tune-seed", type=int, default=11, help="suite seed of the tuning tasks")
    ap.add_argument("--kind", nargs="*", choices=["ekf", "ukf", "pf"], default=["ekf", "ukf", "pf"],
                    help="Stone Soup trackers to tune (with --tune)")
    args = ap.parse_args(argv)
    if args.tune:
        if args.tune_seed == args.seed and "--seed" in (argv or sys.argv):
            ap.error("--tune-seed must differ from the test seed")
        tune(args.family or FAMILIES, args.tune_seed, args.n, tuple(args.kind))
        return 0
    configs = OLD if args.config == "old" else None
    missed = []
    print(f"n={args.n} tasks per family, seed {args.seed}, Stone Soup {args.config} settings; "
          f"trimmed RMSE (Euclidean, 10 % each side) over the first 10 steps / all steps; "
          f"STARK = trimmed mean of per-task RMS (10 steps); CPU ms per task")
    print(f"{'family':30s} {'tracker':12s} {'tRMSE@10':>9s} {'tRMSE@all':>9s} {'STARK@10':>9s} "
          f"{'ms/task':>8s}  settings")
    for fam in args.family or FAMILIES:
        tasks = [generate_task(fam, i, suite="stark-tier1", suite_seed=args.seed) for i in range(args.n)]
        rows = {}

        def config(kind, fam=fam):
            """Stone Soup's settings for ``kind`` on this family (``--config``, ``--particles``)."""
            cfg = configs[kind] if configs else TUNED[kind][fam]
            return cfg if args.particles is None else replace(cfg, particles=args.particles)
        variants = [f"stsim:{v}" for v in args.variant if v in ALTERNATIVES.get(fam, {})]
        for name in ("stsim", *variants, "ekf", "ukf", "pf"):
            if name == "stsim":
                solve = lambda i, t: [a.value for a in BASELINES[fam](t)]  # noqa: E731
                label = ""
            elif name.startswith("stsim:"):
                solve = lambda i, t, v=name[6:]: [a.value for a in ALTERNATIVES[fam][v](t)]  # noqa: E731
                label = ""
            else:
                cfg = config(name)
                solve = lambda i, t, k=name, c=cfg: stonesoup_track(t, k, c, seed=i)  # noqa: E731
                label = cfg.label(name)
            rows[name] = r = _score(tasks, solve)
            print(f"{fam:30s} {name:12s} {r[0]:9.4f} {r[1]:9.4f} {r[2]:9.4f} {r[3]:8.1f}  {label}",
                  flush=True)
        if args.pf_seeds > 1:
            cfg = config("pf")
            runs = [rows["pf"]] + [_score(tasks, lambda i, t, s=s: stonesoup_track(t, "pf", cfg, seed=i + 1000 * s))
                                   for s in range(1, args.pf_seeds)]
            print(f"{'':30s} pf, {args.pf_seeds} filter seeds: tRMSE@10 "
                  f"{', '.join(f'{r[0]:.4f}' for r in runs)}; tRMSE@all "
                  f"{', '.join(f'{r[1]:.4f}' for r in runs)}", flush=True)
        best10 = min(rows[k][0] for k in ("ekf", "ukf", "pf"))
        bestall = min(rows[k][1] for k in ("ekf", "ukf", "pf"))
        few, pf_cfg = tasks[:args.speed_n], config("pf")
        pf_ms, ours_ms = timed_rounds(
            {"pf": lambda: cpu_ms_per_task(lambda t: stonesoup_track(t, "pf", pf_cfg), few)},
            {"stsim": lambda: cpu_ms_per_task(BASELINES[fam], few)}, args.rounds)
        each = round_ratios(pf_ms["pf"], ours_ms["stsim"])
        speed = float(np.median(each))
        print(f"{'':30s} stsim/best Stone Soup: {rows['stsim'][0] / best10:.2f} (10 steps), "
              f"{rows['stsim'][1] / bestall:.2f} (all); particle filter / stsim CPU time: {speed:.1f}x "
              f"(median of {args.rounds} rounds on {len(few)} tasks, {each.min():.1f}-{each.max():.1f}; "
              f"the scoring pass: {rows['pf'][3] / rows['stsim'][3]:.1f}x)", flush=True)
        if rows["stsim"][0] > best10:
            missed.append(f"{fam}: stsim {rows['stsim'][0]:.4f} worse than Stone Soup's best {best10:.4f} (10 steps)")
        if rows["stsim"][1] > bestall:
            missed.append(f"{fam}: stsim {rows['stsim'][1]:.4f} worse than Stone Soup's best {bestall:.4f} (all steps)")
        if speed < 5:
            missed.append(f"{fam}: stsim only {speed:.1f}x faster than Stone Soup's particle filter "
                          f"(median of {args.rounds} rounds, {each.min():.1f}-{each.max():.1f}; target 5x)")
    for m in missed:
        print("MISSED:", m)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
