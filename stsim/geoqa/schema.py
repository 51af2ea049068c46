"""JSON Schemas of geoqa answers (seed 003 §4: outputs constrained to a JSON schema).

:func:`answer_schema` gives, per answer format, the schema of the object a model returns under
OpenAI-compatible structured output (``response_format = {"type": "json_schema", ...}``):
``{"answer": VALUE | null, "note": string}``.  ``VALUE`` is typed by the format (below); ``null``
is an abstention, and ``note`` says why (a note the shared refusal reader reads as a refusal or
a premise rejection makes the reply a refusal).  The ``geoqa`` rubric reads this object as well
as free text.  A false-premise question gets the schema of the template's own answer type, so
the schema does not give the premise away.

=================  ===========================================================================
format             VALUE
=================  ===========================================================================
geo_boolean        ``"yes"`` or ``"no"``
geo_count          integer
geo_distance,      number (in the unit the question asks)
geo_area,
geo_ratio,
geo_angle
geo_point          ``[lat, lon]`` (two numbers, degrees)
geo_bbox           ``[west, south, east, north]`` (four numbers, degrees)
geo_polygon        string (WKT ``POLYGON``, lon lat)
geo_compass        one of the 8 or 16 compass abbreviations (``answer_spec.points``)
geo_entity,        string
geo_cell
geo_entity_set,    array of strings (empty for none)
geo_ranked
geo_datetime       string ``YYYY-MM-DD HH:MM``
=================  ===========================================================================
"""
from __future__ import annotations

from typing import Any

_NUMBER = {"type": "number"}


def value_schema(answer_format: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """The schema of one answer value of ``answer_format``.

    Raises:
        KeyError: a format that is not a geoqa answer type.
    """
    from ..answers_geo import COMPASS16
    spec = spec or {}
    if answer_format == "geo_boolean":
        return {"type": "string", "enum": ["yes", "no"]}
    if answer_format == "geo_count":
        return {"type": "integer"}
    if answer_format in ("geo_distance", "geo_area", "geo_ratio", "geo_angle"):
        return dict(_NUMBER)
    if answer_format == "geo_point":
        return {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2}
    if answer_format == "geo_bbox":
        return {"type": "array", "items": _NUMBER, "minItems": 4, "maxItems": 4}
    if answer_format == "geo_compass":
        points = int(spec.get("points", 16))
        return {"type": "string", "enum": list(COMPASS16[:: 16 // points])}
    if answer_format in ("geo_polygon", "geo_entity", "geo_cell"):
        return {"type": "string"}
    if answer_format in ("geo_entity_set", "geo_ranked"):
        return {"type": "array", "items": {"type": "string"}}
    if answer_format == "geo_datetime":
        return {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$"}
    raise KeyError(f"no JSON Schema for answer format {answer_format!r}")


def answer_schema(answer_format: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON Schema of a reply object ``{"answer": VALUE | null, "note": string}``."""
    return {"type": "object", "additionalProperties": False, "required": ["answer", "note"],
            "properties": {"answer": {"anyOf": [value_schema(answer_format, spec), {"type": "null"}]},
                           "note": {"type": "string"}}}


def json_value(answer_format: str, value: Any) -> Any:
    """A gold value as the JSON ``answer`` a model following the schema writes."""
    if answer_format == "geo_boolean":
        return "yes" if value else "no"
    if answer_format == "geo_datetime":
        return str(value).replace("T", " ")
    return value
