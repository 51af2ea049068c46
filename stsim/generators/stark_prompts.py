"""Prompt text for STARK tier-1 tasks, in our own wording, with the content of STARK
Appendix 7.9, Tables 11-17: the scenario, sensor positions, readings, units, angle
conventions, the noise warning, and the ``[RESULTS_START] ... [RESULTS_END]`` answer block."""
from __future__ import annotations

import math
from typing import Any, Sequence

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def fmt(v: float | None, decimals: int = 4) -> str:
    """A reading as printed: fixed decimals, ``nan`` for a missing value."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "nan"
    return f"{v:.{decimals}f}"


def sensor_lines(sensors: Sequence[Sequence[float]], decimals: int = 2) -> str:
    return "\n".join(f"- {sensor_label(i)}: [{s[0]:.{decimals}f}, {s[1]:.{decimals}f}]"
                     for i, s in enumerate(sensors))


def sensor_label(i: int) -> str:
    """Sensor ``i`` (0-based) as the prompt names it: ``Sensor A``, ``Sensor B``, ..."""
    return f"Sensor {LETTERS[i]}"


def sensor_name(i: int) -> str:
    """Sensor ``i`` in a message about a task's inputs: the prompt's name and the position in
    ``inputs.sensors`` / a readings row, e.g. ``Sensor A (index 0)``."""
    return f"{sensor_label(i)} (index {i})" if 0 <= i < len(LETTERS) else f"sensor index {i}"


def reading_text(r: Any, decimals: int = 4) -> str:
    """One sensor's reading: a number, ``nan``, or ``[range, bearing]``."""
    if isinstance(r, (list, tuple)):
        return "[" + ", ".join(fmt(v, decimals) for v in r) + "]"
    return fmt(r, decimals)


def readings_text(readings: Sequence[Any], decimals: int = 4) -> str:
    return ", ".join(reading_text(r, decimals) for r in readings)


BEARING_CONVENTION = (
    "Bearing convention: each bearing is an angle in degrees in [0, 360), measured at the "
    "sensor's own position, starting from the positive x-axis (a ray pointing right from the "
    "sensor) and increasing counter-clockwise.")

ANSWER_POINT = ("Give your answer exactly as [RESULTS_START] [x, y] [RESULTS_END], with nothing "
                "else between the two markers.")
ANSWER_TIME = ("Give your answer exactly as [RESULTS_START] [t] [RESULTS_END], with nothing "
               "else between the two markers.")
ANSWER_XYT = ("Give your answer exactly as [RESULTS_START] [x, y, t] [RESULTS_END], with "
              "nothing else between the two markers.")

MODALITY_TEXT = {
    "range": "a range reading: the distance from the sensor to the object",
    "bearing": "a bearing reading: the direction from the sensor to the object",
    "range_bearing": ("a pair [r, b]: r is the distance from the sensor to the object and b "
                      "is the bearing from the sensor to the object"),
    "proximity": "a binary reading: 1 if the object is inside the sensor's detection disk, 0 if not",
}


def _setting(modality: str, sensors, radius: float | None, each: str) -> list[str]:
    """Sensor count, positions, and the modality's conventions (disk radius, bearings)."""
    parts = [f"Setting: {len(sensors)} sensors at known positions on the plane [0, 10] x [0, 10]; "
             f"{each} {MODALITY_TEXT[modality]}.",
             "Sensor positions ([x, y]):\n" + sensor_lines(sensors)]
    if modality == "proximity":
        parts.append(f"Each sensor detects the object when it is within a distance of {radius:g} "
                     "of the sensor (a closed disk).")
    if modality in ("bearing", "range_bearing"):
        parts.append(BEARING_CONVENTION)
    return parts


def localization_prompt(modality: str, sensors, readings, *, radius: float | None = None) -> str:
    n = len(sensors)
    parts = ["Estimate where an object lies in a 2D plane from sensor measurements.",
             *_setting(modality, sensors, radius, "each gives")]
    parts.append(f"Readings, in sensor order A to {LETTERS[n - 1]}: {readings_text(readings)}.")
    parts.append("The readings may be noisy.")
    parts.append("Question: what is the most likely [x, y] position of the object? " + ANSWER_POINT)
    return "\n".join(parts)


def event_localization_prompt(target: str, sensors, readings, *, speed: float,
                              time_unit: str = "s") -> str:
    """``target``: ``"position"``, ``"time"`` or ``"both"``."""
    n = len(sensors)
    unit_word = {"s": "seconds", "min": "minutes"}[time_unit]
    ask = {"position": "where the event happened, as [x, y] in km. " + ANSWER_POINT,
           "time": f"when the event happened, in {unit_word}. " + ANSWER_TIME,
           "both": f"where and when the event happened, as [x, y, t] with x, y in km and t in "
                   f"{unit_word}. " + ANSWER_XYT}[target]
    return "\n".join([
        "A seismic event (a small quake or a blast) happens at an unknown place and unknown time "
        "inside a 10 km x 10 km square area.",
        f"{n} geophones at known positions record the time at which the wave reaches them.",
        f"Propagation model: a sensor at distance d km from the event detects it at time "
        f"T = t0 + d / {speed:g}, where t0 is the event time and {speed:g} km/{time_unit} is the "
        "wave speed.",
        "Sensor positions ([x, y] in km):\n" + sensor_lines(sensors),
        f"Detection times in {unit_word}, in sensor order A to {LETTERS[n - 1]}: "
        f"{readings_text(readings)}.",
        "The detection times may be noisy.",
        "Question: estimate " + ask,
    ])


def tracking_prompt(modality: str, sensors, *, radius: float | None = None) -> str:
    n = len(sensors)
    parts = ["Track a moving object in a 2D plane from sensor measurements that arrive step by step.",
             *_setting(modality, sensors, radius, "at each time step each sensor may give")]
    parts += [
        f"At each step you receive the time stamp and one reading per sensor, in order A to "
        f"{LETTERS[n - 1]}. A sensor that did not report at that step shows nan. Readings may "
        "be noisy.",
        "Task: after each step, estimate the object's current [x, y] position, using the new "
        "readings and everything received before. You must always give an estimate. " + ANSWER_POINT,
    ]
    return "\n".join(parts)


def event_tracking_prompt(target: str, sensors, *, speed: float, time_unit: str = "min") -> str:
    """``target``: ``"position"`` (emission times known), ``"time"`` or ``"both"``."""
    n = len(sensors)
    unit_word = {"s": "seconds", "min": "minutes"}[time_unit]
    if target == "position":
        what = ("At each step the source emits one pulse at that step's time stamp (known). "
                "Estimate the source's [x, y] position (km) at each step. " + ANSWER_POINT)
    elif target == "time":
        what = ("At each step the source fires one shot at an unknown time t0. Estimate that "
                f"step's t0 in {unit_word}. " + ANSWER_TIME)
    else:
        what = ("At each step the source fires one shot at an unknown place and time. Estimate "
                f"that step's [x, y, t0] (km, {unit_word}). " + ANSWER_XYT)
    return "\n".join([
        "A sound source moves inside a 10 km x 10 km area; microphones at known positions record "
        "when each of its shots arrives.",
        f"Arrival model: a microphone at distance d km from the source hears a shot fired at t0 at "
        f"T = t0 + d / {speed:g} ({speed:g} km/{time_unit} is the speed of sound here).",
        "Sensor positions ([x, y] in km):\n" + sensor_lines(sensors),
        f"At each step you receive one arrival time per microphone in {unit_word}, in order A to "
        f"{LETTERS[n - 1]}; nan means that microphone missed the shot. Times may be noisy.",
        "Use the new readings and all earlier ones. You must always give an estimate. " + what,
    ])


def step_fragment(index: int, time: float | None, readings) -> str:
    when = f" | At time {time:.4f}," if time is not None else " |"
    return f"Step {index}{when} the sensor readings are {readings_text(readings)}."
