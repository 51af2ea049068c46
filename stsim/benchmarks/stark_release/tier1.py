"""Loader for STARK's released data (``data_final_v5``; BSD-3-Clause, UCLA NESL): turns its
tier-1 localisation and tracking instances into our :class:`~stsim.records.Task` records, in
the same families as our generator, so every solver and scorer runs on them unchanged.

Layout read (per instance ``i`` of a folder): ``{i}_sensor_location.csv`` (x, y), ``{i}_sensor_
{j}.csv`` (column ``d`` measured, ``d_noiseless`` exact; tracking files add ``time``; empty cells
are dropped readings; range+bearing cells hold ``"[range bearing]"``) and
``{i}_object_location.csv`` (gold).

Numbers are rounded as STARK's prompts print them (sensors 2 decimals, readings 4 decimals,
Appendix 7.9), so our baselines see what the paper's models saw.  Wave speeds (5 km/s for
event localisation, 20 km/min for event tracking) were checked against the noiseless readings.

``data`` may be the unpacked ``data_final_v5`` folder, a folder containing it, or the
``data_final.tar.gz`` archive (unpacked once into ``~/.cache/stsim``, :func:`unpack_cached`).
"""
from __future__ import annotations

import csv
import math
import os
import re
import shutil
import sys
import tarfile
import tempfile
import zlib
from pathlib import Path
from typing import Any, Iterator


from ...generators import stark_prompts as P
from ...generators.stark_tier1 import READING_DECIMALS, SENSOR_DECIMALS
from ...records import Step, Task
from .tier2 import FOLDERS as TIER2_FOLDERS
from .tier2 import load_tier2
from ..suites import SuiteError
from .folders import release_folders

SUITE = "stark-published"

#: released folder prefix -> (family, modality, extra inputs)
FOLDERS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "localization_range_0.01": ("stark.localization.range", "range", {}),
    "localization_bearing_0.01": ("stark.localization.bearing", "bearing", {}),
    "localization_range_bearing_[0.01, 0.01]": ("stark.localization.range_bearing", "range_bearing", {}),
    "localization_region_4.0": ("stark.localization.proximity", "proximity", {"radius": 4.0}),
    "localization_event_spatio_0.01": ("stark.localization.event", "toa", {"wave_speed": 5.0, "time_unit": "s"}),
    "localization_event_temp_0.01": ("stark.temporal_localization.event", "toa", {"wave_speed": 5.0, "time_unit": "s"}),
    "localization_event_spatio_temp_0.01": ("stark.localization.event_xyt", "toa", {"wave_speed": 5.0, "time_unit": "s"}),
    "tracking_range_0.01": ("stark.tracking.range", "range", {}),
    "tracking_bearing_0.01": ("stark.tracking.bearing", "bearing", {}),
    "tracking_range_bearing_[0.01, 0.01]": ("stark.tracking.range_bearing", "range_bearing", {}),
    "tracking_region_4.0": ("stark.tracking.proximity", "proximity", {"radius": 4.0}),
    "tracking_event_spatio_0.01": ("stark.tracking.event", "toa", {"wave_speed": 20.0, "time_unit": "min"}),
    "tracking_event_temp_0.01": ("stark.temporal_tracking.event", "toa", {"wave_speed": 20.0, "time_unit": "min"}),
    "tracking_event_spatio_temp_0.01": ("stark.tracking.event_xyt", "toa", {"wave_speed": 20.0, "time_unit": "min"}),
}

_SENSOR_MODELS = {
    "range": {"modality": "range", "noise": {"kind": "uniform_relative", "sigma": 0.01}},
    "bearing": {"modality": "bearing", "noise_rad": {"kind": "uniform_absolute", "half_width": 2 * math.pi * 0.01}},
    "proximity": {"modality": "proximity", "radius": 4.0, "flip_prob": 0.0},
}
_SENSOR_MODELS["range_bearing"] = {"modality": "range_bearing", "range": _SENSOR_MODELS["range"],
                                   "bearing": _SENSOR_MODELS["bearing"]}


def _toa_model(speed: float) -> dict[str, Any]:
    return {"modality": "toa", "speed": speed, "noise": {"kind": "uniform_absolute", "half_width": 0.01}}


def cache_dir() -> Path:
    """Where unpacked archives are kept: ``$XDG_CACHE_HOME/stsim`` (default ``~/.cache/stsim``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stsim"


def unpack_cached(archive: Path) -> Path:
    """Unpack ``archive`` once into :func:`cache_dir` and return the folder; later calls with
    the same archive (same name, size and modification time) reuse it.  The first call says on
    standard error where it unpacks (the STARK release takes about 61 MB unpacked).

    The archive is unpacked into a hidden temporary folder next to its final place and
    renamed when complete, so an interrupted or failed unpack is never taken for a finished one.

    Raises:
        SuiteError: the archive is truncated or corrupt, or the cache cannot be written.
    """
    st = archive.stat()
    stem = archive.name.split(".")[0] or "data"
    dest = cache_dir() / f"{stem}-{st.st_size}-{st.st_mtime_ns}"
    if dest.is_dir():
        return dest
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        partial = Path(tempfile.mkdtemp(prefix=f".partial-{dest.name}-", dir=dest.parent))
    except OSError as exc:
        raise SuiteError(f"--data {archive}: cannot create the unpack cache {dest.parent} "
                         f"({exc.strerror or exc})") from None
    print(f"stsim: unpacking {archive} ({st.st_size / 1e6:.0f} MB packed) into {dest} once; later runs "
          "with the same archive reuse it (delete the folder to free the space; $XDG_CACHE_HOME moves the cache)",
          file=sys.stderr)
    try:
        with tarfile.open(archive) as tf:
            tf.extractall(partial, filter="data")
        os.rename(partial, dest)
    except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
        shutil.rmtree(partial, ignore_errors=True)
        if dest.is_dir():  # another process finished the same unpack first
            return dest
        raise SuiteError(f"--data {archive}: cannot unpack the archive, truncated or corrupt? "
                         f"({type(exc).__name__}: {exc or 'unexpected end of data'})") from None
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return dest


def resolve_data_dir(data: Path) -> Path:
    """Find ``data_final_v5`` from a folder, its parent, or the release tarball (unpacked once
    into the cache, :func:`unpack_cached`).

    Raises:
        SuiteError: nothing usable at ``data``.
    """
    data = Path(data)
    if data.is_file() and data.name.endswith((".tar.gz", ".tgz")):
        data = unpack_cached(data)
    if not data.exists():
        raise SuiteError(f"--data {data}: no such file or folder")
    if not data.is_dir():
        raise SuiteError(f"--data {data}: is neither a folder nor a .tar.gz / .tgz archive (give the "
                         "unpacked data_final_v5/ folder or the data_final.tar.gz archive)")
    for cand in (data, data / "data_final_v5", *sorted(data.glob("*/"))):
        if (cand / "localization_range_0.01").is_dir():
            return cand
    raise SuiteError(f"--data {data}: no STARK release found (expected folders such as "
                     "localization_range_0.01 inside data_final_v5/)")


def _rows(path: Path) -> list[dict[str, str]]:
    try:
        with open(path, newline="") as fh:
            return list(csv.DictReader(fh))
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read ({exc.strerror})") from None


def _cell(text: str, modality: str) -> Any:
    """A reading cell -> float, [range, bearing], or None when dropped."""
    text = (text or "").strip()
    if not text:
        return None
    if modality == "range_bearing":
        nums = [float(v) for v in re.findall(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?", text)]
        if len(nums) != 2:
            raise ValueError(f"expected '[range bearing]', got {text!r}")
        return [round(nums[0], READING_DECIMALS), round(nums[1], READING_DECIMALS)]
    return round(float(text), READING_DECIMALS)


def _indices(folder: Path) -> list[int]:
    return sorted(int(p.name.split("_")[0]) for p in folder.glob("*_sensor_location.csv"))


def load_instance(folder: Path, i: int, family: str, modality: str, extra: dict[str, Any]) -> Task:
    """One released instance as a Task (see module docstring for the layout)."""
    sensors = [[round(float(r["x"]), SENSOR_DECIMALS), round(float(r["y"]), SENSOR_DECIMALS)]
               for r in _rows(folder / f"{i}_sensor_location.csv")]
    cols = [_rows(folder / f"{i}_sensor_{j}.csv") for j in range(len(sensors))]
    obj = _rows(folder / f"{i}_object_location.csv")
    where = f"{folder.name}/{i}"
    try:
        per_sensor = [[_cell(r["d"], modality) for r in col] for col in cols]
    except (KeyError, ValueError) as exc:
        raise SuiteError(f"{where}: bad reading ({exc})") from None
    tracking = "time" in cols[0][0]
    fmt = {"stark.temporal_localization.event": "time", "stark.temporal_tracking.event": "time",
           "stark.localization.event_xyt": "vector", "stark.tracking.event_xyt": "vector"}.get(family, "point")
    speed = extra.get("wave_speed")
    model = _toa_model(speed) if modality == "toa" else _SENSOR_MODELS[modality]
    inputs: dict[str, Any] = {"modality": modality, "sensors": sensors, "sensor_model": model,
                              "domain": [0.0, 10.0], **extra}
    meta: dict[str, Any] = {"suite": SUITE, "source": f"STARK data_final_v5/{folder.name}", "instance": i,
                            "sensor_rounding": 0.5 * 10 ** -SENSOR_DECIMALS,
                            "rubric": "stark"}
    if fmt == "vector":
        meta["answer_spec"] = {"length": 3}
    task_id = f"{SUITE}/{family}/{i:06d}"
    if not tracking:
        readings = [c[0] for c in per_sensor]
        inputs["readings"] = readings
        o = obj[0]
        if fmt == "time":
            answer: Any = float(o["x"])  # released temporal gold repeats t in the x and y columns
        elif fmt == "vector":
            answer = [float(o["x"]), float(o["y"]), float(o["t"])]
        else:
            answer = [float(o["x"]), float(o["y"])]
        if modality == "toa":
            target = {"stark.localization.event": "position", "stark.temporal_localization.event": "time"}.get(family, "both")
            prompt = P.event_localization_prompt(target, sensors, readings, speed=speed, time_unit=extra["time_unit"])
        else:
            prompt = P.localization_prompt(modality, sensors, readings, radius=extra.get("radius"))
        return Task(task_id, family, prompt, inputs, answer, fmt, [], meta)
    times = [float(r["time"]) for r in cols[0]]
    readings = [list(step) for step in zip(*per_sensor)]
    inputs["readings"] = readings
    show_time = True
    if fmt == "time":
        golds: list[Any] = [float(o["t"]) for o in obj]
        show_time = False
        inputs["times"] = None
    elif fmt == "vector":
        golds = [[float(o["x"]), float(o["y"]), float(o["event_t"])] for o in obj]
        show_time = False
        inputs["times"] = None
    else:
        golds = [[float(o["x"]), float(o["y"])] for o in obj]
        inputs["times"] = times
    steps = [Step(k, P.step_fragment(k, times[k] if show_time else None, readings[k]),
                  {"time": times[k] if show_time else None, "readings": readings[k]}, golds[k])
             for k in range(len(times))]
    if modality == "toa":
        target = {"stark.tracking.event": "position", "stark.temporal_tracking.event": "time"}.get(family, "both")
        prompt = P.event_tracking_prompt(target, sensors, speed=speed, time_unit=extra["time_unit"])
    else:
        prompt = P.tracking_prompt(modality, sensors, radius=extra.get("radius"))
    return Task(task_id, family, prompt, inputs, None, fmt, steps, meta)


def load_published(data: Path, n: int | None = None, options: dict[str, Any] | None = None) -> Iterator[Task]:
    """Yield the released tier-1 instances (first ``n`` per family when given), family by
    family in the order of :data:`FOLDERS`, then the released tier-2 relation items (first
    ``n`` per released category, :mod:`stsim.benchmarks.stark_release.folders.tier2`).
    ``options['families']`` restricts the families.

    Raises:
        SuiteError: missing data folder or a malformed file (naming the instance).
    """
    root = resolve_data_dir(data)
    wanted = (options or {}).get("families")
    yield from _tier1(root, n, wanted)
    if any((root / top).is_dir() for top in TIER2_FOLDERS) or wanted:
        yield from load_tier2(root, n, wanted)


def _tier1(root: Path, n: int | None, wanted) -> Iterator[Task]:
    for folder, (family, modality, extra) in release_folders(root, FOLDERS, wanted, lambda v: v[0]):
        idx = _indices(folder)
        for i in idx if n is None else idx[:n]:
            yield load_instance(folder, i, family, modality, extra)
