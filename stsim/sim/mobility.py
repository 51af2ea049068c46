"""A simulated person moving between points of interest, hour by hour (STARK §3.2.3 (6)-(7),
Tables 27-28: a finite-state mobility model with contextual factors).

The state is the POI the person is at (:data:`POIS`).  From POI ``i`` the next hour's POI is
drawn from

    P(j | i, hour, day) = softmax_j( log base_j(hour, weekend) + stay * [j == i] + sum of context terms )

where ``base`` is a daily schedule (:func:`base_weights`) and the context terms
(:func:`context_logits`) come from the day's weather, air quality, busy-traffic hours, fatigue
hours and event, exactly as printed in the prompts.  All numbers here are our own modelling
choices (STARK publishes no model), documented in :data:`CONTEXT_EFFECTS`.

:func:`visit_probability` computes the exact probability of visiting a set of POIs within the
next ``h`` hours (dynamic programming over the hourly transition matrices), which is what the
Bayes-optimal predictor uses.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

#: index -> POI kind (index 0 is home)
POIS = ("home", "office", "cafe", "restaurant", "shopping mall", "gym", "park", "cinema", "friend's home")
#: activity -> POIs where it happens (intent prediction, Table 28)
ACTIVITIES: dict[str, tuple[int, ...]] = {
    "go home": (0,), "work": (1,), "eat or drink out": (2, 3), "go shopping": (4,),
    "exercise": (5, 6), "watch a movie": (7,), "visit friends": (8,)}
WEATHER = ("sunny", "cloudy", "rainy")
AIR = ("good", "moderate", "unhealthy")
EVENTS = (None, "a big sports game", "a popular movie premiere", "a big sales event", "a planned date night")
STAY_LOGIT = 1.5

#: (condition, POI, logit added, hours it applies to or None for all day)
CONTEXT_EFFECTS: list[tuple[str, str, float, tuple[int, int] | None]] = [
    ("weather=rainy", "park", -2.0, None), ("weather=rainy", "shopping mall", 0.5, None),
    ("weather=rainy", "cinema", 0.5, None), ("weather=rainy", "home", 0.5, None),
    ("air=moderate", "park", -0.5, None),
    ("air=unhealthy", "park", -1.5, None), ("air=unhealthy", "gym", -0.5, None), ("air=unhealthy", "home", 0.5, None),
    ("fatigue", "home", 1.5, None), ("fatigue", "gym", -1.5, None),
    ("event=a big sports game", "restaurant", 1.0, (17, 23)), ("event=a big sports game", "friend's home", 1.0, (17, 23)),
    ("event=a popular movie premiere", "cinema", 2.0, (17, 23)),
    ("event=a big sales event", "shopping mall", 2.0, (9, 21)),
    ("event=a planned date night", "restaurant", 1.5, (18, 22)), ("event=a planned date night", "cinema", 1.0, (18, 22)),
]
#: extra logit for staying put during busy-traffic hours
TRAFFIC_STAY_LOGIT = 1.0


@dataclass
class DayContext:
    """One day's printed context.  Hours are 0-23 (local clock)."""
    date: str
    weekday: str
    weather: str
    air: str
    traffic_busy: list[int]
    fatigue: list[int]
    event: str | None
    trajectory: list[int] = field(default_factory=list)

    @property
    def weekend(self) -> bool:
        return self.weekday in ("Saturday", "Sunday")


def base_weights(hour: int, weekend: bool) -> np.ndarray:
    """Unnormalised schedule weight of each POI (:data:`POIS` order) at ``hour`` (0-23)."""
    w = np.full(len(POIS), 0.02)
    night = hour >= 22 or hour < 6
    w[0] = 3.0 if night else 0.4
    if not weekend and 8 <= hour <= 17:
        w[1] = 3.0
    if 7 <= hour <= 10 or 14 <= hour <= 16:
        w[2] = 0.5
    if hour in (12, 13, 18, 19, 20):
        w[3] = 1.0
    if 10 <= hour <= 20:
        w[4] = 0.8 if weekend else 0.2
    if 6 <= hour <= 8 or 17 <= hour <= 20:
        w[5] = 0.5
    if 8 <= hour <= 18:
        w[6] = 0.8 if weekend else 0.15
    if 18 <= hour <= 23:
        w[7] = 0.4
    if 18 <= hour <= 22:
        w[8] = 0.6 if weekend else 0.25
    return w


def context_logits(hour: int, day: DayContext) -> np.ndarray:
    """Additive logits of the day's context at ``hour`` (:data:`CONTEXT_EFFECTS`)."""
    active = {f"weather={day.weather}", f"air={day.air}", f"event={day.event}"}
    if hour in day.fatigue:
        active.add("fatigue")
    out = np.zeros(len(POIS))
    for cond, poi, logit, hours in CONTEXT_EFFECTS:
        if cond in active and (hours is None or hours[0] <= hour <= hours[1]):
            out[POIS.index(poi)] += logit
    return out


def transition_matrix(hour: int, day: DayContext) -> np.ndarray:
    """``(n, n)`` row-stochastic matrix: row ``i`` is the distribution of the POI at ``hour``
    given POI ``i`` the hour before, under ``day``'s context."""
    logits = np.log(base_weights(hour, day.weekend)) + context_logits(hour, day)
    stay = STAY_LOGIT + (TRAFFIC_STAY_LOGIT if hour in day.traffic_busy else 0.0)
    m = np.tile(logits, (len(POIS), 1)) + stay * np.eye(len(POIS))
    m = np.exp(m - m.max(axis=1, keepdims=True))
    return m / m.sum(axis=1, keepdims=True)


def visit_probability(matrices: Sequence[np.ndarray], start: int, targets: Sequence[int]) -> float:
    """Probability that a chain at ``start`` visits any of ``targets`` at one of the next
    ``len(matrices)`` steps, step ``k`` using ``matrices[k]`` (exact, by absorbing the targets)."""
    v = np.zeros(matrices[0].shape[0])
    v[start] = 1.0
    tg = list(targets)
    for m in matrices:
        v = v @ m
        v[tg] = 0.0
    return float(1.0 - v.sum())


def draw_day(rng: np.random.Generator, date: dt.date) -> DayContext:
    """A day's context: weather, air quality, busy traffic (weekday rush hours or weekend
    afternoon), fatigue hours (19-21 plus random daytime hours) and an optional event."""
    weekday = date.strftime("%A")
    weekend = weekday in ("Saturday", "Sunday")
    traffic = list(range(12, 19)) if weekend else [7, 8, 9, 16, 17, 18]
    fatigue = sorted({h for h in range(10, 19) if rng.random() < 0.12} | {19, 20, 21})
    return DayContext(date.isoformat(), weekday, str(rng.choice(WEATHER, p=[0.55, 0.3, 0.15])),
                      str(rng.choice(AIR, p=[0.6, 0.3, 0.1])), traffic, fatigue,
                      EVENTS[int(rng.choice(len(EVENTS), p=[0.4, 0.15, 0.15, 0.15, 0.15]))])


def simulate(rng: np.random.Generator, days: list[DayContext], start_poi: int = 0,
             until: tuple[int, int] | None = None) -> None:
    """Fill each day's ``trajectory`` (POI at each hour) from the model, starting at
    ``start_poi`` at 00:00 of the first day; ``until=(day, hour)`` stops after that hour."""
    cur = start_poi
    for d, day in enumerate(days):
        day.trajectory = []
        for h in range(24):
            if d or h:
                cur = int(rng.choice(len(POIS), p=transition_matrix(h, day)[cur]))
            day.trajectory.append(cur)
            if until == (d, h):
                return
