"""Answer formats: parse model text into a typed value, normalise it, and compare it to gold.

Two layers, kept apart:

1. A **rubric** finds the answer inside a model's reply, as the benchmark's paper prescribes:
   ``stark`` takes the text between ``[RESULTS_START]`` and ``[RESULTS_END]`` (STARK
   Appendix 7.9; the paper's own typo ``RESULT_START``/``RESULT_END``, missing brackets and
   extra spaces are accepted; the last block wins).  Other benchmarks register their own
   rubric in :data:`RUBRICS` (e.g. QSTRBench's ``### Answer:``).
2. An **answer format** (closed set, :data:`FORMATS`) turns that answer text into a typed value
   (:meth:`AnswerFormat.parse`), and measures it against gold (:meth:`AnswerFormat.error` for
   numeric formats, :meth:`AnswerFormat.correct` for categorical ones).

:func:`parse_answer` combines both and never raises on arbitrary text: anything it cannot read
is an :class:`~stsim.records.Answer` with status ``format_failure`` (or ``refusal``).
"""
from __future__ import annotations

import dataclasses
import math
import json
import re
from dataclasses import dataclass
from typing import Any, Callable

from .refusal import REJECTION_FORMAT, looks_like_refusal as _refusal_reader
from .answers_geo import GEO_FORMATS, GeoFormat, ParseError, geoqa_rubric, structured_answer_problem, structured_numbers
from .records import Answer, UnknownName


_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")

# ----------------------------------------------------------------------- typography of numbers
#: Characters a model (or a word processor) writes for a minus sign: U+2212 MINUS SIGN, the
#: dashes U+2010-U+2015, U+FE58/U+FE63 small dash/hyphen-minus, U+FF0D full-width hyphen-minus.
MINUS_SIGNS = "\u2212\u2010\u2011\u2012\u2013\u2014\u2015\ufe58\ufe63\uff0d"
#: Space characters read as a plain space (NBSP, the U+2000-U+200A spaces incl. thin and hair
#: space, narrow NBSP, medium mathematical space, ideographic space) and invisible ones dropped.
_SPACES = "\u00a0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
_INVISIBLE = "\u200b\u200c\u200d\u2060\ufeff"
_TYPO = str.maketrans({**{c: " " for c in _SPACES}, **{c: None for c in _INVISIBLE},
                       **{chr(0xFF10 + i): str(i) for i in range(10)},  # full-width digits
                       "\uff0e": ".", "\uff0c": ",", "\uff3b": "[", "\uff3d": "]", "\uff08": "(",
                       "\uff09": ")", "\uff0b": "+", "\u3001": ",", "\u2024": "."})
_SUPERSCRIPT = str.maketrans("\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079\u207b\u207a",
                             "0123456789-+")
_MANTISSA = r"(?P<m>[-+]?(?:\d+(?:\.\d*)?|\.\d+))"
_TIMES_TEN = re.compile(_MANTISSA + r"\s*(?:\u00d7|\*|x|X|\u00b7|\u22c5)\s*10\s*(?:\^|\*\*)\s*\(?\s*"
                        r"(?P<e>[-+]?\d+)\s*\)?(?![\d.])")
_TIMES_TEN_SUP = re.compile(_MANTISSA + r"\s*(?:\u00d7|\*|x|X|\u00b7|\u22c5)\s*10"
                            r"(?P<e>[\u207b\u207a]?[\u2070\u00b9\u00b2\u00b3\u2074-\u2079]+)")
#: a dash-like character used as a sign: not after a digit, point or letter (that is a range
#: "1.5-2.0", a subtraction or a word hyphen) and directly before a digit or a point-digit
_SIGN_DASH = re.compile(r"(?<![\w.)\]])[-" + MINUS_SIGNS + r"][ \t]*(?=\.?\d)")
#: a dash of any kind between two digits ("1.5-2.0", "4 \u2013 6", "3- 2"): a range or a
#: subtraction, never read as two numbers; only "1.5 -2.0" (space before, none after) is a list
_DIGIT_DASH_DIGIT = re.compile(r"[\d.](?P<pre>[ \t]*)[-" + MINUS_SIGNS + r"](?P<post>[ \t]*)\.?\d")


def ambiguous_dash(text: str) -> str | None:
    """The first dash between two numbers that reads as a range or a subtraction ("1.5-2.0",
    "4 \u2013 6"), or ``None``.  "1.5 -2.0" (a space before the sign, none after) is a list."""
    for m in _DIGIT_DASH_DIGIT.finditer(text.translate(_TYPO)):
        if not (m.group("pre") and not m.group("post")):
            return m.group(0)
    return None


def normalise_typography(text: str) -> str:
    """Spell the numbers of ``text`` in ASCII, so that signs and digits are read as written:
    full-width digits and punctuation to ASCII, NBSP / thin / other spaces to a space, zero-width
    characters dropped, a Unicode minus or dash used as a sign (before a digit, not after a digit
    or a letter) to ``-``, and ``a \u00d7 10^b`` / ``a x 10**b`` / ``a\u00d710\u207b\u00b3`` to ``aeb``.

    >>> normalise_typography("[\u22121.5, \uff16.4\u00a0] 2.0\u00d710^\u22123")
    '[-1.5, 6.4 ] 2.0e-3'
    """
    t = text.translate(_TYPO)
    t = _SIGN_DASH.sub("-", t)
    t = re.sub(r"(?<=\d[eE])[" + MINUS_SIGNS + "]", "-", t)  # 1e\u22125
    t = _TIMES_TEN_SUP.sub(lambda m: f"{m.group('m')}e{m.group('e').translate(_SUPERSCRIPT)}", t)
    return _TIMES_TEN.sub(lambda m: f"{m.group('m')}e{m.group('e')}", t)


def numbers_in(text: str) -> list[float]:
    """All decimal or scientific-notation numbers in ``text``, in order, after
    :func:`normalise_typography` (so ``\u22121.5`` is -1.5, not 1.5).

    >>> numbers_in("[1.5e-1, -2]")
    [0.15, -2.0]
    """
    return [float(m) for m in _NUMBER.findall(normalise_typography(text))]


# -------------------------------------------------------------------------------------- rubrics
# A marker is [RESULTS_START] / [RESULTS_END] in brackets (any case; RESULT_ and a space for the
# underscore accepted), or the bare token RESULTS_START / RESULT_END written with its underscore
# in capitals.  Prose that merely contains the words ("once the results start to agree") is not
# a marker.  The body is what lies between an END and the START closest before it, so a
# repeated START ("[RESULTS_START] ... [RESULTS_START] 1, 2 [RESULTS_END]") keeps the inner one.
_MARK = r"(?:\[\s*(?i:RESULTS?[ _]?{w})\s*\]|(?<![A-Za-z_])RESULTS?_{w}(?![A-Za-z_]))"
_START, _END = _MARK.format(w="START"), _MARK.format(w="END")
_STARK_BLOCK = re.compile(_START + r"(?P<body>(?:(?!" + _START + r").)*?)" + _END, re.DOTALL)
def stark_rubric(text: str) -> str | None:
    """Return the body of the last ``[RESULTS_START] ... [RESULTS_END]`` block, or ``None``.

    Source: STARK Appendix 7.9 (every prompt asks for this block; Table 18 and Tables 19-20
    print ``RESULT_START``/``RESULT_END``, which is accepted too).  Markers are bracketed (any
    case) or bare capitals with the underscore (``RESULTS_START``); words in prose ("the
    results start to agree") are not markers.  When a reply holds several blocks the **last**
    wins: models restate the instruction's template or a draft before their final block.
    """
    bodies = [m.group("body") for m in _STARK_BLOCK.finditer(text)]
    return bodies[-1].strip() if bodies else None


_LEGACY_BLOCK = re.compile(r"\[RESULTS_START\](.*?)\[RESULTS_END\]", re.DOTALL)


def stark_legacy_array(text: str) -> Any:
    """STARK's own reply reader, rebuilt from its description (``distance.py``
    ``string_to_np_array``, nesl/STARK_Benchmark; facts only): the **first** block with the
    exact markers ``[RESULTS_START]`` / ``[RESULTS_END]`` (case and brackets as written);
    white space runs become commas, repeated commas one, ``[,`` / ``,]`` lose the comma; then
    every character but digits, ``.``, ``,``, ``[`` and ``]`` is deleted (so a minus sign is
    dropped: ``-1.5`` reads as 1.5, as in the paper's scoring) and the rest is read as a Python
    literal.

    Returns the number or (nested) list of numbers, or ``None`` where STARK's reader yields
    NaN (no block, an unreadable or empty literal, ragged lists).  Never raises (STARK's reader
    would on, e.g., a literal nested too deeply; here that is ``None`` too).
    """
    import ast

    import numpy as np
    if not isinstance(text, str):
        return None
    m = _LEGACY_BLOCK.search(text)
    if not m:
        return None
    t = re.sub(r"\s+", ",", m.group(1).strip())
    t = re.sub(r",+", ",", t).replace("[,", "[").replace(",]", "]")
    t = re.sub(r"[^\d\.\[\]\,]", "", t)
    try:
        arr = np.array(ast.literal_eval(t), dtype=float)
    except Exception:  # noqa: BLE001 - SyntaxError, ValueError, RecursionError, MemoryError ...
        return None
    if arr.size == 0 or np.isnan(arr).any():
        return None
    return arr.tolist()


# Cardinal directions (seed 002 §3.1).  A compass word is north/south optionally joined (by
# nothing, spaces, hyphens, dashes or underscores) to east/west, or east/west alone, with an
# optional adjectival/adverbial ending ("north-eastern", "westward", "southerly").
_DASHES = "\\-\u2010\u2011\u2012\u2013\u2014_"
_COMPASS_WORD = re.compile(
    r"(?<![a-z])(?:(north|south)(?:[\s" + _DASHES + r"]*(east|west))?|(east|west))"
    r"(?:ern|erly|wards?|bound)?(?![a-z])")
_ABBREVIATIONS = {"n": "north", "ne": "northeast", "e": "east", "se": "southeast", "s": "south",
                  "sw": "southwest", "w": "west", "nw": "northwest"}
COMPASS8 = ("north", "northeast", "east", "southeast", "south", "southwest", "west", "northwest")


@dataclass(frozen=True)
class CardinalReading:
    """How a reply to a cardinal-direction question reads under seed 002 §3.1.

    Attributes:
        direction: the one compass point (:data:`COMPASS8` spelling) the reply is scored on,
            or ``None`` when the reply is *invalid* (names no direction, or several distinct
            ones such as "north-south" or "east to west").
        strict: the reply is exactly one direction and nothing else, once case, punctuation
            and spacing are ignored ("'North East'." and "north-east" both are); an 8-point
            abbreviation alone ("NE") counts too.
        mentions: every compass point named, in order of appearance (repeats kept).
    """
    direction: str | None
    strict: bool
    mentions: tuple[str, ...]

    @property
    def rubric_failure(self) -> bool:
        """The reply did not follow the rubric (anything but a bare direction), whether or not
        a direction could still be scored -- the paper's "did not follow the rubric" count."""
        return not self.strict

    @property
    def note(self) -> str | None:
        """Why the reply is not strict, in words; ``None`` when it is."""
        if self.strict:
            return None
        if self.direction is not None:
            return f"rubric not followed: a longer reply naming one direction ({self.direction})"
        if not self.mentions:
            return "invalid: names no compass direction"
        return f"invalid: names several directions ({', '.join(dict.fromkeys(self.mentions))})"


def read_cardinal(text: Any) -> CardinalReading:
    """Read a reply to a cardinal-direction question; never raises.

    Source: Cohn & Blackwell (seed 002) §3.1: case-insensitive comparison after removing
    punctuation and white space ("'North East'." == "north-east" == "northeast"); a sentence
    such as "The lake is to the west" is scored as west but noted as not following the rubric;
    answers that cannot be read as one cardinal or inter-cardinal direction are invalid (§4,
    Fig. 1 caption).

    >>> read_cardinal("North-East").direction, read_cardinal("North-East").strict
    ('northeast', True)
    >>> read_cardinal("The lake is to the west.").direction
    'west'
    >>> read_cardinal("north-south").direction is None
    True
    """
    if not isinstance(text, str):
        return CardinalReading(None, False, ())
    low = text.lower()
    mentions = tuple((m.group(1) or "") + (m.group(2) or "") or m.group(3)
                     for m in _COMPASS_WORD.finditer(low))
    bare = re.sub(r"[^a-z]", "", low)
    if bare in _ABBREVIATIONS:
        return CardinalReading(_ABBREVIATIONS[bare], True, (_ABBREVIATIONS[bare],))
    if bare in COMPASS8 and len(mentions) == 1:
        return CardinalReading(bare, True, mentions)
    distinct = set(mentions)
    return CardinalReading(mentions[0] if len(distinct) == 1 else None, False, mentions)


def cardinal_rubric(text: str) -> str | None:
    """The one compass point a reply is scored on (seed 002 §3.1), or ``None`` if invalid."""
    return read_cardinal(text).direction


def cardinal_note(text: str) -> str | None:
    """Why a reply did not follow the cardinal-direction rubric, or ``None`` if it did."""
    return read_cardinal(text).note


_QSTR_MARK = re.compile(r"#{2,}\s*\**\s*(?:final\s+)?answer\s*\**\s*:?\s*\**", re.IGNORECASE)
_QSTR_ARGS = re.compile(r"\(\s*[a-z]\s*,\s*[a-z]\s*\)", re.IGNORECASE)
_QSTR_INFIX = re.compile(r"(?<![\w<>=])([a-z])\s+(\S+?)\s+([a-z])(?![\w<>=])")
_QSTR_FILLER = re.compile(r"(?<![\w<>=])(?:and|or)(?![\w<>=])", re.IGNORECASE)


def qstrbench_rubric(text: str) -> str | None:
    """QSTRBench (§3.1, Table 4): the relations after the last ``### Answer:`` marker.

    Accepts markdown emphasis around the marker (``**### Answer:**``), relations written as
    ``EC(x,z)`` or infix ``x EC z``, bullets, braces and the words *and*/*or*; returns the
    relation names separated by ``;`` (``None`` when there is no marker or nothing after it).
    """
    marks = list(_QSTR_MARK.finditer(text))
    if not marks:
        return None
    body = text[marks[-1].end():]
    body = _QSTR_ARGS.sub(" ", body)
    body = _QSTR_INFIX.sub(lambda m: f" {m.group(2)} ", body)
    body = _QSTR_FILLER.sub(" ", body)
    body = re.sub(r"(?m)^\s*(?:[-*\u2022]|\d+[.)])\s+", " ", body)
    body = body.replace("**", " ").replace("`", " ").replace("$", " ")
    names = [t for t in re.split(r"[,;\s{}\[\]]+", body) if t.strip(".'\"")]
    names = [t.strip(".'\"") for t in names]
    return "; ".join(names) if names else None


def _json_abstains(text: str) -> bool:
    """Whether ``text`` is a structured-output object whose ``answer`` is null (an abstention;
    its ``note`` is then read by the refusal reader)."""
    t = text.strip()
    if not t.startswith("{"):
        return False
    try:
        obj = json.loads(t)
    except ValueError:
        return False
    return isinstance(obj, dict) and "answer" in obj and obj["answer"] is None


def _geoqa_rubric(text: str) -> str | None:
    """:func:`~stsim.answers_geo.geoqa_rubric`, except that a whole one-line reply that reads
    as a refusal ("I cannot determine that.") is no answer, so it counts as a refusal; numbers
    are spelled in ASCII (:func:`normalise_typography`: a Unicode minus stays a minus)."""
    body = geoqa_rubric(text)
    if body is not None and body == text.strip() and looks_like_refusal(text):
        return None
    if _json_abstains(text):  # structured output {"answer": null, "note": ...}: no answer
        return None
    return None if body is None else normalise_typography(body)


#: name -> function(reply text) -> answer text or None when the rubric finds no answer.
RUBRICS: dict[str, Callable[[str], str | None]] = {"stark": stark_rubric, "cardinal": cardinal_rubric,
                                                   "qstrbench": qstrbench_rubric, "geoqa": _geoqa_rubric}

#: name -> what a prompt read by that rubric must say, each a literal the prompt must contain
#: (``stsim.answers.prompt_names_rubric``; checked for every family by the contract test).
RUBRIC_PROMPT_MARKERS: dict[str, tuple[str, ...]] = {
    "stark": ("[RESULTS_START]", "[RESULTS_END]"),
    "qstrbench": ("### Answer:",),
    "cardinal": ("north", "north-east", "east", "south-east", "south", "south-west", "west", "north-west"),
    "geoqa": ("Answer:",),
}


def prompt_names_rubric(rubric: str, prompt: str) -> bool:
    """Whether ``prompt`` tells a model how the ``rubric`` will read its reply (the markers of
    :data:`RUBRIC_PROMPT_MARKERS`, e.g. STARK's ``[RESULTS_START] ... [RESULTS_END]``,
    Appendix 7.9; QSTRBench's ``### Answer:``, Table 4; the eight directions of Cohn &
    Blackwell's cardinal prompts).

    Raises:
        KeyError: a rubric with no markers declared.
    """
    return all(m in prompt for m in RUBRIC_PROMPT_MARKERS[rubric])


#: name -> function(reply text) -> a note when the reply bent the rubric, else None; the note is
#: kept in :attr:`Answer.detail` (also for ``ok`` answers) so rubric failures can be counted.
RUBRIC_NOTES: dict[str, Callable[[str], str | None]] = {"cardinal": cardinal_note}


def looks_like_refusal(text: str) -> bool:
    """True if ``text`` reads as an explicit refusal or a premise rejection (used only when no
    answer was found, or when the answer line does not parse); the shared reader
    :func:`stsim.refusal.looks_like_refusal`."""
    return _refusal_reader(text)


# -------------------------------------------------------------------------------------- formats
class AnswerFormat:
    """Base of the closed set of answer formats.

    Subclasses set ``name`` and ``numeric``.  Numeric formats implement :meth:`error` (a
    non-negative distance); categorical ones implement :meth:`correct` (0 or 1).
    """

    name = "base"
    numeric = True

    def parse(self, text: str, spec: dict[str, Any] | None = None) -> Any:
        """Typed value from answer text; raise :class:`ParseError` with the reason."""
        raise NotImplementedError

    def normalise(self, value: Any, spec: dict[str, Any] | None = None) -> Any:
        """Canonical form of a typed value (used on both gold and answers)."""
        return value

    def error(self, value: Any, gold: Any) -> float:
        raise NotImplementedError(f"{self.name} is categorical; use correct()")

    def correct(self, value: Any, gold: Any) -> int:
        raise NotImplementedError(f"{self.name} is numeric; use error()")

    def partial(self, value: Any, gold: Any) -> float | None:
        """Partial credit in [0, 1] for categorical formats that have one (else ``None``)."""
        return None

    def chance(self, spec: dict[str, Any] | None = None) -> float | None:
        """Expected accuracy of a uniform random guess (categorical formats; else ``None``)."""
        return None


def _numbers_only(text: str) -> None:
    """Reject words between the numbers ("between 5 and 6", "4.49 min", "NaN"): STARK's prompts
    ask for numbers only between the markers (Appendix 7.9)."""
    dash = ambiguous_dash(text)
    if dash is not None:
        raise ParseError(f"{dash.strip()!r} in {text[:80]!r} reads as a range or a subtraction, not "
                         "as a list of numbers")
    words = re.findall(r"[^\W\d_]+", _NUMBER.sub(" ", normalise_typography(text)))
    if words:
        raise ParseError(f"text {' '.join(words[:4])!r} among the numbers in {text[:80]!r}; "
                         "the answer must be numbers only")


def _fixed_length_numbers(text: str, n: int, what: str) -> list[float]:
    _numbers_only(text)
    nums = numbers_in(text)
    if len(nums) != n:
        raise ParseError(f"expected {what} ({n} number{'s' if n > 1 else ''}), found {len(nums)} in {text[:80]!r}")
    if not all(math.isfinite(v) for v in nums):
        raise ParseError(f"non-finite number in {text[:80]!r}")
    return nums


class PointFormat(AnswerFormat):
    """``[x, y]`` in the task's plane units; error is the Euclidean distance."""

    name = "point"

    def parse(self, text, spec=None):
        return _fixed_length_numbers(text, 2, "a point [x, y]")

    def normalise(self, value, spec=None):
        return [float(value[0]), float(value[1])]

    def error(self, value, gold):
        return math.hypot(float(value[0]) - float(gold[0]), float(value[1]) - float(gold[1]))


class ScalarFormat(AnswerFormat):
    """A single number; error is the absolute difference."""

    name = "scalar"

    def parse(self, text, spec=None):
        return _fixed_length_numbers(text, 1, "one number")[0]

    def normalise(self, value, spec=None):
        if isinstance(value, (list, tuple)):
            if len(value) != 1:
                raise ParseError(f"expected one number, got {len(value)}")
            value = value[0]
        return float(value)

    def error(self, value, gold):
        return abs(float(value) - float(gold))


class TimeFormat(ScalarFormat):
    """A time in the task's stated unit (seconds or minutes); error is the absolute difference."""

    name = "time"


class VectorFormat(AnswerFormat):
    """A fixed-length numeric vector (length from ``spec['length']``, default: any).

    Error is the Euclidean norm of the difference.  Used e.g. for joint ``[x, y, t]`` event
    estimates, where the norm mixes km and seconds: the task's docs say so.
    """

    name = "vector"

    def parse(self, text, spec=None):
        n = (spec or {}).get("length")
        if n is None:
            _numbers_only(text)
            nums = numbers_in(text)
            if not nums:
                raise ParseError(f"no numbers in {text[:80]!r}")
            return nums
        return _fixed_length_numbers(text, int(n), f"a vector of length {n}")

    def normalise(self, value, spec=None):
        return [float(v) for v in value]

    def error(self, value, gold):
        if len(value) != len(gold):
            raise ValueError(f"vector of length {len(value)} against a gold of length {len(gold)}")
        return math.hypot(*(float(a) - float(b) for a, b in zip(value, gold)))


_YES = {"1", "yes", "true", "y"}
_NO = {"0", "no", "false", "n"}


class BinaryFormat(AnswerFormat):
    """0 or 1 (also yes/no, true/false); scored by exact match."""

    name = "binary"
    numeric = False

    def parse(self, text, spec=None):
        t = re.sub(r"[\[\]\(\)\s.'\"*]", "", text).lower()
        if t in _YES:
            return 1
        if t in _NO:
            return 0
        nums = numbers_in(text)
        if len(nums) == 1 and nums[0] in (0.0, 1.0):
            return int(nums[0])
        raise ParseError(f"expected 0 or 1, got {text[:80]!r}")

    def normalise(self, value, spec=None):
        v = int(value)
        if v not in (0, 1):
            raise ParseError(f"binary answer must be 0 or 1, got {value!r}")
        return v

    def correct(self, value, gold):
        return int(int(value) == int(gold))

    def chance(self, spec=None):
        return 0.5


def _token(s: str) -> str:
    return re.sub(r"[\s_\-]+", "", s.strip().strip("'\"`*.").lower())


class RelationFormat(AnswerFormat):
    """One base relation of a calculus, named as in ``spec['choices']`` (case, spaces,
    hyphens and underscores ignored; ``spec['aliases']`` maps other accepted spellings to a
    choice); scored by exact match."""

    name = "relation"
    numeric = False

    def parse(self, text, spec=None):
        choices = (spec or {}).get("choices")
        t = text.strip().strip("[](){}").strip(";,")
        if choices:
            lookup = {_token(a): c for a, c in (spec or {}).get("aliases", {}).items()}
            lookup.update({_token(c): c for c in choices})
            key = _token(t)
            if key not in lookup:
                raise ParseError(f"{t[:60]!r} is not one of the {len(choices)} relations")
            return lookup[key]
        if not t:
            raise ParseError("empty relation")
        return t

    def correct(self, value, gold):
        return int(_token(str(value)) == _token(str(gold)))

    def chance(self, spec=None):
        choices = (spec or {}).get("choices")
        return 1.0 / len(choices) if choices else None


class RelationSetFormat(AnswerFormat):
    """A set of base relations (comma, semicolon or whitespace separated, optional braces);
    scored by exact set match (precision/recall in ``scoring``)."""

    name = "relation_set"
    numeric = False

    def parse(self, text, spec=None):
        parts = [p for p in re.split(r"[,;\s]+", text.strip().strip("[](){}")) if p.strip("'\"")]
        single = RelationFormat()
        return sorted({single.parse(p, spec) for p in parts})

    def normalise(self, value, spec=None):
        return sorted(set(value))

    def correct(self, value, gold):
        return int({_token(str(v)) for v in value} == {_token(str(g)) for g in gold})

    def chance(self, spec=None):
        """A uniform guess among the non-empty subsets of the choices: 1/(2^n - 1)
        (QSTRBench §4 guess rate for composition and neighbourhood questions)."""
        choices = (spec or {}).get("choices")
        return 1.0 / (2 ** len(choices) - 1) if choices else None


class DirectionFormat(AnswerFormat):
    """One of the eight compass points (``north`` ... ``northwest``, or N/NE/...)."""

    name = "direction"
    numeric = False
    _abbrev = {"n": "north", "ne": "northeast", "e": "east", "se": "southeast", "s": "south",
               "sw": "southwest", "w": "west", "nw": "northwest"}

    def parse(self, text, spec=None):
        key = re.sub(r"[^a-z]", "", text.lower())
        key = self._abbrev.get(key, key)
        if key not in COMPASS8:
            raise ParseError(f"{text[:60]!r} is not an 8-point compass direction")
        return key

    def correct(self, value, gold):
        return int(value == gold)

    def chance(self, spec=None):
        return 1.0 / len(COMPASS8)


class CellFormat(AnswerFormat):
    """A grid-cell token (geohash, H3 index or S2 token), compared case-insensitively."""

    name = "cell"
    numeric = False

    def parse(self, text, spec=None):
        t = text.strip().strip("[](){}'\"` ").lower()
        if not re.fullmatch(r"[0-9a-z]+", t):
            raise ParseError(f"{text[:60]!r} is not a cell token")
        return t

    def correct(self, value, gold):
        return int(str(value).lower() == str(gold).lower())


class GeometryFormat(AnswerFormat):
    """A WKT geometry; correct when topologically equal to gold (shapely ``equals``)."""

    name = "geometry"
    numeric = False

    def parse(self, text, spec=None):
        import shapely
        try:
            g = shapely.from_wkt(text.strip())
        except Exception as exc:  # shapely raises GEOSException subclasses
            raise ParseError(f"not WKT: {exc}") from None
        return g.wkt

    def correct(self, value, gold):
        import shapely
        return int(bool(shapely.from_wkt(value).equals(shapely.from_wkt(gold))))


class EntitySetFormat(AnswerFormat):
    """A set of entity names (comma or semicolon separated); exact set match."""

    name = "entity_set"
    numeric = False

    def parse(self, text, spec=None):
        parts = [p.strip().strip("'\"") for p in re.split(r"[,;\n]+", text.strip().strip("[]{}"))]
        return sorted({p for p in parts if p})

    def normalise(self, value, spec=None):
        return sorted({str(v).strip() for v in value})

    def correct(self, value, gold):
        return int({v.lower() for v in value} == {g.lower() for g in gold})


class DE9IMFormat(AnswerFormat):
    """A DE-9IM intersection matrix: nine cells from ``F 0 1 2`` (row-major: interior,
    boundary, exterior of the first geometry against those of the second; Clementini et al.
    1993).  Separators, brackets and quotes are ignored.  Correct on exact match; partial
    credit is the fraction of matching cells (per-cell accuracy)."""

    name = "de9im"
    numeric = False

    def parse(self, text, spec=None):
        t = re.sub(r"[\s\[\](){}'\"`,;|/.-]", "", text).upper()
        if not re.fullmatch(r"[F012]{9}", t):
            raise ParseError(f"expected nine cells from F, 0, 1, 2, got {text[:60]!r}")
        return t

    def normalise(self, value, spec=None):
        v = str(value).upper()
        if not re.fullmatch(r"[F012]{9}", v):
            raise ParseError(f"not a DE-9IM matrix: {value!r}")
        return v

    def correct(self, value, gold):
        return int(str(value).upper() == str(gold).upper())

    def partial(self, value, gold):
        v, g = str(value).upper(), str(gold).upper()
        if len(v) != 9 or len(g) != 9:
            return 0.0
        return sum(a == b for a, b in zip(v, g)) / 9.0

    def chance(self, spec=None):
        return 0.25 ** 9


#: The closed set of answer formats, by name.
FORMATS: dict[str, AnswerFormat] = {f.name: f for f in (
    PointFormat(), ScalarFormat(), TimeFormat(), VectorFormat(), BinaryFormat(), RelationFormat(),
    RelationSetFormat(), DirectionFormat(), CellFormat(), GeometryFormat(), EntitySetFormat(),
    DE9IMFormat(), *GEO_FORMATS, REJECTION_FORMAT)}


def get_format(name: str) -> AnswerFormat:
    """The answer format called ``name``; raise ``KeyError`` listing the known names."""
    try:
        return FORMATS[name]
    except KeyError:
        raise UnknownName(f"unknown answer format {name!r}; known: {', '.join(sorted(FORMATS))}") from None


_SET_FORMATS = ("relation_set", "entity_set")


def _bad_json_value(value: Any, top_bool_ok: bool) -> str | None:
    """What in ``value`` (a JSON-decoded gold or typed answer, nested lists allowed) makes it no
    answer of any format: ``true`` / ``false`` where a number or name is expected (anywhere but
    the top of a yes/no answer), a NaN or infinite number (JSON ``NaN``, ``Infinity``, a
    literal too large for a float, e.g. ``1e400``; from the API also a NumPy or ``Decimal``
    one), or an integer too large for a float (a JSON literal of 310 digits).  ``None`` when
    none occurs."""
    if isinstance(value, bool) and top_bool_ok:
        return None
    todo = [value]  # a stack, not recursion: a value may be nested deeper than Python recurses
    while todo:
        v = todo.pop()
        if isinstance(v, bool):
            return f"{json.dumps(v)} (a JSON boolean, not a number or a name)"
        if isinstance(v, (list, tuple)):
            todo.extend(reversed(v))
        elif not isinstance(v, str) and hasattr(v, "__float__"):   # int, float, numpy, Decimal
            try:
                if not math.isfinite(float(v)):
                    return f"the non-finite number {float(v)!r}"
            except OverflowError:
                return "a number too large for a float (above 1.8e308)"
            except (TypeError, ValueError):   # __float__ refused: the format's check says why
                pass
    return None


def check_value(format_name: str, value: Any, spec: dict[str, Any] | None = None, *,
                what: str = "gold") -> Any:
    """Check that a gold answer (``what="gold"``) or a typed answer (``what="answer"``, e.g. a
    ``value`` of an answers file) has the shape of its answer format and return it normalised.

    Numeric formats need numbers (not text, not ``true``/``false``), all finite; set formats a
    list of strings; binary 0/1 (``true``/``false`` too); the other categorical formats a string.
    No format takes ``true``/``false`` inside a list, nor a NaN or infinite number anywhere.

    Raises:
        ParseError: the reason, e.g. ``gold is null`` or ``a point answer must be numbers, got ...``.
        UnknownName: unknown format.
    """
    fmt = get_format(format_name)
    if value is None:
        raise ParseError(f"{what} answer is null" if what == "gold" else f"{what} is null")
    kind = type(value).__name__
    why = _bad_json_value(value, format_name in ("binary", "geo_boolean"))
    if why is not None:
        raise ParseError(f"a {format_name} {what} cannot hold {why} (got {value!r:.60})")
    if isinstance(fmt, GeoFormat):
        if what == "gold":
            return fmt.check(value, spec)
        try:
            return fmt.normalise(value, spec)
        except ParseError:
            raise
        except (TypeError, ValueError, IndexError, KeyError, AttributeError, OverflowError) as exc:
            raise ParseError(f"{what} {value!r:.60} does not fit format {format_name} ({exc})") from None
    if fmt.numeric or format_name == "binary":
        if isinstance(value, str) or (isinstance(value, (list, tuple))   # (booleans: refused above)
                                      and any(isinstance(v, str) or v is None for v in value)):
            raise ParseError(f"a {format_name} {what} must be numbers, got {value!r:.60}")
        if format_name == "point" and (not isinstance(value, (list, tuple)) or len(value) != 2):
            raise ParseError(f"a point {what} needs 2 numbers, got {value!r:.60}")
    elif format_name in _SET_FORMATS:
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise ParseError(f"a {format_name} {what} must be a list of strings, got {kind}")
    elif not isinstance(value, str):
        raise ParseError(f"a {format_name} {what} must be a string, got {kind}")
    try:
        norm = fmt.normalise(value, spec)
    except ParseError:
        raise
    except (TypeError, ValueError, IndexError, KeyError, AttributeError, OverflowError) as exc:
        raise ParseError(f"{what} {value!r:.60} does not fit format {format_name} ({exc})") from None
    length = (spec or {}).get("length")   # every number is finite: _bad_json_value refused the rest
    if format_name == "vector" and length is not None and len(norm) != int(length):
        raise ParseError(f"a vector {what} of length {length} expected, got {len(norm)}")
    return norm


def check_gold(format_name: str, value: Any, spec: dict[str, Any] | None = None) -> Any:
    """:func:`check_value` of a gold answer (the same rules; messages say ``gold``).

    Raises:
        ParseError: the reason, e.g. ``gold is null`` or ``a point gold must be numbers, got str``.
        UnknownName: unknown format.
    """
    return check_value(format_name, value, spec, what="gold")


#: The longest reply text the rubrics, the refusal reader and the lenient reader scan: a longer
#: reply is read from its last ``MAX_REPLY_CHARS`` characters only (the stark, qstrbench and
#: geoqa rubrics take the answer at the end: the last block, the last answer line; for those of
#: :data:`WHOLE_REPLY_RUBRICS` it is a format failure), and its answer's ``detail`` says so.  A
#: million characters is about 250,000 tokens, above any model's output limit; a 50 MB reply took
#: ~10 s of regular-expression scans (``perf/long_reply.py``).  ``stark-legacy`` (STARK's own
#: reader: the *first* block) reads the whole reply.
MAX_REPLY_CHARS = 1_000_000
#: Rubrics that read every part of a reply, not its end: the cardinal rubric scores a reply
#: naming one direction and rejects one naming several (seed 002 §3.1), which the last
#: :data:`MAX_REPLY_CHARS` characters cannot tell, so a longer reply is a format failure.
WHOLE_REPLY_RUBRICS = ("cardinal",)


def reply_tail(text: str) -> tuple[str, str | None]:
    """``(the part of text the readers scan, a note when it was cut)``: the whole ``text`` and
    ``None``, or its last :data:`MAX_REPLY_CHARS` characters and a note naming both lengths."""
    if len(text) <= MAX_REPLY_CHARS:
        return text, None
    return text[-MAX_REPLY_CHARS:], (f"a reply of {len(text):,} characters: only its last {MAX_REPLY_CHARS:,} "
                                     "were read (stsim.answers.MAX_REPLY_CHARS)")


def reading_spec(task: Any) -> dict[str, Any] | None:
    """The ``spec`` a task's replies are read with: its ``meta["answer_spec"]``, plus, for a
    task asked in another language (``inputs["language"]``, set by ``--language``,
    :mod:`stsim.generators.geoqa_languages`), ``"language"``: the question's language decides
    the number separators, unit words and list words a geoqa reply is read with
    (:mod:`stsim.answers_locale`).  ``task`` is a :class:`~stsim.records.Task` (any object
    with ``meta`` and ``inputs``); the task is not changed."""
    spec = task.meta.get("answer_spec")
    lang = (task.inputs or {}).get("language")
    if not lang or (spec or {}).get("language") == lang:
        return spec
    return {**(spec or {}), "language": lang}


def parse_answer(text: Any, *, task_id: str, step: int | None, answer_format: str,
                 rubric: str = "stark", spec: dict[str, Any] | None = None,
                 solver: str | None = None) -> Answer:
    """Read a model reply into an :class:`Answer`; never raises on arbitrary text.

    Returns status ``ok`` with a typed value, ``refusal`` when no answer is found and the text
    reads as a refusal, or ``format_failure`` with ``detail`` saying what was wrong.  A reply
    longer than :data:`MAX_REPLY_CHARS` is read from its end only (:func:`reply_tail`; the
    ``detail`` says so; ``text`` stays whole), except by ``stark-legacy``, which reads it all,
    and the rubrics of :data:`WHOLE_REPLY_RUBRICS`, for which it is a ``format_failure``.
    """
    if not isinstance(text, str):
        return Answer(task_id, step, "format_failure", text=None if text is None else str(text),
                      detail=f"answer text must be a string, got {type(text).__name__}", solver=solver)
    if rubric == "stark-legacy":
        return _parse_stark_legacy(text, task_id=task_id, step=step, answer_format=answer_format,
                                   spec=spec, solver=solver)
    scan, cut = reply_tail(text)
    if cut is None:
        return _parse_text(text, task_id=task_id, step=step, answer_format=answer_format, rubric=rubric,
                           spec=spec, solver=solver)
    if rubric in WHOLE_REPLY_RUBRICS:   # its end alone could name one direction where the whole names several
        return Answer(task_id, step, "format_failure", text=text, solver=solver,
                      detail=f"a reply of {len(text):,} characters: the {rubric!r} rubric reads the whole reply (every "
                             f"direction it names), and replies longer than {MAX_REPLY_CHARS:,} characters "
                             "are not read (stsim.answers.MAX_REPLY_CHARS)")
    got = _parse_text(scan, task_id=task_id, step=step, answer_format=answer_format, rubric=rubric,
                      spec=spec, solver=solver)
    return dataclasses.replace(got, text=text, detail=cut if got.detail is None else f"{got.detail}; {cut}")


def _parse_text(text: str, *, task_id: str, step: int | None, answer_format: str, rubric: str,
                spec: dict[str, Any] | None, solver: str | None) -> Answer:
    """:func:`parse_answer` of a reply of at most :data:`MAX_REPLY_CHARS` characters."""
    if rubric == "qstrbench-published":
        names = qstrbench_published_relations(text)
        if not names:
            return Answer(task_id, step, "format_failure", text=text, solver=solver,
                          detail="qstrbench-published: no relation on the answer line")
        if answer_format == "relation_set":
            return Answer(task_id, step, "ok", value=sorted(set(names)), text=text,
                          detail="qstrbench-published", solver=solver)
        if len(set(names)) != 1:
            return Answer(task_id, step, "format_failure", text=text, solver=solver,
                          detail=f"qstrbench-published: {len(set(names))} relations for a one-relation question")
        return Answer(task_id, step, "ok", value=names[0], text=text, detail="qstrbench-published",
                      solver=solver)
    body = RUBRICS[rubric](text)
    note = RUBRIC_NOTES[rubric](text) if rubric in RUBRIC_NOTES else None
    fmt = get_format(answer_format)
    if body is None:
        if looks_like_refusal(text):
            if getattr(fmt, "reads_refusals", False):  # geo_rejection: a refusal is its answer
                return Answer(task_id, step, "ok", value=fmt.parse(text, spec), text=text,
                              detail="explicit refusal", solver=solver)
            return Answer(task_id, step, "refusal", text=text, detail="explicit refusal", solver=solver)
        return Answer(task_id, step, "format_failure", text=text,
                      detail=note or f"no answer found by the {rubric!r} rubric", solver=solver)
    typed = structured_answer_problem(answer_format, text) if rubric == "geoqa" else None
    if typed is not None:   # {"answer": 123} for a cell id: its JSON type is no value of the format
        return Answer(task_id, step, "format_failure", text=text, detail=typed, solver=solver)
    if rubric == "geoqa" and (spec or {}).get("language") and structured_numbers(text):
        spec = {k: v for k, v in spec.items() if k != "language"}   # JSON 12.125 is no German 12125
    try:
        value = fmt.normalise(fmt.parse(body, spec), spec)
    except ParseError as exc:
        if looks_like_refusal(body):  # "Answer: I cannot tell, there is no such city"
            return Answer(task_id, step, "refusal", text=text, detail="explicit refusal", solver=solver)
        return Answer(task_id, step, "format_failure", text=text, detail=str(exc), solver=solver)
    return Answer(task_id, step, "ok", value=value, text=text, detail=note, solver=solver)


#: Named legacy rubrics: a paper's own reply reader, to reproduce published numbers from
#: published replies (``stsim score --rubric NAME``) -> the default rubric it stands in for.
LEGACY_RUBRICS: dict[str, str] = {"stark-legacy": "stark", "qstrbench-published": "qstrbench"}
#: STARK's substitute for an unreadable answer, per answer format (``distance.py``
#: ``handle_nan_values``: ``[5, 5]`` for localisation/tracking, ``[5]`` for the temporal tasks;
#: field tasks have none).
_STARK_GUESS = {"point": [5.0, 5.0], "time": [5.0], "vector": [5.0, 5.0]}
_LENGTHS = {"point": 2, "time": 1, "scalar": 1}


def _parse_stark_legacy(text: str, *, task_id: str, step: int | None, answer_format: str,
                        spec: dict[str, Any] | None, solver: str | None) -> Answer:
    """Rubric ``stark-legacy``: :func:`stark_legacy_array` on the reply, an unreadable reply
    replaced by STARK's guess (``[5, 5]``; ``5`` for a time; none for a field scalar), extra
    numbers cut to the format's length (the gold's), too few a ``format_failure`` (STARK's
    ``None``).  Signs are dropped, as STARK's reader drops them."""
    fmt = get_format(answer_format)
    if not fmt.numeric:
        return Answer(task_id, step, "format_failure", text=text, detail="the stark-legacy rubric reads "
                      f"numeric answers only, not {answer_format}", solver=solver)
    arr = stark_legacy_array(text)
    detail = "stark-legacy"
    if arr is None:
        guess = _STARK_GUESS.get(answer_format)  # a vector's [5, 5] is too short: a failure below
        if guess is None:
            return Answer(task_id, step, "format_failure", text=text,
                          detail="stark-legacy: unreadable (STARK records NaN)", solver=solver)
        arr, detail = guess, f"stark-legacy: unreadable, STARK's guess {guess}"
    flat = [float(v) for v in _flatten(arr)]
    n = _LENGTHS.get(answer_format, (spec or {}).get("length") or len(flat))
    if len(flat) < int(n):
        return Answer(task_id, step, "format_failure", text=text, solver=solver,
                      detail=f"stark-legacy: {len(flat)} number(s), {n} needed (STARK: None)")
    value = flat[0] if answer_format in ("time", "scalar") else flat[:int(n)]
    return Answer(task_id, step, "ok", value=value, text=text, detail=detail, solver=solver)


def _flatten(x: Any) -> list[float]:
    if isinstance(x, list):
        return [v for item in x for v in _flatten(item)]
    return [x]


_BRACKETED = re.compile(r"\[[^\[\]]*\]")


def lenient_read(text: Any, answer_format: str, spec: dict[str, Any] | None = None) -> Any:
    """What a lenient reader would make of a reply our strict reader rejects; ``None`` if
    nothing.  Used only to *count* what strictness costs (``stsim score`` prints the count);
    never to score.  A reply longer than :data:`MAX_REPLY_CHARS` is read from its end only.

    The block's body (or, without a block, the last bracketed group, else the whole reply) with
    every word dropped: "4.49 s", "x = 9.2, y = 1.6", "approximately [0.43, 1.46] units" are read
    when they hold exactly as many numbers as the format needs (point 2, time/scalar 1, vector
    its ``answer_spec`` length).  Numeric formats only.
    """
    if not isinstance(text, str) or answer_format not in ("point", "time", "scalar", "vector"):
        return None
    n = {"point": 2, "time": 1, "scalar": 1}.get(answer_format) or (spec or {}).get("length")
    text = reply_tail(text)[0]
    body = stark_rubric(text)
    if body is None:
        groups = _BRACKETED.findall(normalise_typography(text))
        body = groups[-1] if groups else text
    if ambiguous_dash(body) is not None:
        return None
    nums = [v for v in numbers_in(body) if math.isfinite(v)]
    if not nums or (n is not None and len(nums) != int(n)):
        return None
    return nums[0] if answer_format in ("time", "scalar") else nums


def _qstrbench_answer_line(text: str) -> str:
    marks = list(re.finditer(r"answer:", text, re.IGNORECASE))
    if marks:
        lines = [ln.strip() for ln in text[marks[-1].end():].splitlines()]
        line = next((ln for ln in lines if ln), "")
    else:
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        line = lines[-1] if lines else ""
    return re.sub(r"^[^a-zA-Z0-9<>=]+|[^a-zA-Z0-9<>=)]+$", "", line)


def _qstrbench_relation(item: str) -> str:
    item = item.strip()
    m = re.match(r"^\s*\S+\s*([<>]=?|!=|==|=)\s*\S+\s*$", item.rstrip(")];,"))
    if m:
        return "=" if m.group(1) == "==" else m.group(1)
    tokens = item.split()
    return tokens[1] if len(tokens) == 3 else item


def qstrbench_published_relations(text: Any) -> list[str]:
    """QSTRBench's released reply reader, rebuilt from its description (``bin/process.py``
    ``clean_answer`` + ``parse_answers``, RobBlackwell/QSTRBench; facts only).

    The first non-blank line after the last ``answer:`` (any case, with or without ``###``),
    else the reply's last non-blank line; leading characters other than letters, digits,
    ``<``, ``>``, ``=`` and trailing ones other than those and ``)`` removed; every ``(...)``
    group deleted; split at ``,`` and ``;``; runs of two or more ``*`` deleted; an item
    ``a OP b`` with OP one of ``< > <= >= != == =`` reads as OP (``==`` as ``=``), an item of
    three words as the middle one, anything else as itself (case kept: names are compared
    exactly).  Returns the names in order (repeats kept); never raises.

    >>> qstrbench_published_relations("TPPi(x, y), x NTPP y")
    ['TPPi', 'NTPP']
    """
    if not isinstance(text, str):
        return []
    line = re.sub(r"\([^)]*\)", "", _qstrbench_answer_line(text))
    items = [a.strip() for a in re.split(r"[;,]", line) if a.strip()]
    return [_qstrbench_relation(re.sub(r"\*{2,}", "", a)) for a in items]
