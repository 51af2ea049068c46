"""The 15 answer formats of the geospatial QA benchmark (MultiGlobeQA, seed 003, §4).

Seed 003 §4 scores every item with two type-specific functions: exact match
``EM = E_t(a_hat, a*) in {0, 1}`` ("exact equality for categorical and grid-cell answers,
geodesic or relative tolerance tau for continuous answers, exact set equality for
enumerations, and IoU >= 0.5 for polygons") and normalised error ``NE = e_t in [0, 1]``
(``min(1, d / tau)`` for continuous types, ``1 - Jaccard`` for sets, ``1 - IoU`` for
polygons; 1 for refusals and format errors).  The paper's own tolerance table (its Table 12)
is not in our copy, so each tolerance below is our choice, with its reason in the class
docstring and in docs/answer-formats.md.  For continuous formats EM and NE share ``tau``:
``EM = 1`` iff ``d <= tau`` and ``NE = min(1, d / tau)``, so ``NE < 1`` only for answers within
tolerance (the paper: "NE = 1 an error beyond tolerance").

Every format here is a :class:`GeoFormat`: ``parse(text, spec)`` reads answer text (after the
``geoqa`` rubric), ``normalise(value, spec)`` gives the canonical value, ``check(gold, spec)``
validates a gold answer, and ``em_ne(value, gold, spec) -> (EM, NE)`` scores.  ``spec`` is the
task's ``meta["answer_spec"]`` (tolerance overrides, accepted aliases, compass points).

This module is level 0: it imports only the standard library and (lazily, inside functions)
shapely and pyproj; :mod:`stsim.answers` imports it and registers the formats.
"""
from __future__ import annotations

import math
import re
import unicodedata
from datetime import datetime
from functools import lru_cache
from typing import Any

# thousands separators: "1,234" is 1234; a group after a leading 0 ("0,338", a decimal comma)
# is not one, so it reads as two numbers (a format failure for one-number formats, like "6579,47")
_NUM = re.compile(r"[-+]?(?:[1-9]\d{0,2}(?:,\d{3})+|\d+)(?:\.\d*)?(?:[eE][-+]?\d+)?|[-+]?\.\d+(?:[eE][-+]?\d+)?")


class ParseError(ValueError):
    """Text could not be read in the requested answer format (re-exported by
    :mod:`stsim.answers`, which every format shares)."""


GeoParseError = ParseError


def _numbers(text: str) -> list[float]:
    """Every number written in ``text``, in order.

    Raises:
        ParseError: a number too large for a float (``1e400``, an integer of 400 digits):
            every geo format holds finite numbers only, and a count would otherwise overflow
            converting the infinity to an integer.
    """
    out = []
    for m in _NUM.findall(text):
        v = float(m.replace(",", ""))
        if not math.isfinite(v):
            raise ParseError(f"number too large to be an answer: {m[:20]}{'...' if len(m) > 20 else ''}")
        out.append(v)
    return out


@lru_cache(maxsize=None)
def _number_re(lang: str | None) -> re.Pattern:
    """:func:`stsim.answers_locale.number_pattern` of ``lang``, compiled."""
    from .answers_locale import number_pattern
    return re.compile(number_pattern(lang))


def _read_numbers(tokens: list[str], lang: str | None) -> list[float]:
    """The values of the written numbers ``tokens`` in a reply to a question in ``lang``
    (:func:`stsim.answers_locale.read_number`: the separators of ``lang`` and of English).

    Raises:
        ParseError: a token no convention reads, one two conventions read differently (German
            ``1,500``: 1.5 or 1500), or a number too large for a float.
    """
    from .answers_locale import read_number
    out = []
    for tok in tokens:
        try:
            v = read_number(tok, lang)
        except ValueError as exc:
            raise ParseError(str(exc)) from None
        if not math.isfinite(v):
            raise ParseError(f"number too large to be an answer: {tok[:20]}{'...' if len(tok) > 20 else ''}")
        out.append(v)
    return out


#: Latin letters that Unicode does not decompose into a base letter and an accent, spelled in
#: ASCII as people (and GeoNames' ASCII names) write them: without this "Łódź" folded to "odz"
#: (and "Lodz" did not match it), "Ørsta" to "rsta", "Straße" to "stra e".
_LATIN_ASCII = str.maketrans({"ł": "l", "ø": "o", "đ": "d", "ð": "d", "þ": "th", "ß": "ss", "æ": "ae",
                              "œ": "oe", "ı": "i", "ħ": "h", "ŧ": "t", "ŀ": "l", "ŋ": "n", "ſ": "s"})


def fold(text: str) -> str:
    """Case-, accent- and punctuation-insensitive form of a name ("São Paulo" -> "sao paulo",
    "Łódź" -> "lodz", "Trinidad & Tobago" -> "trinidad and tobago"); letters of other scripts
    are dropped (the gold names are GeoNames' and Natural Earth's Latin names)."""
    t = unicodedata.normalize("NFKD", str(text).replace("&", " and "))
    t = "".join(c for c in t if not unicodedata.combining(c)).lower().translate(_LATIN_ASCII)
    return re.sub(r"[^0-9a-z]+", " ", t).strip()


def _strip(text: str) -> str:
    return str(text).strip().strip("`*").strip()


class GeoFormat:
    """Base of the geoqa formats (categorical in :mod:`stsim.answers`' sense: scored by
    ``correct`` = EM, with ``partial`` = 1 - NE)."""
    name = "geo"
    numeric = False
    set_valued = False

    def parse(self, text: str, spec: dict[str, Any] | None = None) -> Any:
        raise NotImplementedError

    def normalise(self, value: Any, spec: dict[str, Any] | None = None) -> Any:
        return value

    def check(self, gold: Any, spec: dict[str, Any] | None = None) -> Any:
        """Validate and normalise a gold value; raise ``GeoParseError`` with the reason."""
        try:
            return self.normalise(gold, spec)
        except (TypeError, ValueError, IndexError, KeyError) as exc:
            raise GeoParseError(f"gold {gold!r:.60} does not fit {self.name} ({exc})") from None

    def em_ne(self, value: Any, gold: Any, spec: dict[str, Any] | None = None) -> tuple[int, float]:
        raise NotImplementedError

    def correct(self, value: Any, gold: Any) -> int:
        return self.em_ne(value, gold, None)[0]

    def partial(self, value: Any, gold: Any) -> float | None:
        return 1.0 - self.em_ne(value, gold, None)[1]

    def error(self, value: Any, gold: Any) -> float:
        raise NotImplementedError(f"{self.name} is scored by EM/NE")

    def chance(self, spec: dict[str, Any] | None = None) -> float | None:
        return None


def _tol_ne(d: float, tau: float) -> tuple[int, float]:
    """EM and NE of a continuous error ``d`` against tolerance ``tau`` (seed 003 §4)."""
    if not math.isfinite(d):
        return 0, 1.0
    if tau <= 0:
        return int(d == 0), 0.0 if d == 0 else 1.0
    return int(d <= tau), min(1.0, d / tau)


# ----------------------------------------------------------------------------- scalar kinds
_YES = {"yes", "true", "y", "1"}
_NO = {"no", "false", "n", "0"}


class BooleanFormat(GeoFormat):
    """Yes/no.  EM exact; NE = 1 - EM.  Accepts yes/no/true/false/1/0 (case, punctuation
    ignored)."""
    name = "geo_boolean"

    def parse(self, text, spec=None):
        t = fold(text)
        if t in _YES:
            return True
        if t in _NO:
            return False
        first = t.split(" ")[0] if t else ""
        if first in ("yes", "no"):
            return first == "yes"
        raise GeoParseError(f"expected yes or no, got {text[:60]!r}")

    def normalise(self, value, spec=None):
        if isinstance(value, bool):
            return value
        if value in (0, 1):
            return bool(value)
        raise GeoParseError(f"boolean answer must be true or false, got {value!r}")

    def em_ne(self, value, gold, spec=None):
        em = int(bool(value) == bool(gold))
        return em, 1.0 - em

    def chance(self, spec=None):
        return 0.5


#: A value and another in brackets after it: "1368 km (850 miles)", "0.338 [33.8 %]".
_BRACKETED = re.compile(r"(?P<a>[^()\[\]]+?)\s*[(\[](?P<b>[^()\[\]]+)[)\]]\s*\.?")


def _half_rounding(token: str, value: float) -> float:
    """Half the unit of the last digit of the written number ``token`` (read as ``value``):
    0.05 for ``12.3``, 0.5 for ``1368``; an integer's trailing zeros are taken as rounding,
    keeping two significant digits (5 for ``850``, 50 for ``1000``)."""
    m = re.fullmatch(r"[-+]?(.*?)(?:[eE]([-+]?\d+))?", token)
    body, exp = m.group(1), int(m.group(2) or 0)
    digits = re.sub(r"\D", "", body)
    if math.isclose(float(digits), abs(value) / 10.0 ** exp, rel_tol=1e-12, abs_tol=0.0) or float(digits) == 0:
        n = len(digits.lstrip("0"))
        zeros = len(digits) - len(digits.rstrip("0"))
        unit = 10.0 ** min(zeros, max(n - 2, 0))
    else:
        unit = 10.0 ** -len(re.split(r"\D", body)[-1])
    return 0.5 * unit * 10.0 ** exp


class _Number(GeoFormat):
    """One number, optionally followed by a unit word; thousands separators accepted."""
    rel_tol = 0.0
    abs_tol = 0.0
    units: tuple[str, ...] = ()

    def parse(self, text, spec=None):
        """One number with an optional unit word, in the question's unit.  A value followed by
        its conversion in brackets ("1368 km (850 miles)", "0.338 (33.8 %)") is the first value
        when the bracketed one is the same quantity within the rounding of both as written
        (half a unit of each one's last digit; an integer's trailing zeros count as rounding, to
        two significant digits at least); otherwise it is a format failure naming both.

        Raises:
            ParseError: no number, two numbers (other than a consistent conversion), a number no
                separator convention reads or two read differently, or another word beside it.
        """
        m = _BRACKETED.fullmatch(_strip(text))
        lang = (spec or {}).get("language")
        if m and _number_re(lang).search(m.group("b")):
            a, a_half = self._one(m.group("a"), text, spec)
            b, b_half = self._one(m.group("b"), text, spec)
            if abs(a - b) > a_half + b_half + 1e-9 * max(abs(a), abs(b)):
                raise GeoParseError(f"two different numbers: {m.group('a').strip()!r} is {a:.6g} and the bracketed "
                                    f"{m.group('b').strip()!r} {b:.6g} in the question's unit, more apart than the "
                                    f"rounding of either ({a_half + b_half:.3g}) in {text[:60]!r}")
            return a
        return self._one(text, text, spec)[0]

    def _one(self, part: str, text: str, spec=None) -> tuple[float, float]:
        """``(value in the question's unit, half the rounding unit of the value as written, in
        that unit)`` of ``part``, which holds one number and an optional unit word."""
        t = re.sub(r"(?i)\b(km|m)(?:\^?2|²)", r" sq \1 ", _strip(part)).replace("%", " percent ").replace(
            "\u066a", " percent ")
        lang = (spec or {}).get("language")
        num = _number_re(lang)
        tokens = num.findall(t)
        nums = _read_numbers(tokens, lang)
        if len(nums) != 1:
            raise GeoParseError(f"expected one number, found {len(nums)} in {text[:60]!r}")
        factor = self._unit(num.sub(" ", t), text, spec)
        return nums[0] * factor, _half_rounding(tokens[0], nums[0]) * abs(factor)

    def _unit(self, rest_text: str, text: str, spec=None) -> float:
        """The factor of the words beside the number (``rest_text``): 1 for none, else
        :meth:`unit_factor` of the format's unit word they are -- an English word of
        ``units`` or ``spec["units"]``, or a unit word of a supported language
        (:func:`stsim.answers_locale.unit_words`: "Meilen", "километров", "公里").

        Raises:
            ParseError: any other word, in any script ("850 миль" to a km question was read as
                850 km: the Cyrillic word was dropped).
        """
        from .answers_locale import casefold_words, unit_words
        words = casefold_words(rest_text)
        if not words:
            return 1.0
        allowed = set(self.units) | {fold(u) for u in (spec or {}).get("units", [])}
        rest = fold(words) if words.isascii() else None
        if rest not in allowed:
            rest = unit_words().get(words)
        if rest is None or rest not in allowed:
            raise GeoParseError(f"unexpected text {words!r} beside the number in {text[:60]!r}")
        return self.unit_factor(rest, spec)

    def unit_factor(self, unit: str, spec=None) -> float:
        """What a number followed by the (folded) unit word ``unit`` is multiplied by to be in
        the format's (or the question's) unit; 1 for words that only name what is counted."""
        return 1.0

    def normalise(self, value, spec=None):
        if isinstance(value, bool) or isinstance(value, str):
            raise GeoParseError(f"{self.name} must be a number, got {value!r}")
        v = float(value)
        if not math.isfinite(v):
            raise GeoParseError(f"{self.name} must be finite, got {value!r}")
        return v

    def _non_negative(self, v: float, value: Any, what: str) -> float:
        """``v``, or a ``ParseError`` when it is negative: ``what`` (a distance, an area, a
        ratio of either) cannot be below zero, so a minus sign is no answer, not a value to
        score by its distance from the gold."""
        if v < 0:
            raise GeoParseError(f"{what} cannot be negative, got {value!r:.40}")
        return v

    def tau(self, gold: float, spec=None) -> float:
        spec = spec or {}
        return max(float(spec.get("rel_tol", self.rel_tol)) * abs(float(gold)),
                   float(spec.get("abs_tol", self.abs_tol)))

    def em_ne(self, value, gold, spec=None):
        return _tol_ne(abs(float(value) - float(gold)), self.tau(gold, spec))


class CountFormat(_Number):
    """A non-negative integer count.  EM exact (a count is either right or wrong); NE =
    ``min(1, |a - g| / max(1, 0.1 g))``: off by one on a small count is already a full error,
    on a count of 300 an error of 30 is.  A non-integer answer is a format error."""
    name = "geo_count"
    units = ("cities", "city", "countries", "country", "items", "people", "inhabitants", "cells", "blocks", "places")

    def parse(self, text, spec=None):
        """A whole number; ``12.000`` (three decimals, all zero or not) is refused in every
        language: to a count it reads 12 with '.' as decimal point and 12000 with '.' between
        thousands (German, Spanish, Greek; in those languages :func:`_read_numbers` refuses it
        as ambiguous already)."""
        from .answers_locale import number_symbols
        lang = (spec or {}).get("language")
        if number_symbols(lang)[1] != ".":
            for tok in _number_re(lang).findall(str(text)):
                if re.fullmatch(r"[-+]?[1-9]\d{0,2}\.\d{3}", tok):
                    raise GeoParseError(f"a count written {tok!r} is ambiguous: {float(tok):g} with '.' as decimal "
                                        f"point, {float(tok.replace('.', '')):g} with '.' between thousands; "
                                        "write the count without separators")
        v = super().parse(text, spec)
        if v != int(v):
            raise GeoParseError(f"a count must be a whole number, got {text[:60]!r}")
        return int(v)

    def normalise(self, value, spec=None):
        v = super().normalise(value, spec)
        if v != int(v) or v < 0:
            raise GeoParseError(f"a count must be a non-negative integer, got {value!r}")
        return int(v)

    def em_ne(self, value, gold, spec=None):
        d = abs(int(value) - int(gold))
        return int(d == 0), min(1.0, d / max(1.0, 0.1 * abs(int(gold))))


#: metres per length unit word a geo_distance reply may carry (1 mi = 1609.344 m, international mile)
_METRES = {"km": 1000.0, "kilometre": 1000.0, "kilometres": 1000.0, "kilometer": 1000.0,
           "kilometers": 1000.0, "mi": 1609.344, "mile": 1609.344, "miles": 1609.344,
           "m": 1.0, "metre": 1.0, "metres": 1.0, "meter": 1.0, "meters": 1.0}


class DistanceFormat(_Number):
    """A length in the unit the question names (km, mi or m); a negative one is a format error.  tau = max(1 % of gold,
    ``abs_tol``): 1 % is finer than the spread between spherical and ellipsoidal distances
    (up to ~0.5 %), so a haversine answer passes and a 2 %-off estimate does not; projected
    coordinates (UTM, Web Mercator, metres) set ``abs_tol`` = 10 m and no relative part."""
    name = "geo_distance"
    rel_tol = 0.01
    units = tuple(_METRES)

    def unit_factor(self, unit, spec=None):
        """A reply in another length unit than the question's (``spec["unit"]``: km, miles or
        m) is converted to it: "850 miles" to a question in km is 1367.9 km.  Without a unit
        in ``spec`` (every generated task has one), or beside a word that is no length unit
        (one the task's ``answer_spec["units"]`` allows), the number is taken as written."""
        asked = fold((spec or {}).get("unit") or "")
        return _METRES[unit] / _METRES[asked] if unit in _METRES and asked in _METRES else 1.0

    def normalise(self, value, spec=None):
        return self._non_negative(super().normalise(value, spec), value, "a distance")


class AreaFormat(_Number):
    """An area in km^2 (a negative one is a format error).  tau = 2 % of gold: spherical and
    ellipsoidal polygon areas differ by up to ~0.7 %, equal-area projected areas by less; 2 %
    leaves room for both and for three significant figures."""
    name = "geo_area"
    rel_tol = 0.02
    units = ("sq km", "km", "square kilometres", "square kilometers")

    def normalise(self, value, spec=None):
        return self._non_negative(super().normalise(value, spec), value, "an area")


class RatioFormat(_Number):
    """A dimensionless ratio of two distances, areas or lengths (never negative: a negative
    value is a format error, as for distances and areas).  tau = max(2 % of gold, 0.005): ratios of geodesic quantities
    inherit both operands' tolerance; 0.005 keeps two-decimal answers of small ratios exact."""
    name = "geo_ratio"
    rel_tol = 0.02
    abs_tol = 0.005
    #: '%' words convert; 'times' / 'x' (as '3.5×' already was) answer "how many times larger"
    units = ("percent", "per cent", "times", "x", "times larger", "times as large")

    def unit_factor(self, unit, spec=None):
        """A ratio written as a percentage ("33.8 %", "33.8 percent") is 0.338; beside another
        word the task's ``answer_spec["units"]`` allows, the number is taken as written."""
        return 0.01 if unit in ("percent", "per cent") else 1.0

    def normalise(self, value, spec=None):
        return self._non_negative(super().normalise(value, spec), value, "a ratio")


class AngleFormat(_Number):
    """An azimuth in degrees clockwise from north.  Circular error ``d = min(|a-g| mod 360,
    360 - ...)``; tau = 1 degree (ellipsoidal and spherical initial bearings differ by up to
    ~0.2 degrees at mid latitudes; a 1-degree error is ~17 km across 1000 km)."""
    name = "geo_angle"
    abs_tol = 1.0
    units = ("deg", "degree", "degrees", "deg true", "degrees true")

    def parse(self, text, spec=None):
        return super().parse(str(text).replace("°", " deg "), spec)

    def normalise(self, value, spec=None):
        return super().normalise(value, spec) % 360.0

    def em_ne(self, value, gold, spec=None):
        d = abs(float(value) - float(gold)) % 360.0
        return _tol_ne(min(d, 360.0 - d), float((spec or {}).get("abs_tol", self.abs_tol)))


# ----------------------------------------------------------------------------- geometry kinds
def _latlon(text: str) -> list[float]:
    """Two numbers as [lat, lon]; hemisphere letters (N/S/E/W) set the signs and the order."""
    t = _strip(text).replace("°", " ")
    hemi = re.findall(r"(?<![a-z])([NSEW])(?![a-z])", t.upper().replace("NORTH", "N").replace(
        "SOUTH", "S").replace("EAST", "E").replace("WEST", "W"))
    nums = _numbers(t)
    if len(nums) != 2:
        raise GeoParseError(f"expected a point 'lat, lon' (2 numbers), found {len(nums)} in {text[:60]!r}")
    if len(hemi) == 2:
        vals = {}
        for n, h in zip(nums, hemi):
            key = "lat" if h in "NS" else "lon"
            vals[key] = -abs(n) if h in "SW" else abs(n)
        if set(vals) == {"lat", "lon"}:
            return [vals["lat"], vals["lon"]]
    return nums


class PointFormat(GeoFormat):
    """A point ``[lat, lon]`` in degrees (latitude first, as the questions say; hemisphere
    letters accepted).  d = geodesic distance on WGS84 (pyproj.Geod); tau = 1 km by default
    (``tol_km``): coordinates to two decimals (~1.1 km) are the precision a person quotes,
    and every point question's gold is computed far more precisely than that."""
    name = "geo_point"

    def parse(self, text, spec=None):
        return _latlon(text)

    def normalise(self, value, spec=None):
        lat, lon = (float(v) for v in value)
        if not (math.isfinite(lat) and math.isfinite(lon)) or abs(lat) > 90 or abs(lon) > 540:
            raise GeoParseError(f"not a [lat, lon] point: {value!r}")
        if not -180.0 <= lon <= 180.0:  # wrap only what needs it: no float noise on the rest
            lon = (lon + 180.0) % 360.0 - 180.0
        return [lat, lon]

    def em_ne(self, value, gold, spec=None):
        from pyproj import Geod
        d = Geod(ellps="WGS84").inv(value[1], value[0], gold[1], gold[0])[2] / 1000.0
        return _tol_ne(d, float((spec or {}).get("tol_km", 1.0)))


def _iou(a, b) -> float:
    inter = a.intersection(b).area
    union = a.union(b).area
    return 0.0 if union <= 0 else inter / union


class BBoxFormat(GeoFormat):
    """A bounding box ``[west, south, east, north]`` in degrees.  EM iff IoU >= 0.9 (IoU in
    the lon/lat plane); NE = 1 - IoU.  Stricter than polygons' 0.5 because a box has only four
    numbers, each known exactly; 0.9 still accepts edges rounded to ~0.1 degree on a country."""
    name = "geo_bbox"

    def parse(self, text, spec=None):
        nums = _numbers(_strip(text))
        if len(nums) != 4:
            raise GeoParseError(f"expected a box [west, south, east, north] (4 numbers), found {len(nums)}")
        return nums

    def normalise(self, value, spec=None):
        w, s, e, n = (float(v) for v in value)
        if not (w < e and s < n and abs(s) <= 90 and abs(n) <= 90):
            raise GeoParseError(f"not a box [west, south, east, north] with west < east, south < north: {value!r}")
        return [w, s, e, n]

    def em_ne(self, value, gold, spec=None):
        from shapely.geometry import box
        iou = _iou(box(*value), box(*gold))
        return int(iou >= float((spec or {}).get("min_iou", 0.9))), 1.0 - iou


class PolygonFormat(GeoFormat):
    """A polygon as WKT ``POLYGON ((lon lat, ...))`` (lon/lat order, as WKT has it).  EM iff
    IoU >= 0.5 (seed 003 §4); NE = 1 - IoU (IoU in the lon/lat plane: the questions' polygons
    span a few degrees at most away from the poles).  Invalid (self-intersecting) polygons are
    format errors."""
    name = "geo_polygon"

    def parse(self, text, spec=None):
        import shapely
        t = _strip(text)
        try:
            g = shapely.from_wkt(t)
        except Exception as exc:  # GEOSException
            raise GeoParseError(f"not WKT: {exc}") from None
        if g.geom_type != "Polygon" or not g.is_valid or g.is_empty:
            raise GeoParseError(f"expected a valid POLYGON, got {g.geom_type}{'' if g.is_valid else ' (invalid)'}")
        return g.wkt

    def normalise(self, value, spec=None):
        import shapely
        if not isinstance(value, str):
            raise GeoParseError(f"a polygon is WKT text, got {type(value).__name__}")
        try:
            g = shapely.from_wkt(value)
        except Exception as exc:  # GEOSException
            raise GeoParseError(f"not WKT: {exc}") from None
        if g.geom_type != "Polygon" or not g.is_valid or g.is_empty:
            raise GeoParseError("not a valid polygon")
        return shapely.to_wkt(shapely.normalize(g), rounding_precision=6)

    def em_ne(self, value, gold, spec=None):
        import shapely
        iou = _iou(shapely.from_wkt(value), shapely.from_wkt(gold))
        return int(iou >= 0.5), 1.0 - iou


# ----------------------------------------------------------------------------- names, sets
COMPASS16 = ("N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW")
_WORD = {"north": "N", "south": "S", "east": "E", "west": "W"}


class CompassFormat(GeoFormat):
    """An 8- or 16-point compass direction (``spec["points"]``, default 8) as an abbreviation
    (``NE``, ``NNE``) or words ("north-east", "north-northeast").  EM exact; NE = circular
    distance in compass steps / (points / 2), so the neighbouring point costs 0.25 (8-point)
    or 0.125 (16-point) and the opposite point 1."""
    name = "geo_compass"

    def parse(self, text, spec=None):
        t = fold(text).replace(" by ", " ")
        parts = [p for p in re.split(r"[ ]+", t) if p]
        out = ""
        for p in parts:
            if p.upper() in COMPASS16:
                out += p.upper()
                continue
            m = re.fullmatch(r"(north|south)?(east|west)?", p)
            if not m or not p:
                raise GeoParseError(f"{text[:40]!r} is not a compass direction")
            out += "".join(_WORD[w] for w in m.groups() if w)
        if out not in COMPASS16:
            raise GeoParseError(f"{text[:40]!r} is not a compass direction")
        return self.normalise(out, spec)

    def normalise(self, value, spec=None):
        v = str(value).upper()
        points = int((spec or {}).get("points", 8))
        allowed = COMPASS16 if points == 16 else COMPASS16[::2]
        if v not in allowed:
            raise GeoParseError(f"{value!r} is not one of the {points} compass points")
        return v

    def em_ne(self, value, gold, spec=None):
        points = int((spec or {}).get("points", 8))
        step = 16 // points
        d = abs(COMPASS16.index(value) - COMPASS16.index(gold)) // step
        d = min(d, points - d)
        return int(d == 0), d / (points / 2)

    def chance(self, spec=None):
        return 1.0 / int((spec or {}).get("points", 8))


def _accepted(gold: str, spec: dict[str, Any] | None) -> set[str]:
    aliases = (spec or {}).get("aliases") or {}
    names = [gold] + list(aliases.get(gold, []) if isinstance(aliases, dict) else aliases)
    return {fold(n) for n in names if fold(n)}


_PUNCT_ENDS = ".,;:!?\"'()[]{}"


def _spans(text: str) -> list[tuple[str, int, int]]:
    """The whitespace-separated words of ``text`` as ``(word, start, end)``: the word lower-case,
    accents dropped and punctuation at its ends stripped (``"Herzegovina."`` -> ``"herzegovina"``,
    ``"&"`` -> ``"and"``; :func:`~stsim.answers_locale.spaced_words`); words of punctuation
    only are left out."""
    from .answers_locale import spaced_words
    out = []
    for m in re.finditer(r"\S+", text):
        tok = m.group()
        if tok == "&":
            w = "and"
        elif tok.isascii():   # casefold of ASCII is lower(); nothing to decompose
            w = tok.lower()
        else:
            w = " ".join(spaced_words(tok.replace("&", "\x00"))).replace("\x00", "&")
        w = w.strip(_PUNCT_ENDS)
        if w:
            out.append((w, m.start(), m.end()))
    return out


def _tokens(text: str) -> list[str]:
    """The words of :func:`_spans`."""
    return [w for w, _, _ in _spans(text)]


def _inner_list_words(words: list[str], lang: str | None) -> list[int]:
    """Indices of the "and" / "or" words (:func:`~stsim.answers_locale.list_words`) that stand
    between two words of ``words`` (not first, not last: "Or Yehuda" names one place)."""
    from .answers_locale import list_words
    joins = set().union(*list_words(lang))
    return [i for i in range(1, len(words) - 1) if words[i] in joins]


#: Package file of the entity names with a list word inside (see :func:`conjoined_in_store`).
CONJOINED_NAMES = "data/geoqa_conjoined_names.txt"


def conjoined_in_store(table) -> list[str]:
    """The names, admin-1 names, country names and aliases of the entity store ``table`` (a
    :class:`stsim.geoqa.store.EntityStore` ``table``) in which an "and" / "or" word of some
    language of :data:`~stsim.answers_locale.LIST_WORDS` stands between two words ("Bosnia and
    Herzegovina", "Treinta y Tres"), sorted case-insensitively: the body of
    :data:`CONJOINED_NAMES` (a test checks that the file holds them all)."""
    from .answers_locale import LIST_WORDS
    names = set()
    for col in ("name", "admin1_name", "country_name"):
        names |= {str(n).strip() for n in table[col] if isinstance(n, str) and n.strip()}
    names |= {a.strip() for v in table["aliases"] for a in str(v).split("|") if a.strip()}
    return sorted({n for n in names if any(_inner_list_words(_tokens(n), lang) for lang in LIST_WORDS)},
                  key=lambda n: (n.casefold(), n))


@lru_cache(maxsize=1)
def _conjoined_names() -> dict[str, list[tuple[str, ...]]]:
    """The names of :data:`CONJOINED_NAMES`, each as :func:`_tokens`, by their first word."""
    from importlib import resources
    text = resources.files("stsim").joinpath(CONJOINED_NAMES).read_text(encoding="utf-8")
    out: dict[str, list[tuple[str, ...]]] = {}
    for line in text.splitlines():
        words = tuple(_tokens(line)) if line.strip() and not line.startswith("#") else ()
        if len(words) >= 3:
            out.setdefault(words[0], []).append(words)
    return out


def _joins(text: str, spec: dict[str, Any] | None) -> tuple[list[str], list[str]]:
    """``(the names, the joining words)`` of ``text`` split at each "and" / "or" word (English
    or ``spec["language"]``'s) that stands inside no known name (:data:`CONJOINED_NAMES`, the
    names of ``spec["aliases"]``); ``([text], [])`` when there is none.  The names keep their
    original spelling."""
    spans = _spans(text)
    words = [w for w, _, _ in spans]
    at = _inner_list_words(words, (spec or {}).get("language"))
    if not at:
        return [text.strip()], []
    known = _conjoined_names()
    aliases = (spec or {}).get("aliases")
    if isinstance(aliases, dict):
        known = {k: list(v) for k, v in known.items()}
        for name in (tuple(_tokens(n)) for k, v in aliases.items() for n in [k, *(v or [])] if isinstance(n, str)):
            if len(name) >= 3:
                known.setdefault(name[0], []).append(name)
    inside: set[int] = set()
    for i, w in enumerate(words):
        for name in known.get(w, ()):
            if tuple(words[i:i + len(name)]) == name:
                inside.update(range(i + 1, i + len(name) - 1))
    cut = [i for i in at if i not in inside]
    if not cut:
        return [text.strip()], []
    starts = [0] + [spans[i][2] for i in cut]
    ends = [spans[i][1] for i in cut] + [len(text)]
    names = [text[a:b].strip().strip(",").strip() for a, b in zip(starts, ends)]
    return [n for n in names if fold(n)], [words[i] for i in cut]


def joined_names(text: str, spec: dict[str, Any] | None = None) -> list[str] | None:
    """The names ``text`` joins with "and" / "or" (in English or the question's language,
    ``spec["language"]``), or ``None`` when it is one name: every such word in it stands inside
    a name that has one (:data:`CONJOINED_NAMES`, or a name of ``spec["aliases"]``): "Zenica,
    Bosnia and Herzegovina" is one place, "Latvia and Russia" two."""
    names, words = _joins(text, spec)
    return names if words else None


def _accepted_any(spec: dict[str, Any] | None) -> set[str]:
    """Every folded name of ``spec["aliases"]`` (keys and their aliases)."""
    aliases = (spec or {}).get("aliases")
    if not isinstance(aliases, dict):
        return set()
    return {fold(n) for k, v in aliases.items() for n in [k, *(v or [])] if isinstance(n, str)}


class EntityFormat(GeoFormat):
    """One entity name.  EM iff the folded answer (case, accents, punctuation ignored) equals
    the folded gold or one of its aliases (``spec["aliases"] = {gold: [alias, ...]}``); NE =
    1 - EM (a wrong entity is wrong, however close its name)."""
    name = "geo_entity"

    def parse(self, text, spec=None):
        t = _strip(text).strip("'\".")
        if not fold(t):
            if t.strip():  # '东京', 'Москва': not empty, but no letter the gold names are written in
                raise GeoParseError(f"{t[:40]!r} has no Latin letter or digit: names are matched against "
                                    "the English (GeoNames / Natural Earth) names and their aliases")
            raise GeoParseError("empty entity name")
        parts = [p for p in re.split(r"[;|\n]+", t) if fold(p)]
        if len(parts) > 1 and fold(t) not in _accepted_any(spec):
            raise GeoParseError(f"the answer names {len(parts)} entities ({'; '.join(p.strip() for p in parts)[:80]}) "
                                "where one is asked")
        parts, joins = _joins(t, spec)
        if joins:
            raise GeoParseError(f"the answer joins {len(parts)} names ({'; '.join(parts)[:80]}) with {joins[0]!r} "
                                "where one entity is asked")
        return t

    def normalise(self, value, spec=None):
        if not isinstance(value, str) or not fold(value):
            raise GeoParseError(f"an entity name must be a non-empty string, got {value!r}")
        return value.strip()

    def em_ne(self, value, gold, spec=None):
        em = int(fold(value) in _accepted(gold, spec))
        return em, 1.0 - em


def _split_list(text: str, spec: dict[str, Any] | None = None) -> list[str]:
    """Names separated by semicolons, new lines or ``|``; by commas only when none of those
    occurs (display names such as ``Munich, Germany`` contain commas), and then two neighbours
    ``A, B`` that together are a name the task knows (a key or alias of ``spec["aliases"]``)
    stay one name: ``Answer: Ilula, Tanzania`` is one place, not two.  Within each, "and"
    (English or the question's language) separates names too, except inside a name that has it
    (:func:`joined_names`): "Oslo, Bergen and Trondheim" is three names; "or" offers
    alternatives, no list.

    Raises:
        ParseError: names joined by "or" ("Oslo or Bergen")."""
    t = _strip(text).strip("[]{}")
    comma = not re.search(r"[;\n|]", t)
    parts = [p.strip().strip("'\"").strip() for p in re.split(r"," if comma else r"[;\n|]+", t)]
    parts = [re.sub(r"^\s*(?:\d+[.)]|[-*\u2022])\s*", "", p) for p in parts if p.strip().strip("'\"")]
    aliases = (spec or {}).get("aliases")
    if comma and isinstance(aliases, dict) and aliases:
        known = {fold(k) for k in aliases} | {fold(a) for v in aliases.values() for a in (v or [])}
        merged: list[str] = []
        i = 0
        while i < len(parts):
            if i + 1 < len(parts) and fold(f"{parts[i]}, {parts[i + 1]}") in known:
                merged.append(f"{parts[i]}, {parts[i + 1]}")
                i += 2
            else:
                merged.append(parts[i])
                i += 1
        parts = merged
    from .answers_locale import list_words
    ands, ors = list_words((spec or {}).get("language"))
    out: list[str] = []
    for p in parts:
        words = p.split(None, 1)
        if comma and len(words) == 2 and words[0].casefold() in ands:  # "Oslo, Bergen, and Trondheim"
            p = words[1]
        names, joins = _joins(p, spec)
        alternatives = [w for w in joins if w in ors]
        if alternatives:
            raise GeoParseError(f"the answer offers alternatives ({p[:60]!r} joined by {alternatives[0]!r}) "
                                "where a list of names is asked")
        out += names
    return out


def _canon(items: list[str], golds: list[str], spec) -> list[str]:
    """Map each answered name to the gold name it denotes (by name or alias), else its fold."""
    lookup: dict[str, str] = {}
    for g in golds:
        for a in _accepted(g, spec):
            lookup.setdefault(a, g)
    return [lookup.get(fold(x), fold(x)) for x in items]


class EntitySetFormat(GeoFormat):
    """A set of entity names (separated by ``;``, new lines or commas; order ignored).  Names
    are matched with aliases as in :class:`EntityFormat`.  EM iff the sets are equal; NE = 1 -
    Jaccard (seed 003 §4).  The empty set is written ``none``."""
    name = "geo_entity_set"
    set_valued = True

    def parse(self, text, spec=None):
        if fold(text) in ("none", "empty", "no cities", "nothing"):
            return []
        items = _split_list(text, spec)
        if not items:
            raise GeoParseError("no names in the answer")
        return items

    def normalise(self, value, spec=None):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise GeoParseError(f"an entity set must be a list of names, got {value!r:.60}")
        return sorted({v.strip() for v in value})

    def em_ne(self, value, gold, spec=None):
        a, g = set(_canon(list(value), list(gold), spec)), set(gold)
        if not a and not g:
            return 1, 0.0
        j = len(a & g) / len(a | g)
        return int(a == g), 1.0 - j


class RankedListFormat(GeoFormat):
    """An ordered list of entity names (nearest first, largest first, ... as asked).  EM iff
    the same names in the same order.  NE = 1 - J (1 - K): J the Jaccard index of the two
    sets, K the normalised Kendall tau distance (discordant pairs / pairs) over the names both
    contain (0 with fewer than two): the right names in a wrong order cost up to 1, missing
    names cost as for sets."""
    name = "geo_ranked"

    def parse(self, text, spec=None):
        items = _split_list(text, spec)
        if not items:
            raise GeoParseError("no names in the answer")
        return items

    def normalise(self, value, spec=None):
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value) or not value:
            raise GeoParseError(f"a ranked list must be a non-empty list of names, got {value!r:.60}")
        return [v.strip() for v in value]

    def em_ne(self, value, gold, spec=None):
        a = _canon(list(value), list(gold), spec)
        g = list(gold)
        if a == g:
            return 1, 0.0
        sa, sg = set(a), set(g)
        j = len(sa & sg) / len(sa | sg)
        common = [x for x in g if x in sa]
        pos = {x: a.index(x) for x in common}
        pairs = [(common[i], common[k]) for i in range(len(common)) for k in range(i + 1, len(common))]
        kt = sum(pos[x] > pos[y] for x, y in pairs) / len(pairs) if pairs else 0.0
        return 0, 1.0 - j * (1.0 - kt)


class CellFormat(GeoFormat):
    """A grid cell id: geohash, H3 index (hex) or S2 token.  EM iff equal ignoring case and a
    ``0x`` prefix; NE = 1 - EM: a neighbouring cell is a different cell (the paper's grid
    answers are exact)."""
    name = "geo_cell"

    def parse(self, text, spec=None):
        t = _strip(text).strip("'\"[]() ").lower()
        t = t[2:] if t.startswith("0x") else t
        if not re.fullmatch(r"[0-9a-z]+", t):
            raise GeoParseError(f"{text[:40]!r} is not a cell id")
        return t

    def normalise(self, value, spec=None):
        if not isinstance(value, str):   # a typed 123: a number has lost a cell id's leading zeros
            raise GeoParseError(f"a cell id is a string, got {type(value).__name__} {value!r:.40}")
        v = value.strip().lower()
        if not re.fullmatch(r"[0-9a-z]+", v):
            raise GeoParseError(f"{value!r} is not a cell id")
        return v

    def em_ne(self, value, gold, spec=None):
        em = int(str(value).lower() == str(gold).lower())
        return em, 1.0 - em


class DateTimeFormat(GeoFormat):
    """A local date and time ``YYYY-MM-DD HH:MM`` (``T`` or a space between; seconds
    dropped).  d = |difference| in minutes; EM iff d = 0 (the gold is exact to the minute,
    ``spec["abs_tol_min"]`` may allow more); NE = min(1, d / 60): a wrong time zone (usually a whole hour) is a full error,
    a few minutes off is partial."""
    name = "geo_datetime"

    _STAMP = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T ]+(\d{1,2}):(\d{2})(?::\d{2}(?:\.\d+)?)?"
                        r"(?:\s*([ap])\.?\s?m\b\.?)?", re.IGNORECASE)

    def parse(self, text, spec=None):
        """The one date-time of ``text``; a 12-hour clock time with ``AM`` / ``PM`` (``a.m.``)
        is converted (12 AM is 00, 12 PM is 12).  The same minute written twice ("2025-09-24
        11:53 PM (2025-09-24 23:53)") is one date-time.

        Raises:
            ParseError: no date-time, two different ones, or an hour that AM / PM cannot follow.
        """
        found = self._STAMP.findall(_strip(text))
        if not found:
            raise GeoParseError(f"expected a date-time YYYY-MM-DD HH:MM, got {text[:40]!r}")
        read = []
        for y, mo, d, h, mi, ampm in found:
            hour = int(h)
            if ampm:
                if not 1 <= hour <= 12:
                    raise GeoParseError(f"hour {hour} on a 12-hour clock ({ampm.upper()}M) in {text[:40]!r}")
                hour = hour % 12 + (12 if ampm.lower() == "p" else 0)
            read.append(self.normalise(f"{y}-{mo}-{d}T{hour:02d}:{mi}", spec))
        if len(set(read)) > 1:
            raise GeoParseError(f"expected one date-time, found {len(set(read))} different ones "
                                f"({', '.join(dict.fromkeys(read))}) in {text[:60]!r}")
        return read[0]

    def normalise(self, value, spec=None):
        try:
            dt = datetime.fromisoformat(str(value).replace(" ", "T"))
        except ValueError:
            raise GeoParseError(f"not a date-time: {value!r}") from None
        return dt.strftime("%Y-%m-%dT%H:%M")

    def em_ne(self, value, gold, spec=None):
        d = abs((datetime.fromisoformat(value) - datetime.fromisoformat(gold)).total_seconds()) / 60.0
        em = int(d <= float((spec or {}).get("abs_tol_min", 0.0)))
        return em, min(1.0, d / 60.0)


def answer_text(format_name: str, value: Any) -> str:
    """A gold value written as a model following the geoqa instructions would write it (yes/no,
    ``lat, lon``, ``[w, s, e, n]``, WKT, names separated by semicolons, ``YYYY-MM-DD HH:MM``);
    every format reads it back to an exact match."""
    if format_name == "geo_boolean":
        return "yes" if value else "no"
    if format_name in ("geo_point", "geo_bbox"):
        return ", ".join(repr(float(v)) for v in value)
    if format_name == "geo_entity_set":
        return "; ".join(value) if value else "none"
    if format_name == "geo_ranked":
        return "; ".join(value)
    if format_name == "geo_datetime":
        return str(value).replace("T", " ")
    if format_name in ("geo_distance", "geo_area", "geo_ratio", "geo_angle"):
        return repr(float(value))
    return str(value)


GEO_FORMATS: tuple[GeoFormat, ...] = (
    BooleanFormat(), CountFormat(), DistanceFormat(), AreaFormat(), RatioFormat(), AngleFormat(),
    PointFormat(), BBoxFormat(), PolygonFormat(), CompassFormat(), EntityFormat(),
    EntitySetFormat(), RankedListFormat(), CellFormat(), DateTimeFormat())

_MARK = re.compile(r"(?:^|\n)\s*\**\s*(?:final\s+)?answer\s*\**\s*[:=]\s*\**", re.IGNORECASE)


#: The geoqa formats whose JSON ``answer`` is a string (``stsim.geoqa.schema.value_schema``), or
#: a list of strings for the set formats: a JSON number or boolean there is no such value.
_JSON_STRING_FORMATS = ("geo_cell", "geo_entity", "geo_polygon", "geo_compass", "geo_datetime")
_JSON_NAME_LIST_FORMATS = ("geo_entity_set", "geo_ranked")


def structured_answer_problem(format_name: str, text: str) -> str | None:
    """Why the ``answer`` of a structured reply ``{"answer": ..., "note": ...}`` has the wrong
    JSON type for ``format_name`` (its schema, :mod:`stsim.geoqa.schema`), else ``None`` (also
    for a reply that is no such object).  A JSON number or boolean where a string is asked
    (a grid cell, a name, a compass point, a date-time, WKT) or inside a list of names is
    refused: ``{"answer": 123}`` is no cell id (a geohash ``0123`` written as a number has lost
    its ``0``, an H3 or S2 id its case and leading zeros) and ``{"answer": true}`` no name.  A
    boolean where a number is asked (``true`` for a count) is refused likewise."""
    import json
    t = text.strip()
    if not t.startswith("{"):
        return None
    try:
        obj = json.loads(t)
    except ValueError:
        return None
    if not isinstance(obj, dict) or "answer" not in obj or obj["answer"] is None:
        return None
    v = obj["answer"]

    def kind(x) -> str:
        return "boolean" if isinstance(x, bool) else "number" if isinstance(x, (int, float)) else type(x).__name__

    if format_name in _JSON_STRING_FORMATS and isinstance(v, (bool, int, float)):
        return (f"a {format_name} answer is a JSON string, got the JSON {kind(v)} {json.dumps(v)}"
                + (" (a cell id written as a number loses its leading zeros and letters)"
                   if format_name == "geo_cell" else ""))
    if format_name in _JSON_NAME_LIST_FORMATS and isinstance(v, list):
        bad = [x for x in v if not isinstance(x, str)]
        if bad:
            return (f"a {format_name} answer is a list of names (JSON strings), got the JSON {kind(bad[0])} "
                    f"{json.dumps(bad[0])}")
    if format_name not in ("geo_boolean",) and isinstance(v, bool):
        return f"a {format_name} answer cannot be the JSON boolean {json.dumps(v)}"
    return None


def structured_numbers(text: str) -> bool:
    """Whether ``text`` is a structured reply whose ``answer`` is a JSON number or a list of
    them: the rubric writes them with Python's ``str`` (``.`` decimal point, no grouping), so
    they are read with English separators whatever the question's language (``12.125`` from
    JSON is 12.125, not German 12125)."""
    import json
    t = text.strip()
    if not t.startswith("{"):
        return False
    try:
        obj = json.loads(t)
    except ValueError:
        return False
    v = obj.get("answer") if isinstance(obj, dict) else None
    items = v if isinstance(v, list) else [v]
    return bool(items) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in items)


def geoqa_rubric(text: str) -> str | None:
    """The answer in a reply to a geoqa question: the text after the last ``Answer:`` marker
    (markdown emphasis allowed), else the whole reply when it is one line; a JSON object
    ``{"answer": ...}`` (seed 003 constrains outputs to a JSON schema) is read too.
    ``None`` when there is nothing to read."""
    import json
    t = text.strip()
    if t.startswith("{"):
        try:
            obj = json.loads(t)
            if isinstance(obj, dict) and "answer" in obj:
                v = obj["answer"]
                if isinstance(v, list) and not v:
                    return "none"  # the schema's empty set (geo.schema: "empty for none")
                if isinstance(v, dict):
                    return None  # an object is no value of any geoqa format
                if isinstance(v, list) and not all(isinstance(x, (int, float)) for x in v):
                    # names joined by ';' -- also after a single name, so that a list of one
                    # name with a comma ("Ilula, Tanzania") is not split at the comma
                    return "; ".join(map(str, v)) + (";" if len(v) == 1 else "")
                return ", ".join(map(str, v)) if isinstance(v, list) else str(v)
        except ValueError:
            pass
    marks = list(_MARK.finditer(t))
    if marks:
        body = t[marks[-1].end():].strip().strip("*").strip()
        return body or None
    return t if t and "\n" not in t else None
