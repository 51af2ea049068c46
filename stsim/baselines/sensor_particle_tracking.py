"""Particle filter for range, bearing and range+bearing tracking (issue 20): the default
trackers of ``stark.tracking.range`` and ``stark.tracking.bearing`` (``stark.tracking.range_bearing``
keeps the EKF bank and offers this filter as ``baseline:pf``).

The readings' model (:class:`_SensorModel`, STARK Table 7's bounded uniform noise) plugs into
the prior-motion particle filter of :mod:`stsim.baselines.particle_tracking`
(:func:`~stsim.baselines.particle_tracking.particle_track`: motion, sampling, adaptive tolerance);
:func:`track_sensor_task` runs it on a task, with a lost-track fallback to the EKF bank."""
from __future__ import annotations

import numpy as np

from .particle_tracking import ROUNDING, _Model, _on_step_grid, particle_track


class _SensorModel(_Model):
    """Range, bearing or range+bearing readings under STARK Table 7's bounded uniform noise.

    ``z`` (n, m, c): per step and sensor the reading(s), NaN = dropped; ``c`` = 1 (range in
    plane units, or bearing in degrees counter-clockwise from +x) or 2 (range, bearing).
    Range: ``z = d (1 + U(-sigma, sigma))`` with ``d`` the true sensor distance, so the reading
    is consistent with a particle at distance ``d`` when ``|z - d| <= sigma d + ROUNDING`` and
    its density there is ``1 / (2 (sigma d + ROUNDING))``.  Bearing: ``z = atan2(dy, dx) +
    U(-h, h)`` (``h`` in radians), consistent when ``|wrap(z - atan2)| <= h + radians(ROUNDING)``,
    density constant.  ``ROUNDING`` is half a unit of the printed 4th decimal.  The violation of
    a particle is the largest ``|residual| / half - 1`` over the step's readings (clipped at 0),
    the same units as :func:`stsim.baselines.trajectory_posterior.violations`."""

    def __init__(self, kind: str, sensors: np.ndarray, z: np.ndarray, *, range_sigma: float = 0.01,
                 bearing_half: float = 2 * np.pi * 0.01):
        if kind not in ("range", "bearing", "range_bearing"):
            raise ValueError(f"_SensorModel handles range, bearing and range_bearing, not {kind!r}")
        z = np.asarray(z, float)
        super().__init__(kind, np.asarray(sensors, float), z if z.ndim == 3 else z[:, :, None])
        self.range_sigma, self.bearing_half = float(range_sigma), float(bearing_half)

    def residuals(self, k: int, p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Step ``k`` at positions ``p`` (N, 2): ``(viol (N,), logdens (N,))``, ``viol`` the
        largest ``|residual| / half - 1`` over the step's readings clipped at 0 (0: every
        reading consistent), ``logdens`` the summed log density of the range readings under
        their bounds (``-log(2 half)``, 0 for bearings and for a step without readings)."""
        from .geometry import wrap_pi
        N = len(p)
        viol, ld = np.zeros(N), np.zeros(N)
        dx = p[:, None, 0] - self.s[None, :, 0]
        dy = p[:, None, 1] - self.s[None, :, 1]
        if self.kind in ("range", "range_bearing"):
            zr = self.z[k, :, 0]
            ok = np.isfinite(zr)
            if ok.any():
                d = np.hypot(dx[:, ok], dy[:, ok])
                half = self.range_sigma * d + ROUNDING
                viol = np.maximum(viol, (np.abs(zr[ok] - d) / half - 1.0).max(axis=1))
                ld -= np.log(2 * half).sum(axis=1)
        if self.kind in ("bearing", "range_bearing"):
            zb = self.z[k, :, -1]
            ok = np.isfinite(zb)
            if ok.any():
                ang = np.arctan2(dy[:, ok], dx[:, ok])
                half = self.bearing_half + np.radians(ROUNDING)
                viol = np.maximum(viol, (np.abs(wrap_pi(np.radians(zb[ok]) - ang)) / half - 1.0).max(axis=1))
        return viol, ld

    def step(self, k: int, p: np.ndarray, L, U):
        """As :meth:`_Model.step`: ``factor(eps)`` is the likelihood of the step's readings
        with every bound widened by the factor ``1 + eps`` (0 where ``viol > eps``), up to a
        constant."""
        viol, ld = self.residuals(k, p)
        dens = np.exp(ld - ld.max()) if len(ld) else ld
        return viol, (lambda eps: (viol <= eps) * dens), (lambda eps: (L, U))


#: range / bearing / range+bearing particle-filter settings (issue 20): jerks x 4, 2000
#: particles, tolerance widened below 20 effective particles (best of a small sweep on 10 tasks
#: of suite seed 7; jerks x 2 lost track on range+bearing, the proximity k-NN motion on all
#: three; figures on 30 tasks in docs/stark-tier1.md)
SENSOR_SETTINGS: dict = {"jerk_scale": 4.0, "min_ess": 20.0, "n_particles": 2000}
#: a step whose readings need the bounds widened this many times over (for ``min_ess``
#: particles to meet them) means the particles have lost the track (a turn the constant-
#: acceleration motion with prior jerks cannot follow): from that step on the estimates are
#: the EKF bank's (on 12 range tasks of suite seed 7 the largest widening was 12.6 on tracks
#: kept and 238 on the one lost)
LOST_TRACK = 20.0


def track_sensor_task(task, seed: int = 0, fallback: bool = True, **kw) -> np.ndarray:
    """The particle filter of the module docstring on a range, bearing or range+bearing
    tracking task (``task.inputs``: sensors (m, 2), readings, sensor_model with uniform noise;
    the prior's schedule from :func:`_schedule`); ``kw`` are :func:`particle_track` settings
    (defaults :data:`SENSOR_SETTINGS`).  With ``fallback``, from the first step whose bounds
    had to be widened more than :data:`LOST_TRACK` times the estimates are those of the EKF bank
    (:func:`stsim.baselines.tracking.ekf_track`, run on the same readings; both are causal, so
    the switch uses only readings up to that step).  Returns positions (k, 2), one per task step.

    Raises ``ValueError`` for another modality or Gaussian noise (bounded noise only)."""
    from .trajectory_posterior import task_readings
    m = task.inputs["modality"]
    if m not in ("range", "bearing", "range_bearing"):
        raise ValueError(f"{task.id}: track_sensor_task handles range, bearing and range_bearing, not {m!r}")
    r = task_readings(task)
    z = r.z
    index, full, lib = _on_step_grid(task, z)
    model = _SensorModel(m, r.sensors, full, range_sigma=r.range_sigma, bearing_half=r.bearing_half)
    for key, val in SENSOR_SETTINGS.items():
        kw.setdefault(key, val)
    widened: list = []
    pos, _ = particle_track(model, lib, len(full), seed=seed, _eps_log=widened, **kw)
    pos = pos[index]
    lost = np.flatnonzero(np.asarray(widened)[index] > LOST_TRACK)
    if fallback and len(lost):
        from .tracking import ekf_track
        zz = z[:, :, 0] if z.shape[2] == 1 else z
        times = np.asarray(task.inputs.get("times") or index, float)
        ekf = ekf_track(m, r.sensors, times, zz, range_sigma=r.range_sigma,
                        bearing_sigma_rad=r.bearing_half)
        pos[lost[0]:] = ekf[lost[0]:]
    return pos
