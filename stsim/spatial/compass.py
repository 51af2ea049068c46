"""The eight compass points as vectors, and the small direction model that answers the
cardinal-direction templates (Cohn & Blackwell, seed 002, §3, templates T1-T6).

Conventions: a direction is one of :data:`COMPASS8` (``"north"``, ``"northeast"``, ...); its
vector is a unit vector ``(east, north)`` in a local flat frame; azimuths are degrees clockwise
from north in ``[0, 360)``.

The model has three ideas, each a function:

* :func:`turn_around` -- reversing a heading (rotation by 180 degrees) moves nobody: what lies
  on each side of the agent stays where it was;
* :func:`direction_of_feature` -- an agent moving *along* the ``side`` edge of a feature (the
  heading must be perpendicular to ``side``) finds the feature's interior (a lake, a park's
  centre, a road beside it) towards the opposite of ``side``, and what surrounds the feature
  (the sea around an island) towards ``side`` itself;
* :func:`road_axis` -- a road "running from A to B" is a line whose direction is ``A -> B``;
  A and B must be opposite compass points.
"""
from __future__ import annotations

import math

from ..answers import COMPASS8  # the eight points, clockwise from north (index * 45 = azimuth)

#: How the prompts spell each point (hyphenated inter-cardinals, as the seed paper prints them).
SPELLING: dict[str, str] = {d: (d if len(d) <= 5 else f"{d[:5]}-{d[5:]}") for d in COMPASS8}


class DirectionError(ValueError):
    """A name that is not a compass point, or a situation the model cannot describe."""


def _index(direction: str) -> int:
    try:
        return COMPASS8.index(direction)
    except ValueError:
        raise DirectionError(f"{direction!r} is not one of the eight compass points "
                             f"({', '.join(COMPASS8)})") from None


def azimuth_of(direction: str) -> float:
    """Azimuth of a compass point in degrees clockwise from north (north 0, east 90, ...).

    Raises:
        DirectionError: ``direction`` is not in :data:`COMPASS8`.
    """
    return 45.0 * _index(direction)


def vector_of(direction: str) -> tuple[float, float]:
    """Unit vector ``(east, north)`` of a compass point, e.g. ``northeast -> (0.7071, 0.7071)``.

    Raises:
        DirectionError: ``direction`` is not in :data:`COMPASS8`.
    """
    a = math.radians(azimuth_of(direction))
    return (_clean(math.sin(a)), _clean(math.cos(a)))


def _clean(x: float) -> float:
    return 0.0 if abs(x) < 1e-12 else x


def nearest_point(east: float, north: float) -> str:
    """The compass point nearest to the direction of vector ``(east, north)``.

    Sectors are 45 degrees wide and centred on each point; an azimuth exactly on a sector
    boundary (e.g. 22.5 degrees) goes to the clockwise neighbour.

    Raises:
        DirectionError: the zero vector (no direction).
    """
    if math.hypot(east, north) < 1e-12:
        raise DirectionError("the zero vector has no compass direction")
    az = math.degrees(math.atan2(east, north)) % 360.0
    return COMPASS8[int(math.floor((az + 22.5) / 45.0)) % 8]


def rotate(direction: str, eighths: int) -> str:
    """Rotate a compass point clockwise by ``eighths`` * 45 degrees (negative: anticlockwise)."""
    return COMPASS8[(_index(direction) + eighths) % 8]


def opposite(direction: str) -> str:
    """The compass point 180 degrees away (north <-> south, northeast <-> southwest, ...)."""
    return rotate(direction, 4)


def turn_around(heading: str) -> str:
    """New heading after turning around to go back the way one came: the opposite point."""
    return opposite(heading)


def perpendiculars(direction: str) -> tuple[str, str]:
    """The two compass points at right angles to ``direction``: (clockwise, anticlockwise).

    These are the two sides an agent heading ``direction`` can be on while moving along an
    edge (seed 002 §3: once the heading is fixed "there are only two possibilities" for the
    side).
    """
    return rotate(direction, 2), rotate(direction, -2)


def is_perpendicular(a: str, b: str) -> bool:
    """True if compass points ``a`` and ``b`` are at right angles (dot product of vectors 0)."""
    (ax, ay), (bx, by) = vector_of(a), vector_of(b)
    return abs(ax * bx + ay * by) < 1e-9


def road_axis(runs_from: str, runs_to: str) -> tuple[float, float]:
    """Unit vector ``(east, north)`` of a road that runs from ``runs_from`` to ``runs_to``.

    Raises:
        DirectionError: the two points are not opposite (a straight road runs between
            opposite points, e.g. east to west).
    """
    if opposite(runs_from) != runs_to:
        raise DirectionError(f"a straight road cannot run from {runs_from} to {runs_to}: "
                             "the two ends must be opposite compass points")
    (fx, fy), (tx, ty) = vector_of(runs_from), vector_of(runs_to)
    return ((tx - fx) / 2.0, (ty - fy) / 2.0)


#: Where a target lies relative to the edge the agent is on: ``"inside"`` targets (a lake the
#: agent walks beside, a park's centre, a road beside the agent) are across the edge from the
#: agent's side; ``"outside"`` targets (the sea around an island the agent is on) are beyond it.
TARGET_PLACES = ("inside", "outside")


def direction_of_feature(heading: str, side: str, target: str) -> str:
    """Compass direction from an agent to a target, for an agent moving along an edge.

    Args:
        heading: the agent's heading; must be perpendicular to ``side`` (moving *along* the
            edge). Turning around (:func:`turn_around`) changes only this argument.
        side: which side of the feature the agent is on (``"east"`` for "the east shore").
        target: ``"inside"`` (the feature itself, or its centre: a lake beside the agent, a
            bandstand in the middle of the park, the road the agent walks beside) or
            ``"outside"`` (what surrounds the feature: the sea around an island).

    Returns:
        The direction, computed from vectors: the agent stands at ``side``'s unit vector from
        the feature's centre line, so the inside lies along ``-side`` and the outside along
        ``+side``; the heading does not enter the result, which is why turning around leaves
        the answer unchanged.

    Raises:
        DirectionError: unknown names, or a heading not perpendicular to ``side``.
    """
    if target not in TARGET_PLACES:
        raise DirectionError(f"target must be one of {TARGET_PLACES}, got {target!r}")
    if not is_perpendicular(heading, side):
        raise DirectionError(f"heading {heading} does not run along the {side} side of a feature "
                             "(heading and side must be perpendicular)")
    sx, sy = vector_of(side)
    sign = -1.0 if target == "inside" else 1.0
    return nearest_point(sign * sx, sign * sy)
