"""STARK POI and intent prediction on a simulated person (STARK §3.2.3 (6)-(7), Tables 27-28;
model: :mod:`stsim.sim.mobility`).

A week of hourly positions is simulated: six full days and the seventh up to the current hour
``H`` (between ``earliest_hour`` and ``23 - horizon_h``), with each day's context printed.
``stark.knowledge.poi`` asks whether the person will be at location ``x`` at one of the next
``horizon_h`` hours; ``stark.knowledge.intent`` whether they will do activity ``y`` (be at one
of its POIs, :data:`~stsim.sim.mobility.ACTIVITIES`).  Gold is read from the simulated future.

Balance: the label ``L`` is drawn first (probability 1/2); then the question ``x`` is drawn
uniformly from the candidates and a future is simulated, repeatedly, until the future gives
``L``.  Under this procedure the Bayes-optimal answer is 1 exactly when the true visit
probability ``p(x)`` exceeds the mean of ``p`` over the candidates (see
:mod:`stsim.baselines.mobility`).
"""
from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import numpy as np

from ..registry import Family, TaskBody, register_family
from ..sim.fields import random_sites
from ..sim.mobility import ACTIVITIES, POIS, DayContext, draw_day, simulate, transition_matrix
from .stark_city import is_published_tier3

MOBILITY_DEFAULTS: dict[str, Any] = {"days": 7, "horizon_h": 5, "earliest_hour": 6,
                                     "center": [-118.25, 34.05], "radius_m": 12000.0}
_YESNO = ("Answer 1 for yes or 0 for no, in this form (nothing else between the markers): "
          "[RESULTS_START] [p] [RESULTS_END]. Example: [RESULTS_START] [1] [RESULTS_END]")


def _ranges(hours: list[int]) -> str:
    """[7, 8, 9, 16] -> 'from 07:00 to 09:00 and at 16:00'."""
    parts, run = [], []
    for h in sorted(hours) + [None]:
        if run and (h is None or h != run[-1] + 1):
            parts.append(f"at {run[0]:02d}:00" if len(run) == 1 else f"from {run[0]:02d}:00 to {run[-1]:02d}:00")
            run = []
        if h is not None:
            run.append(h)
    return " and ".join(parts) if parts else "at no hour"


def describe_day(day: DayContext) -> str:
    """One day's context and trajectory in words (Tables 27-28 content, our wording)."""
    event = f" Event: {day.event}." if day.event else " No special event."
    return (f"{day.date} ({day.weekday}): weather {day.weather}, air quality {day.air}; traffic is "
            f"busy {_ranges(day.traffic_busy)}; the user feels tired {_ranges(day.fatigue)}.{event} "
            f"Hourly locations from 00:00: {', '.join(str(p) for p in day.trajectory)}.")


def _history(rng: np.random.Generator, cfg: dict[str, Any]):
    n_days = int(cfg["days"])
    first = dt.date(2024, 1, 1) + dt.timedelta(days=int(rng.integers(0, 365)))
    days = [draw_day(rng, first + dt.timedelta(days=d)) for d in range(n_days)]
    hour = int(rng.integers(int(cfg["earliest_hour"]), 24 - int(cfg["horizon_h"])))
    simulate(rng, days, until=(n_days - 1, hour))
    return days, hour


def _future(rng, start: int, matrices: list[np.ndarray]) -> list[int]:
    """A simulated continuation from POI ``start``, one step per transition matrix."""
    cur, out = start, []
    for m in matrices:
        cur = int(rng.choice(len(POIS), p=m[cur]))
        out.append(cur)
    return out


def _make(kind: str):
    def make(rng: np.random.Generator, cfg: dict[str, Any]) -> TaskBody:
        days, hour = _history(rng, cfg)
        horizon = int(cfg["horizon_h"])
        label = int(rng.integers(0, 2))
        mats = [transition_matrix(h, days[-1]) for h in range(hour + 1, hour + 1 + horizon)]
        candidates: list[Any] = list(range(len(POIS))) if kind == "poi" else list(ACTIVITIES)
        for _ in range(2000):
            asked = candidates[int(rng.integers(len(candidates)))]
            targets = [asked] if kind == "poi" else list(ACTIVITIES[asked])
            future = _future(rng, days[-1].trajectory[-1], mats)
            if int(any(p in targets for p in future)) == label:
                break
        else:
            raise RuntimeError("mobility: could not draw a balanced question")  # pragma: no cover
        sites = random_sites(rng, tuple(cfg["center"]), float(cfg["radius_m"]), len(POIS), 6)
        loc_lines = [f"Location {i}: {POIS[i]} (lat {s[1]:.6f}, lon {s[0]:.6f})" for i, s in enumerate(sites)]
        if kind == "poi":
            ask = f"Will the user be at location {asked} at some hour in the next {horizon} hours?"
        else:
            where = ", ".join(f"location {i} ({POIS[i]})" for i in ACTIVITIES[asked])
            ask = (f"Will the user {asked} (be at {where}) at some hour in the next {horizon} hours?")
        now = f"It is now {hour:02d}:00 on {days[-1].date}; the last number above is the user's current location."
        prompt = "\n".join(["Predict a user's movements from a week of hourly locations and daily context.",
                            "Locations:", *loc_lines, "", "Days:", *[describe_day(d) for d in days], "",
                            now, f"Question: {ask}", _YESNO])
        inputs = {"locations": [{"index": i, "kind": POIS[i], "lon": float(s[0]), "lat": float(s[1])}
                                for i, s in enumerate(sites)],
                  "days": [copy.deepcopy(d.__dict__) for d in days], "now_hour": hour, "horizon_h": horizon,
                  "asked": asked, "targets": targets, "candidates": candidates,
                  "activities": {k: list(v) for k, v in ACTIVITIES.items()}}
        return TaskBody(prompt, inputs, label, meta={"label_drawn": label, "future": future})
    return make


def validate_mobility(task) -> None:
    """Reject mobility inputs with trajectories outside the location list or missing keys.

    Raises:
        RecordError: naming the task and the problem.
    """
    from ..records import RecordError
    if is_published_tier3(task):  # STARK's released items carry text, not a simulated world
        return
    inp = task.inputs
    for key in ("locations", "days", "now_hour", "horizon_h", "targets"):
        if key not in inp:
            raise RecordError(f"task {task.id}: inputs.{key} is missing")
    locs, days = inp["locations"], inp["days"]
    if not isinstance(locs, list) or not locs or not all(
            isinstance(loc, dict) and all(isinstance(loc.get(k), (int, float)) for k in ("lon", "lat"))
            for loc in locs):
        raise RecordError(f"task {task.id}: inputs.locations must be a list of places with lon and lat")
    n = len(locs)
    if not isinstance(days, list) or not days or not all(
            isinstance(d, dict) and isinstance(d.get("trajectory"), list) for d in days):
        raise RecordError(f"task {task.id}: inputs.days must be a non-empty list of day records, "
                          "each with its hourly trajectory")
    for d in days:
        if any(not isinstance(p, int) or not 0 <= p < n for p in d.get("trajectory", [])):
            raise RecordError(f"task {task.id}: day {d.get('date')} has a location outside 0..{n - 1}")
    targets = inp["targets"]
    if not isinstance(targets, list) or not all(type(k) is int for k in targets):
        raise RecordError(f"task {task.id}: inputs.targets must be a list of integer ids, got {targets!r:.60}")
    if "candidates" in inp and not (isinstance(inp["candidates"], list) and all(
            isinstance(c, str) or type(c) is int for c in inp["candidates"])):
        raise RecordError(f"task {task.id}: inputs.candidates must be a list of location ids or "
                          "activity names")


register_family(Family("stark.knowledge.poi", "binary", _make("poi"), dict(MOBILITY_DEFAULTS),
                       "Will the simulated user visit location x in the next 5 hours (Table 27)?",
                       validate=validate_mobility, source="STARK §3.2.3 (6), Table 27 (simulated person)"))
register_family(Family("stark.knowledge.intent", "binary", _make("intent"), dict(MOBILITY_DEFAULTS),
                       "Will the simulated user do activity y in the next 5 hours (Table 28)?",
                       validate=validate_mobility, source="STARK §3.2.3 (7), Table 28 (simulated person)"))
