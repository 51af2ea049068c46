"""Field and knowledge tasks survive a JSONL round trip, and their validators reject bad inputs."""
from __future__ import annotations

import json

import pytest

from stsim.records import RecordError, Task
from stsim.registry import generate_task, validate_task

NEW = ["stark.field.spatial_impute", "stark.field.temporal_impute", "stark.field.spatiotemporal_impute",
       "stark.field.spatiotemporal_forecast", "stark.knowledge.direction", "stark.knowledge.proximity",
       "stark.knowledge.route", "stark.knowledge.eta", "stark.knowledge.route_segment",
       "stark.knowledge.poi", "stark.knowledge.intent"]


def _roundtrip(t: Task) -> Task:
    return Task.from_dict(json.loads(json.dumps(t.to_dict())))


@pytest.mark.parametrize("family", NEW)
def test_roundtrip_validates_and_baseline_still_answers(family):
    from stsim.baselines import BASELINES
    t = generate_task(family, 0)
    back = _roundtrip(t)
    validate_task(back)
    assert BASELINES[family](back)[0].value == BASELINES[family](t)[0].value


def test_field_validator_rejects_bad_sites_and_shapes():
    t = _roundtrip(generate_task("stark.field.spatiotemporal_impute", 0))
    t.inputs["sites"][0] = [200.0, 34.0]
    with pytest.raises(RecordError, match="lon, lat"):
        validate_task(t)
    t = _roundtrip(generate_task("stark.field.spatiotemporal_impute", 0))
    t.inputs["values"] = t.inputs["values"][:-1]
    with pytest.raises(RecordError, match="expected"):
        validate_task(t)


def test_city_and_mobility_validators():
    t = _roundtrip(generate_task("stark.knowledge.route", 0))
    t.inputs["c"] = "Nowhere Tower"
    with pytest.raises(RecordError, match="malformed"):
        validate_task(t)
    t = _roundtrip(generate_task("stark.knowledge.poi", 0))
    t.inputs["days"][0]["trajectory"][3] = 42
    with pytest.raises(RecordError, match="outside"):
        validate_task(t)
