"""What a geoqa reply may write in the question's language (level 0: standard library, Babel).

A question asked with ``--language CODE`` (:mod:`stsim.geoqa.languages`) keeps its answer
instruction in English, but a model may still answer in the question's language: ``850 Meilen``,
``12.000`` (German grouping), ``Lettland und Russland``.  The readers of
:mod:`stsim.answers_geo` take the language from ``spec["language"]``
(:func:`stsim.answers.reading_spec`; English when absent) and use the tables below.

* :func:`unit_words` -- unit words of every supported language (CLDR unit names via Babel, and
  a small table of "times" words), mapped to the English word the formats know.
* :data:`LIST_WORDS` -- the words that join two names ("and", "or"), written between spaces.
* :func:`number_symbols` / :func:`read_number` -- decimal and grouping separators (CLDR, via
  Babel) and how one written number reads; a form two conventions read differently is refused.
* ``data/geoqa_conjoined_names.txt`` -- the entity names in which such a word stands between
  two words ("Bosnia and Herzegovina", "Treinta y Tres"): one name, not two.
"""
from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

#: Language (ISO 639-1, as :data:`stsim.geoqa.languages.LANGUAGES`) -> (the words for "and",
#: the words for "or"), each read as a word between spaces; English's apply in every language
#: (the answer instruction is English).  Chinese and Japanese write them without spaces: a name
#: in Han or Kana is refused anyway (no Latin letter: the gold names are English).  Greek "ή"
#: (or) is left out: without its accent it is the article "η".  Source: each language's
#: conjunctions (Wiktionary, entries "and" and "or"), spelled as :func:`spaced_words` leaves
#: them (lower case, accents dropped).
LIST_WORDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "en": (("and",), ("or",)),
    "de": (("und",), ("oder",)),
    "es": (("y",), ("o",)),
    "ru": (("и",), ("или",)),
    "el": (("και",), ()),
    "fa": (("و",), ("یا",)),
    "zh": ((), ()),
    "ja": ((), ()),
    "ka": (("და",), ("ან",)),
}

#: Letters written two ways in Persian text (Arabic kaf and yeh for the Persian ones).
_PERSIAN = str.maketrans({"\u0643": "\u06a9", "\u064a": "\u06cc"})


def casefold_words(text: str) -> str:
    """``text`` as lower-case words of any script, accents dropped, ``&`` spelled ``and``,
    every other non-word character a single space ("Kilómetros²" -> "kilometros 2",
    "Trinidad & Tobago" -> "trinidad and tobago", "χιλιόμετρα" -> "χιλιομετρα").  Unlike
    :func:`stsim.answers_geo.fold` it keeps Cyrillic, Greek, Persian, Georgian and CJK letters,
    so that a word in them is seen (and refused when unknown), not dropped."""
    t = unicodedata.normalize("NFKD", str(text).replace("&", " and "))
    t = "".join(c for c in t if not unicodedata.combining(c)).casefold().translate(_PERSIAN)
    return re.sub(r"[\W_]+", " ", t).strip()


def spaced_words(text: str) -> list[str]:
    """The whitespace-separated words of ``text``, lower-case, accents dropped, ``&`` a word
    ``and``, punctuation kept ("Trinidad & Tobago" -> ``["trinidad", "and", "tobago"]``,
    "A-k'o-su" -> ``["a-k'o-su"]``): a list word joins names only between spaces."""
    t = unicodedata.normalize("NFKD", str(text).replace("&", " and "))
    return "".join(c for c in t if not unicodedata.combining(c)).casefold().translate(_PERSIAN).split()


def list_words(lang: str | None) -> tuple[frozenset[str], frozenset[str]]:
    """(the "and" words, the "or" words) of English and of ``lang`` (:data:`LIST_WORDS`; an
    unknown or no language: English's)."""
    en, other = LIST_WORDS["en"], LIST_WORDS.get(lang or "en", ((), ()))
    return frozenset(en[0] + other[0]), frozenset(en[1] + other[1])


#: English's decimal and grouping separators (the answer instruction is English, so a reply may
#: follow them in every language).
ENGLISH_SYMBOLS = (".", ",")
#: Persian's own separators (CLDR ``arabext``: U+066B decimal, U+066C grouping), never anything
#: else: read in every language.
PERSIAN_SYMBOLS = ("\u066b", "\u066c")


@lru_cache(maxsize=None)
def number_symbols(lang: str | None) -> tuple[str, str]:
    """``(decimal separator, grouping separator)`` of ``lang`` with Latin digits, from CLDR via
    Babel (``babel.numbers.get_decimal_symbol`` / ``get_group_symbol``, numbering system
    ``latn``): en, zh, ja, fa ``(".", ",")``; de, es, el ``(",", ".")``; ru, ka ``(",", " ")``
    (CLDR's no-break space, read as a space: :func:`stsim.answers.normalise_typography` spells
    every space so).  English's for no language or one CLDR does not know."""
    if not lang or lang == "en":
        return ENGLISH_SYMBOLS
    from babel.core import UnknownLocaleError
    from babel.numbers import get_decimal_symbol, get_group_symbol
    try:
        dec = get_decimal_symbol(lang, numbering_system="latn")
        grp = get_group_symbol(lang, numbering_system="latn")
    except (UnknownLocaleError, ValueError):
        return ENGLISH_SYMBOLS
    return dec, (" " if grp.isspace() else grp)


@lru_cache(maxsize=None)
def language_name(lang: str | None) -> str:
    """English name of ``lang`` (CLDR via Babel; the code itself when unknown)."""
    if not lang or lang == "en":
        return "English"
    from babel import Locale
    try:
        return Locale.parse(lang).english_name
    except Exception:   # babel's UnknownLocaleError, ValueError: name the code
        return lang


@lru_cache(maxsize=None)
def number_pattern(lang: str | None) -> str:
    """Regular expression of one written number as :func:`read_number` takes it: digits (any
    script's) joined by the separators English, ``lang`` and Persian use, an optional sign and
    exponent.  A space joins digits only in a language that groups with one (ru, ka)."""
    seps = "".join(sorted({*ENGLISH_SYMBOLS, *number_symbols(lang), *PERSIAN_SYMBOLS}))
    cls = re.escape(seps).replace("\\ ", " ")
    decimals = re.escape("".join(sorted({ENGLISH_SYMBOLS[0], number_symbols(lang)[0], PERSIAN_SYMBOLS[0]})))
    return rf"[-+]?(?:\d+(?:[{cls}]\d+)*|[{decimals}]\d+)(?:[eE][-+]?\d+)?"


def _read_as(body: str, exp: str, dec: str, grp: str) -> float | None:
    """``body`` (digits and separators, no sign) with exponent ``exp`` (``""`` or ``e-3``) read
    with decimal separator ``dec`` and grouping separator ``grp``; ``None`` when it is not a
    number so written (a group of other than three digits, a group after the decimal separator,
    a first group starting with 0, another separator).  Too large a number reads as infinity."""
    d = re.escape(dec)
    g = re.escape(grp)
    if re.fullmatch(rf"\d+(?:{d}\d+)?|{d}\d+", body):
        whole, _, frac = body.partition(dec)
    elif re.fullmatch(rf"(?![0٠۰])\d{{1,3}}(?:{g}\d{{3}})+(?:{d}\d+)?", body):
        whole, _, frac = body.partition(dec)
        whole = whole.replace(grp, "")
    else:
        return None
    return float(f"{whole or '0'}.{frac or '0'}{exp}")


def read_number(token: str, lang: str | None) -> float:
    """The value of one written number ``token`` (a match of :func:`number_pattern`) in a reply
    to a question in ``lang``.  It is read with the separators of ``lang`` (:func:`number_symbols`),
    of English (the answer instruction's language) and Persian's own (U+066B, U+066C); a token
    that only one of them reads takes that value (German ``1.234,5``, ``1,5``, ``12.5``; English
    ``1,234.5``), one that two read alike too (``1500``, ``12.5`` in Russian).  A number too
    large for a float reads as infinity (the caller refuses it).

    Raises:
        ValueError: no convention reads it ("1,5" in English, "12,13,1"), or two read it
            differently: in German ``1,500`` is 1.5 and in English 1500, ``12.000`` 12000 and
            12 -- a genuinely ambiguous form, refused with both readings.
    """
    m = re.fullmatch(r"([-+]?)(.*?)((?:[eE][-+]?\d+)?)", token)
    sign, body, exp = m.group(1), m.group(2), m.group(3)
    readings: dict[float, str] = {}
    for name, (dec, grp) in ((language_name(lang), number_symbols(lang)), ("English", ENGLISH_SYMBOLS),
                             ("Persian", PERSIAN_SYMBOLS)):
        v = _read_as(body, exp, dec, grp)
        if v is not None:
            readings.setdefault(v, name)
    if not readings:
        dec, grp = number_symbols(lang)
        english = (dec, grp) == ENGLISH_SYMBOLS
        raise ValueError(f"{token[:30]!r} is not a number as written in "
                         f"{'English' if english else language_name(lang) + ' or English'} "
                         f"({dec!r} decimal separator, {grp!r} between groups of three digits"
                         + ("" if english else "; or '.' and ','") + ")")
    if len(readings) > 1:
        (a, an), (b, bn) = list(readings.items())[:2]
        raise ValueError(f"{token!r} is ambiguous in a reply to a {language_name(lang)} question: {a:g} as "
                         f"written in {an}, {b:g} in {bn}; write it without a grouping separator, or with other "
                         "than three decimals")
    v = next(iter(readings))
    return -v if sign == "-" else v


#: The languages the geoqa generator asks questions in (:data:`stsim.geoqa.languages.LANGUAGES`;
#: a test checks that the two agree).
SUPPORTED_LANGUAGES = ("en", "de", "es", "ru", "el", "fa", "zh", "ja", "ka")

#: CLDR unit (Babel's ``babel.units`` name) -> the English unit word the formats of
#: :mod:`stsim.answers_geo` read (``km``, ``m``, ``mi``, ``sq km``, ``percent``, ``deg``).
CLDR_UNITS = {"length-kilometer": "km", "length-meter": "m", "length-mile": "mi",
              "area-square-kilometer": "sq km", "concentr-percent": "percent", "angle-degree": "deg"}

#: "So many times" (a ratio: "3.5 times larger") per language; CLDR has no unit for it.  Source:
#: each language's multiplicative word (Wiktionary, "times"), as :func:`casefold_words` spells it.
TIMES_WORDS: dict[str, tuple[str, ...]] = {
    "de": ("mal", "fach", "mal so gross", "mal grosser"), "es": ("veces", "veces mayor", "veces mas grande"),
    "ru": ("раз", "раза", "в раза", "в раз"),
    "el": ("φορες", "φορες μεγαλυτερο", "φορες μεγαλυτερη"),
    "fa": ("برابر",), "zh": ("倍",), "ja": ("倍",), "ka": ("ჯერ",),
}


@lru_cache(maxsize=None)
def unit_words() -> dict[str, str]:
    """Unit word (as :func:`casefold_words` spells it: "Meilen" -> ``meilen``, "км²" ->
    ``км2``, "τ.χλμ." -> ``τ χλμ``) -> the English unit word of :data:`CLDR_UNITS` or ``times``,
    for every language of :data:`SUPPORTED_LANGUAGES`.  The words are CLDR's unit names in every
    length (long, short, narrow) and plural form (Babel's ``format_unit`` of 0, 1, 2, 5, 1.5,
    21, 22, 25 and 100, the number cut out), "per unit" forms excluded, plus
    :data:`TIMES_WORDS`.  A word of any supported language is read in a reply to a question in
    any language: no word names two units (tested).  English's own words are the formats'."""
    from babel.numbers import format_decimal
    from babel.units import format_unit
    out: dict[str, str] = {}
    for lang in SUPPORTED_LANGUAGES:
        if lang == "en":
            continue
        for unit, english in CLDR_UNITS.items():
            for v in (0, 1, 2, 5, 1.5, 21, 22, 25, 100):
                for length in ("long", "short", "narrow"):
                    word = casefold_words(format_unit(v, unit, length, locale=lang).replace(
                        format_decimal(v, locale=lang), " "))
                    _add(out, word, english)
        for word in TIMES_WORDS.get(lang, ()):
            _add(out, casefold_words(word), "times")
    return out


def _add(table: dict[str, str], word: str, unit: str) -> None:
    """``table[word] = unit``; raise ``ValueError`` if ``word`` already names another unit."""
    if word and table.setdefault(word, unit) != unit:
        raise ValueError(f"unit word {word!r} names both {table[word]!r} and {unit!r}")
