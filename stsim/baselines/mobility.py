"""Baselines for POI and intent prediction (:mod:`stsim.generators.stark_mobility`).

* ``baseline`` -- STARK's FSM baseline (Appendix 7.6, "Others"): a first-order Markov chain
  over locations estimated from the printed history (transition counts plus ``alpha`` = 0.1
  add-one-style smoothing per row, the same matrix at every hour), no context used.
* ``baseline:bayes`` -- the Bayes-optimal predictor: it knows the true transition model
  (:func:`stsim.sim.mobility.transition_matrix` with each printed day's context).

Both compute the probability ``p(x)`` of visiting the asked target within the horizon
(:func:`stsim.sim.mobility.visit_probability`) for every candidate question, and answer 1 when
the asked one exceeds the candidates' mean: the optimal threshold under the generator's
balanced question drawing (label first, then question and future by rejection; see the
generator's docstring), exact for ``bayes`` and plug-in for the Markov chain.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..records import Answer, Task
from ..sim.mobility import DayContext, transition_matrix, visit_probability


def _targets(inp: dict[str, Any], cand: Any) -> list[int]:
    return [int(cand)] if not isinstance(cand, str) else list(inp["activities"][cand])


def markov_matrix(days: list[dict[str, Any]], n: int, alpha: float = 0.1) -> np.ndarray:
    """``(n, n)`` first-order transition estimate from consecutive hourly locations of the
    printed history (days concatenated), rows smoothed by ``alpha`` pseudo-counts."""
    seq = [p for d in days for p in d["trajectory"]]
    counts = np.full((n, n), alpha)
    for a, b in zip(seq, seq[1:]):
        counts[a, b] += 1.0
    return counts / counts.sum(axis=1, keepdims=True)


def _decide(task: Task, matrices: list[np.ndarray], solver: str) -> list[Answer]:
    inp = task.inputs
    start = int(inp["days"][-1]["trajectory"][-1])
    probs = [visit_probability(matrices, start, _targets(inp, c)) for c in inp["candidates"]]
    p = visit_probability(matrices, start, [int(t) for t in inp["targets"]])
    return [Answer(task.id, None, "ok", value=int(p > float(np.mean(probs))), solver=solver,
                   detail=f"p={p:.4f}, threshold={np.mean(probs):.4f}")]


def solve_markov(task: Task, solver: str = "baseline") -> list[Answer]:
    """FSM / Markov-chain baseline (see module docstring)."""
    if "days" not in task.inputs:
        return [Answer(task.id, None, "no_estimate", solver=solver,
                       detail="no parsed trajectory in the task (published item)")]
    m = markov_matrix(task.inputs["days"], len(task.inputs["locations"]))
    return _decide(task, [m] * int(task.inputs["horizon_h"]), solver)


def solve_bayes(task: Task, solver: str = "baseline:bayes") -> list[Answer]:
    """Bayes-optimal predictor under the true transition model (see module docstring)."""
    if "days" not in task.inputs:
        return [Answer(task.id, None, "no_estimate", solver=solver,
                       detail="no parsed trajectory in the task (published item)")]
    inp = task.inputs
    day = DayContext(**inp["days"][-1])
    hour = int(inp["now_hour"])
    mats = [transition_matrix(h, day) for h in range(hour + 1, hour + 1 + int(inp["horizon_h"]))]
    return _decide(task, mats, solver)


MOBILITY_FAMILIES = ("stark.knowledge.poi", "stark.knowledge.intent")
BASELINES: dict[str, Callable[..., list[Answer]]] = {f: solve_markov for f in MOBILITY_FAMILIES}
ALTERNATIVES = {f: {"bayes": solve_bayes} for f in MOBILITY_FAMILIES}
