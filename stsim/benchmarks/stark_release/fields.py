"""Loader for STARK's four released field-prediction folders (``data_final_v5/{spatial_impute,
temporal_impute, spatiotemporal_impute, spatiotemporal_forecast}``; BSD-3-Clause, UCLA NESL),
as tasks of our ``stark.field.*`` families so the same baselines and scorer run on them.

Layout read, per instance ``i``: ``{i}.npy`` readings (spatial: ``(n,)`` one per sensor;
temporal: ``(T,)``; spatiotemporal: ``(T, n)``) with NaN marking the value(s) to predict,
``{i}_coords.npy`` ``(n, 2)`` ``[lat, lon]``, ``{i}_gt.npy`` the gold, and ``{i}.csv`` whose
``query`` column is the released prompt (used verbatim as the task prompt: it is data).

Times become steps relative to the target (``-2, -1, +1, ...``; STARK's traffic series step
every 5 minutes, its PM2.5 series every hour).  ``meta['error_scale']`` is ``||gold||`` so the
scorer reports RMSPE; six temporal items have gold 0 (a stopped-traffic speed), for which
a percentage is undefined: their scale is the RMS of the readings shown (1.0 if those are all
zero too), recorded in ``meta['error_scale_source']``.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ...records import Task
from .tier1 import resolve_data_dir
from .folders import release_folders
from ..suites import SuiteError

SUITE = "stark-published-fields"

#: released folder -> family
FIELD_FOLDERS: dict[str, str] = {
    "spatial_impute": "stark.field.spatial_impute",
    "temporal_impute": "stark.field.temporal_impute",
    "spatiotemporal_impute": "stark.field.spatiotemporal_impute",
    "spatiotemporal_forecast": "stark.field.spatiotemporal_forecast",
}


def _load(path: Path) -> np.ndarray:
    try:
        return np.asarray(np.load(path, allow_pickle=False), float)
    except (OSError, ValueError) as exc:
        raise SuiteError(f"{path}: cannot read ({exc})") from None


def _query(path: Path) -> str:
    try:
        with open(path, newline="") as fh:
            return next(csv.DictReader(fh))["query"].strip()
    except (OSError, StopIteration, KeyError) as exc:
        raise SuiteError(f"{path}: no query row ({exc!r})") from None


def load_field_instance(folder: Path, i: int, family: str) -> Task:
    """One released field instance as a Task (see the module docstring).

    Raises:
        SuiteError: unreadable files, or not exactly one NaN-marked target (row).
    """
    where = f"{folder.name}/{i}"
    a = _load(folder / f"{i}.npy")
    latlon = _load(folder / f"{i}_coords.npy").reshape(-1, 2)
    gold = _load(folder / f"{i}_gt.npy")
    sites = latlon[:, ::-1]  # -> [lon, lat]
    inputs: dict[str, Any] = {"unit": None, "field_model": None}
    if family == "stark.field.spatial_impute":
        miss = np.flatnonzero(np.isnan(a))
        if len(miss) != 1 or len(a) != len(sites):
            raise SuiteError(f"{where}: expected one NaN among {len(sites)} sensor readings")
        k = int(miss[0])
        known = [j for j in range(len(a)) if j != k]
        inputs.update(sites=sites[known].tolist(), values=a[known].tolist(), time=0.0,
                      target_site=sites[k].tolist())
        answer: Any = float(gold.ravel()[0])
        shown = a[known]
    else:
        table = a.reshape(len(a), -1)
        rows = np.flatnonzero(np.all(np.isnan(table), axis=1))
        if len(rows) != 1 or table.shape[1] != len(sites):
            raise SuiteError(f"{where}: expected one all-NaN target row in a {table.shape} table "
                             f"for {len(sites)} sensor(s)")
        k = int(rows[0])
        known = [j for j in range(len(table)) if j != k]
        inputs.update(sites=sites.tolist(), times=[float(j - k) for j in known],
                      values=table[known].tolist(), target_time=0.0, time_unit="step")
        answer = float(gold.ravel()[0]) if family == "stark.field.temporal_impute" else gold.ravel().tolist()
        shown = table[known]
    scale = float(np.linalg.norm(np.atleast_1d(answer)))
    source = "gold"
    if scale == 0.0:
        finite = shown[np.isfinite(shown)]
        scale = float(np.sqrt(np.mean(finite ** 2))) if finite.size else 0.0
        scale, source = (scale, "readings_rms") if scale > 0 else (1.0, "unit")
    meta: dict[str, Any] = {"suite": SUITE, "source": f"STARK data_final_v5/{folder.name}", "instance": i,
                            "rubric": "stark", "error_scale": scale, "error_scale_source": source}
    fmt = "scalar" if family in ("stark.field.spatial_impute", "stark.field.temporal_impute") else "vector"
    if fmt == "vector":
        meta["answer_spec"] = {"length": len(answer)}
    return Task(f"{SUITE}/{family}/{i:06d}", family, _query(folder / f"{i}.csv"), inputs, answer, fmt, [], meta)


def load_published_fields(data: Path, n: int | None = None, options: dict[str, Any] | None = None) -> Iterator[Task]:
    """Yield the released field instances (first ``n`` per family), family by family.

    Raises:
        SuiteError: missing folder or malformed instance.
    """
    root = resolve_data_dir(data)
    wanted = (options or {}).get("families")
    for folder, family in release_folders(root, FIELD_FOLDERS, wanted):
        idx = sorted(int(p.stem) for p in folder.glob("*.csv") if p.stem.isdigit())
        for i in idx if n is None else idx[:n]:
            yield load_field_instance(folder, i, family)
