"""Build tier-1 tasks by hand (worked examples, bad-input cases) the way the generator would."""
from __future__ import annotations

from stsim.generators.stark_tier1 import make_sensor
from stsim.records import Step, Task
from stsim.registry import get_family

FORMATS = {"stark.temporal_localization.event": "time", "stark.temporal_tracking.event": "time",
           "stark.localization.event_xyt": "vector", "stark.tracking.event_xyt": "vector"}


def tier1_task(family: str, sensors, readings, answer=None, *, steps=None, times=None, indices=None,
               **cfg) -> Task:
    fam = get_family(family)
    conf = {**fam.defaults, **cfg}
    modality = "toa" if family.endswith(("event", "event_xyt")) else family.rsplit(".", 1)[1]
    inputs = {"modality": modality, "sensors": sensors, "readings": readings,
              "sensor_model": make_sensor(modality, conf).params(), "domain": [0.0, 10.0]}
    if modality == "proximity":
        inputs["radius"] = conf["radius"]
    if modality == "toa":
        inputs["wave_speed"] = conf["wave_speed"]
    step_objs = []
    if steps is not None:
        inputs["times"] = times
        idx = range(len(steps)) if indices is None else indices
        step_objs = [Step(k, "", {"readings": r}, a) for k, (r, a) in zip(idx, steps)]
    return Task(f"test/{family}/000000", family, "", inputs, answer,
                FORMATS.get(family, "point"), step_objs, {"rubric": "stark"})
