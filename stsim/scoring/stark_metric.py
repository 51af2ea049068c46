"""STARK's own per-item error convention, computed next to ours (issue 13).

STARK's released evaluation code (nesl/STARK_Benchmark, ``distance.py`` ``compute_mse`` and
``main.py`` ``execute_llm_solver`` / ``execute_llm_solver_online``; facts only, no code taken)
scores one *item* per released instance:

* point answers (localisation, including the proximity and spatial event tasks): the root mean
  square over the coordinates, ``sqrt(mean((pred - gold)**2))`` -- the Euclidean error divided
  by sqrt(2) for a 2-D point;
* the temporal event task (one time): ``|pred - gold|``;
* the x-y-t event localisation task: two numbers, spatial ``sqrt(mean over x, y)`` and temporal
  ``|dt|``;
* tracking: **one** value per instance, the root mean square over its first ``ts_len`` steps
  (default 10) with every step and every coordinate pooled (the x-y-t tracking task pools
  x, y and t together, as the released code does);
* field prediction: the relative L2 norm of the whole vector, ``||pred - gold|| / ||gold||``,
  or the plain root mean square when ``||gold|| <= 1e-10``.

Squares that would overflow (errors above about 1.3e154) or underflow (below about 1e-162) are
avoided by scaling by the largest difference (:func:`_rms`, :func:`_norm`), so a huge finite
answer gets its huge finite value, not ``inf`` (or NaN for a field item); other values are
computed exactly as STARK's code does.

A prediction with fewer values than the gold is unusable (``compute_mse`` returns ``None``);
extra values are cut to the gold's length; a computation that fails (ragged arrays, a missing
time) is unusable too (``main.py`` records NaN).  Unusable items are counted as
``stark_failures`` and left out of ``stark_trimmed``.

Aggregation (§4.1, "we compute all metrics using the trimmed values ... excluding the top and
bottom 10 % of the distribution"): sort the usable per-item values, drop ``floor(0.1 n)`` from
each end, and take the **arithmetic mean** of the rest.  The mean, not a root mean square,
because each per-item value already is a root mean square (an RMSE or an RMSPE): the paper's
table averages per-item errors, it does not pool squared errors across items.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from ..answers import stark_legacy_array
from ..records import Answer, Task
from .metrics import trimmed

#: our family -> STARK's dataset name (``--dataset`` of the released ``main.py``).
STARK_DATASETS: dict[str, str] = {
    "stark.localization.range": "loc_range",
    "stark.localization.bearing": "loc_bearing",
    "stark.localization.range_bearing": "loc_range_bearing",
    "stark.localization.proximity": "loc_region",
    "stark.localization.event": "loc_event_spatio",
    "stark.temporal_localization.event": "loc_event_temp",
    "stark.localization.event_xyt": "loc_event_spatio_temp",
    "stark.tracking.range": "track_range_online",
    "stark.tracking.bearing": "track_bearing_online",
    "stark.tracking.range_bearing": "track_range_bearing_online",
    "stark.tracking.proximity": "track_region_online",
    "stark.tracking.event": "track_event_spatio_online",
    "stark.temporal_tracking.event": "track_event_temp_online",
    "stark.tracking.event_xyt": "track_event_spatiotemp_online",
    "stark.field.spatial_impute": "spatial_impute",
    "stark.field.temporal_impute": "temporal_impute",
    "stark.field.spatiotemporal_impute": "spatiotemporal_impute",
    "stark.field.spatiotemporal_forecast": "spatiotemporal_forecast",
}

FIELD_DATASETS = frozenset({"spatial_impute", "temporal_impute", "spatiotemporal_impute",
                            "spatiotemporal_forecast"})
#: ``main.py``'s default ``--ts_len``: tracking steps scored per instance.
TS_LEN = 10
#: STARK's trim (§4.1): 10 % of the per-item values dropped each side before aggregating.
STARK_TRIM = 0.10
#: below this ``||gold||`` a field item gets a plain root mean square (``distance.py``).
NEAR_ZERO_NORM = 1e-10
#: STARK's reply to an unreadable answer (``distance.py`` ``handle_nan_values``): the centre of
#: the 10 x 10 area, or time 5 for the temporal event tasks.
TEMPORAL_DATASETS = frozenset({"loc_event_temp", "track_event_temp_online"})


class Unusable(ValueError):
    """The item has no usable STARK error (too-short prediction, or a failed computation)."""


def stark_guess(dataset: str) -> list[float] | None:
    """STARK's substitute for an unreadable localisation/tracking answer: ``[5]`` for the
    temporal event tasks, ``[5, 5]`` for the others; ``None`` for field tasks (no guess)."""
    if not dataset.startswith(("loc_", "track_")):
        return None
    return [5.0] if dataset in TEMPORAL_DATASETS else [5.0, 5.0]


def _shape_like_stark(a: np.ndarray) -> np.ndarray:
    if a.shape == ():
        return a.reshape(1, 1)
    return a.squeeze() if a.size > 1 else a


def _rescaled(d: np.ndarray, plain: float, reduce: Callable[[np.ndarray], float]) -> float:
    """``plain`` (``reduce`` of ``d ** 2`` under a square root, as STARK computes it) unless
    squaring overflowed (``inf`` from finite values: about 1.3e154 and above) or underflowed (0
    from non-zero values: below about 1e-162); then the same value computed on ``d`` divided by
    its largest magnitude and multiplied back, which neither can do.  NaN and ``inf`` in ``d``
    keep ``plain`` (NaN, ``inf``)."""
    if (math.isinf(plain) or plain == 0.0) and d.size:
        top = float(np.max(np.abs(d)))
        if math.isfinite(top) and top > 0.0:
            return top * float(np.sqrt(reduce((d / top) ** 2)))
    return plain


def _rms(d: Any) -> float:
    """``sqrt(mean(d ** 2))`` over every value of ``d`` (STARK's root mean square over the
    coordinates), without overflow or underflow of the squares (:func:`_rescaled`)."""
    d = np.asarray(d, dtype=float)
    return _rescaled(d, float(np.sqrt(np.mean(d ** 2))), np.mean)


def _norm(d: Any) -> float:
    """The Euclidean norm of every value of ``d`` (``np.linalg.norm``), without overflow or
    underflow of the squares (:func:`_rescaled`)."""
    d = np.asarray(d, dtype=float)
    return _rescaled(d, float(np.linalg.norm(d)), np.sum)


def _finish(a1: np.ndarray, a2: np.ndarray, field: bool) -> float:
    a1 = _shape_like_stark(a1)
    if len(a1) < len(a2):
        raise Unusable(f"prediction has {len(a1)} value(s), the gold {len(a2)}")
    a1 = a1[:len(a2)]
    if field and _norm(a2) > NEAR_ZERO_NORM:
        return _norm(a1 - a2) / _norm(a2)
    return _rms(a1 - a2)


def stark_item_error(dataset: str, pred: Any, gold: Any) -> float | tuple[float, float]:
    """STARK's per-item error of one single-answer item (see the module docstring).

    Args:
        dataset: STARK's dataset name (:data:`STARK_DATASETS` values, not a tracking one).
        pred: the prediction, a number or a (possibly nested) list of numbers.
        gold: the gold, a number or a list (point ``[x, y]`` in plane units, ``[x, y, t]``,
            a time, or a field vector).
    Returns:
        a float (plane units, time units, or a unitless ratio for field tasks); for
        ``loc_event_spatio_temp`` the pair ``(spatial, temporal)``.
    Raises:
        Unusable: too short a prediction, or shapes that cannot be combined.
    """
    try:
        a1 = np.asarray(pred, dtype=float)
        a2 = np.atleast_1d(np.asarray(gold, dtype=float)).T
        with np.errstate(all="ignore"):
            if dataset == "loc_event_temp":
                out: Any = _rms(a1 - a2)
            elif dataset == "loc_event_spatio_temp":
                out = (_rms(a1[:2] - a2[:2]), _rms(a1[2] - a2[2]))
            else:
                out = _finish(a1, a2, dataset in FIELD_DATASETS)
    except Unusable:
        raise
    except (ValueError, TypeError, IndexError) as exc:
        raise Unusable(f"cannot compare prediction and gold ({exc})") from None
    if any(math.isnan(v) for v in (out if isinstance(out, tuple) else (out,))):
        raise Unusable("error is NaN")
    return out


def stark_track_error(dataset: str, preds: Sequence[Any], golds: Sequence[Any]) -> float:
    """STARK's one value for a tracking instance: the root mean square over the given steps
    (the first ``ts_len``), every step and coordinate pooled.

    Args:
        preds: one prediction per step (a number or list of numbers each).
        golds: the gold per step (``[x, y]``, a time, or ``[x, y, t]``), same length.
    Raises:
        Unusable: fewer predictions than golds, or steps of different shapes.
    """
    try:
        rows = [_shape_like_stark(np.asarray(p, dtype=float)) for p in preds]
        a1 = _shape_like_stark(np.array(rows, dtype=float))
        a2 = np.asarray(golds, dtype=float).squeeze()
        a2 = np.atleast_1d(a2)
        with np.errstate(all="ignore"):
            out = _finish(a1, a2, False)
    except Unusable:
        raise
    except (ValueError, TypeError, IndexError) as exc:
        raise Unusable(f"cannot pool the steps ({exc})") from None
    if math.isnan(out):
        raise Unusable("error is NaN")
    return out


@dataclass
class StarkItem:
    """One STARK item (a released instance): ``error`` (the spatial one for x-y-t
    localisation), ``time_error`` (x-y-t localisation only), or ``reason`` when unusable."""
    task_id: str
    family: str
    error: float | None
    time_error: float | None = None
    reason: str | None = None


def _legacy_pred(answer: Answer | None, dataset: str) -> Any:
    """What STARK's reader makes of one reply: its array, the guess when unreadable."""
    if answer is None or answer.text is None:
        if answer is not None and answer.status == "ok" and answer.value is not None:
            return answer.value  # a typed value (no reply text): taken as it is
        raise Unusable("no reply")
    arr = stark_legacy_array(answer.text)
    if arr is None:
        guess = stark_guess(dataset)
        if guess is None:
            raise Unusable("unreadable reply (STARK records NaN)")
        return guess
    return arr


def stark_item(task: Task, answers: Iterable[Answer], max_steps: int | None = TS_LEN,
               legacy: bool = False) -> StarkItem | None:
    """The STARK item of one task, or ``None`` when the family has no STARK counterpart.

    ``legacy=False`` (our readers): an item is usable only when every answer it needs (each
    of the first ``max_steps`` steps for tracking) is ``ok``.  ``legacy=True`` (rubric
    ``stark-legacy``): each reply text is re-read as STARK's ``string_to_np_array`` does, an
    unreadable one replaced by :func:`stark_guess`, exactly as the released code scores it.
    """
    dataset = STARK_DATASETS.get(task.family)
    if dataset is None:
        return None
    by_step = {a.step: a for a in answers if a.task_id == task.id}
    try:
        if task.steps:
            steps = task.steps if max_steps is None else task.steps[:max_steps]
            preds = []
            for s in steps:
                a = by_step.get(s.index)
                if legacy:
                    preds.append(_legacy_pred(a, dataset))
                elif a is None or a.status != "ok":
                    raise Unusable(f"step {s.index}: {'missing' if a is None else a.status}")
                else:
                    preds.append(a.value)
            err = stark_track_error(dataset, preds, [s.answer for s in steps])
            return StarkItem(task.id, task.family, err)
        a = by_step.get(None)
        if legacy:
            pred = _legacy_pred(a, dataset)
        elif a is None or a.status != "ok":
            raise Unusable("missing" if a is None else a.status)
        else:
            pred = a.value
        err = stark_item_error(dataset, pred, task.answer)
    except Unusable as exc:
        return StarkItem(task.id, task.family, None, reason=str(exc))
    if isinstance(err, tuple):
        return StarkItem(task.id, task.family, err[0], time_error=err[1])
    return StarkItem(task.id, task.family, err)


def stark_trimmed_mean(values: Sequence[float], trim: float = STARK_TRIM) -> float:
    """Mean of the values without the ``floor(trim * n)`` smallest and largest (§4.1);
    NaN when empty.  Finite values whose sum overflows (per-item values near 1e308) are
    averaged scaled by the largest magnitude: the mean of finite values is finite."""
    kept = trimmed(values, trim)
    if not len(kept):
        return math.nan
    with np.errstate(over="ignore"):
        mean = float(np.mean(kept))
    if math.isinf(mean) and np.all(np.isfinite(kept)):
        top = float(np.max(np.abs(kept)))
        mean = top * float(np.mean(kept / top))
    return mean


def summarise_stark(items: Iterable[StarkItem], trim: float = STARK_TRIM) -> dict[str, dict[str, Any]]:
    """Per family: ``stark_trimmed`` (trimmed mean of the usable per-item values), ``stark_n``
    (usable items), ``stark_failures`` (unusable items); x-y-t localisation adds
    ``stark_trimmed_time`` (the temporal value, trimmed the same way)."""
    groups: dict[str, list[StarkItem]] = {}
    for it in items:
        groups.setdefault(it.family, []).append(it)
    out: dict[str, dict[str, Any]] = {}
    for fam, its in sorted(groups.items()):
        ok = [i for i in its if i.error is not None]
        row: dict[str, Any] = {"stark_trimmed": _r(stark_trimmed_mean([i.error for i in ok], trim)),
                               "stark_n": len(ok), "stark_failures": len(its) - len(ok)}
        times = [i.time_error for i in ok if i.time_error is not None]
        if times:
            row["stark_trimmed_time"] = _r(stark_trimmed_mean(times, trim))
        out[fam] = row
    return out


def _r(x: float) -> float | None:
    if x is None or math.isnan(x):
        return None
    return x if math.isinf(x) else round(float(x), 6)
